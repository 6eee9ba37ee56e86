// Every WEFT_* setting in one table: its default, what it means, and where its value came from. The
// README's table and weft-info are written from this list.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace weft::config {

struct Variable {
  const char* name;
  const char* defaultValue;  // nullptr: unset by default
  const char* description;
};

const std::vector<Variable>& variables();

// Where a value came from, so that weft-info can say why a setting has the value it has.
enum class Source { Default, Environment, TuningFile };
struct Value {
  std::string text;
  Source source;
};

// The value of a WEFT_* setting with its source: the environment wins over the tuning file, which wins over
// the table's default; std::nullopt when none of them has one. Thread-safe.
std::optional<Value> lookup(const char* name);
// Records a value read from WEFT_TUNING_FILE (called by the tuner when it loads the file); a later call for
// the same name replaces it. The environment still wins over it.
void setFromTuningFile(const char* name, std::string value);
// Forgets every tuning-file value (before a reload, and between tests).
void clearTuningFileValues();
// "default", "environment", "tuning file".
const char* sourceName(Source s);

// lookup()'s text: the value from the environment, the tuning file or the default; std::nullopt when none.
std::optional<std::string> get(const char* name);
std::string getOr(const char* name, const std::string& fallback);
// Integer setting; throws weft::Error(weftInvalidArgument) naming the variable when it does not parse.
long getInt(const char* name, long fallback);

}  // namespace weft::config
