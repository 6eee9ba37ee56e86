#include "report_format.h"

namespace commperf {

std::string timeString(double us, bool pad) {
  char text[32];
  const char* format = us < 100.0     ? (pad ? "%7.2f" : "%.2f")
                       : us < 10000.0 ? (pad ? "%7.1f" : "%.1f")
                                      : (pad ? "%7.0f" : "%.0f");
  std::snprintf(text, sizeof text, format, us);
  return text;
}

std::string wrongString(const Measure& m) { return !m.ran ? "-" : m.wrong < 0 ? "N/A" : std::to_string(m.wrong); }

std::string ratioString(double ratio, const char* format) {
  if (!(ratio > 0)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, format, ratio);
  return text;
}

std::string centeredIn(const std::string& title, size_t blockWidth) {
  size_t left = title.size() + 2 < blockWidth ? (blockWidth - 2 - title.size()) / 2 : 0;
  std::string text = "  " + std::string(left, ' ') + title;
  return text + std::string(text.size() < blockWidth ? blockWidth - text.size() : 0, ' ');
}

void printFormMeasure(std::FILE* out, const Measure& m, const LaunchStats* stats) {
  if (!m.ran) {
    std::fprintf(out, "  %8s  %17s", "n/a", "");
  } else {
    std::string spread = timeString(m.minUs, false) + "-" + timeString(m.maxUs, false);
    std::fprintf(out, "  %8s  %17s", timeString(m.timeUs).c_str(), spread.c_str());
  }
  if (!stats) return;
  std::string launches = "-";
  if (stats->measured) {
    launches = std::to_string(stats->launches);
    // Ranks that disagree show their range: that is a bug worth seeing.
    if (!stats->agree()) launches = std::to_string(stats->launchesMin) + "-" + launches;
  }
  std::fprintf(out, "  %6s", launches.c_str());
}

void printCaseColumns(std::FILE* out, int forms, size_t peers, bool units) {
  if (units) {
    std::fprintf(out, "#%7s  %10s  %8s  %6s", "", "(B)", "", "");
  } else {
    std::fprintf(out, "#%7s  %10s  %8s  %6s", "N", "bytes", "type", "redop");
  }
  for (int form = 0; form < forms; ++form) {
    std::fprintf(out, "  %8s  %17s  %6s", units ? "(us)" : "time", units ? "(us, rounds)" : "min-max",
                 units ? "" : "launch");
  }
  for (size_t p = 0; p < peers; ++p)
    std::fprintf(out, "  %8s  %17s", units ? "(us)" : "time", units ? "(us, rounds)" : "min-max");
}

std::string wrongStrings(std::initializer_list<const Measure*> forms, const std::vector<Measure>& peers) {
  std::string text;
  auto add = [&](const Measure& m) {
    if (!text.empty()) text += '/';
    text += wrongString(m);
  };
  for (const Measure* m : forms) add(*m);
  for (const Measure& m : peers) add(m);
  return text;
}

}  // namespace commperf
