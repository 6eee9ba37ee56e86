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

// The value from the environment, or the default; std::nullopt when neither exists.
std::optional<std::string> get(const char* name);
std::string getOr(const char* name, const std::string& fallback);
// Integer setting; throws weft::Error(weftInvalidArgument) naming the variable when it does not parse.
long getInt(const char* name, long fallback);

}  // namespace weft::config
