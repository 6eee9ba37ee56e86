#include "core/tuner/tuner.h"

#include <bit>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "core/common/config.h"
#include "core/common/log.h"
#include "core/tuner/tuning_file.h"

namespace weft {

// Sizes whose choice a communicator remembers before it starts over (sizes are usually few).
constexpr size_t kMaxRememberedChoices = 4096;

// Choices made, so that a size seen before costs a lookup rather than pricing every algorithm, and each
// (collective, size class) is logged once.
struct Tuner::ChoiceLog {
  std::mutex mutex;
  std::set<std::pair<Collective, int>> logged;  // (collective, size class)
  std::map<std::pair<Collective, size_t>, Algorithm> chosen;
};

namespace {

// The cost model of a tuning file, loaded once per process and path (its settings applied then).
std::shared_ptr<const CostModel> modelFromFile(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CostModel>> loaded;
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  const TuningFile file = readTuningFile(path);
  auto model = std::make_shared<CostModel>();
  for (const TuningEntry& e : file.entries)
    model->addMeasurement(e.transport, e.collective, e.algorithm, e.nranks, e.bytes, e.timesUs);
  for (const auto& [name, value] : file.settings) config::setFromTuningFile(name.c_str(), value);
  log::info("tuning file {}: {} cost entries, {} settings", path, file.entries.size(), file.settings.size());
  return loaded[path] = model;
}

int sizeClass(size_t bytes) { return bytes == 0 ? 0 : std::bit_width(bytes); }

}  // namespace

Tuner::Tuner() : model_(std::make_shared<CostModel>()), log_(std::make_shared<ChoiceLog>()) {}

Tuner Tuner::parse(const std::string& algo) {
  Tuner tuner;
  tuner.rules_ = parseAlgoRules(algo);
  return tuner;
}

Tuner Tuner::fromConfig() {
  std::shared_ptr<const CostModel> measured;
  if (auto path = config::get("WEFT_TUNING_FILE"); path && !path->empty()) measured = modelFromFile(*path);
  Tuner tuner = parse(config::getOr("WEFT_ALGO", ""));  // after the file: it may set WEFT_ALGO
  if (measured) tuner.model_ = std::move(measured);
  return tuner;
}

void Tuner::setShape(TuneShape shape) {
  shape_ = std::move(shape);
  log_ = std::make_shared<ChoiceLog>();
}

Algorithm Tuner::choose(Collective c, size_t bytes) const {
  if (auto forced = forcedAlgorithm(rules_, c, bytes)) return *forced;
  std::lock_guard lock(log_->mutex);
  if (auto it = log_->chosen.find({c, bytes}); it != log_->chosen.end()) return it->second;
  Algorithm best = Algorithm::Count;
  double bestUs = std::numeric_limits<double>::infinity();
  for (int i = 0; i < static_cast<int>(Algorithm::Count); ++i) {
    const auto a = static_cast<Algorithm>(i);
    const std::optional<double> us = model_->predictUs(c, a, bytes, shape_);
    if (us && *us < bestUs) {
      best = a;
      bestUs = *us;
    }
  }
  if (best == Algorithm::Count) best = c == Collective::Barrier ? Algorithm::Dissemination : Algorithm::Ring;
  if (log_->chosen.size() >= kMaxRememberedChoices) log_->chosen.clear();
  log_->chosen[{c, bytes}] = best;
  if (log_->logged.insert({c, sizeClass(bytes)}).second) {
    log::info("tuner: {} of {} bytes on {} ranks ({} hosts): {} (model {:.1f} us)", collectiveName(c), bytes,
              shape_.nranks, shape_.numHosts, algorithmName(best), bestUs);
  }
  return best;
}

}  // namespace weft
