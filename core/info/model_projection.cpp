#include "core/info/model_projection.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/tuner/tuner.h"

namespace weft::info {

std::string modelProjection(Collective c, size_t bytes, int ranksPerHost, int maxRanks, const std::string& intra,
                            const std::string& inter) {
  Tuner tuner = Tuner::fromConfig();  // the defaults, or WEFT_TUNING_FILE's measurements
  std::string text =
      fmt::format("# {} of {} bytes per rank, {} ranks per host ({} inside hosts, {} between): predicted us\n",
                  collectiveName(c), bytes, ranksPerHost, intra, inter);
  std::vector<Algorithm> algorithms;
  for (int a = 0; a < static_cast<int>(Algorithm::Count); ++a) {
    if (supports(c, static_cast<Algorithm>(a))) algorithms.push_back(static_cast<Algorithm>(a));
  }
  text += fmt::format("{:>6}", "ranks");
  for (Algorithm a : algorithms) text += fmt::format(" {:>19}", algorithmName(a));
  text += fmt::format(" {:>19}\n", "tuner's choice");
  for (int p = 2; p <= maxRanks; p *= 2) {
    TuneShape shape;
    shape.nranks = p;
    shape.ranksPerHost = std::min(p, ranksPerHost);
    shape.numHosts = (p + ranksPerHost - 1) / ranksPerHost;
    shape.intraTransport = intra;
    if (shape.numHosts > 1) shape.interTransport = inter;
    tuner.setShape(shape);
    text += fmt::format("{:>6}", p);
    for (Algorithm a : algorithms) {
      const std::optional<double> us = tuner.model().predictUs(c, a, bytes, shape);
      text += us ? fmt::format(" {:>19.1f}", *us) : fmt::format(" {:>19}", "-");
    }
    text += fmt::format(" {:>19}\n", algorithmName(tuner.choose(c, bytes)));
  }
  return text;
}

}  // namespace weft::info
