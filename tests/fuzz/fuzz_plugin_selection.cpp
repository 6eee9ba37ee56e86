// WEFT_PLUGINS (core/plugins/registry.cpp parsePluginSelection): accepted names are non-empty and made of
// [a-z0-9_-] (they become file names: libweft-plugin-<name>.so), a selection either requests or excludes,
// and joining the names back gives a text that parses to the same selection.
#include <string>
#include <vector>

#include "core/plugins/registry.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::string join(const std::vector<std::string>& names, const char* prefix) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + std::string(prefix) + name;
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::PluginSelection selection;
  if (!weft::fuzz::accepts(weftInvalidArgument,
                           [&] { selection = weft::parsePluginSelection(weft::fuzz::text(data, size)); }))
    return 0;
  FUZZ_CHECK(selection.requested.empty() || selection.excluded.empty());
  for (const auto* list : {&selection.requested, &selection.excluded}) {
    for (const std::string& name : *list) {
      FUZZ_CHECK(!name.empty());
      FUZZ_CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos);
    }
  }
  const std::string printed =
      selection.excluded.empty() ? join(selection.requested, "") : join(selection.excluded, "^");
  weft::PluginSelection again;
  FUZZ_CHECK(weft::fuzz::accepts(weftSuccess, [&] { again = weft::parsePluginSelection(printed); }));
  FUZZ_CHECK(again.requested == selection.requested && again.excluded == selection.excluded);
  return 0;
}
