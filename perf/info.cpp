#include "info.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "bench.h"
#include "peer_internal.h"
#include "weft/weft.h"

namespace commperf {

namespace {

std::vector<std::string> gatherRankLines(int rank, int nranks) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  char line[MPI_MAX_PROCESSOR_NAME + 64] = {};
  std::snprintf(line, sizeof line, "Rank %2d Pid %6d on %10s", rank, static_cast<int>(getpid()), host);
  std::vector<char> all(rank == 0 ? sizeof line * nranks : 0);
  MPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> lines;
  if (rank == 0)
    for (int r = 0; r < nranks; ++r) lines.emplace_back(all.data() + r * sizeof line);
  return lines;
}

}  // namespace

std::string envOrDefault(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : "default";
}

std::string weftAlgorithmFor(const std::string& weftAlgo, const std::string& coll) {
  if (weftAlgo == "default") return "default";
  for (size_t pos = 0; pos <= weftAlgo.size();) {
    size_t end = weftAlgo.find(';', pos);
    if (end == std::string::npos) end = weftAlgo.size();
    std::string entry = weftAlgo.substr(pos, end - pos);
    size_t colon = entry.find(':');
    if (colon != std::string::npos && entry.substr(0, colon) == coll) return entry.substr(colon + 1);
    pos = end + 1;
  }
  return "default";
}

RunInfo gatherRunInfo(int rank, int nranks, const Peers& peers) {
  RunInfo info;
  info.nranks = nranks;
  weftCheck(weftGetVersion(&info.version), "weftGetVersion", rank);
  info.weftVersion = std::to_string(info.version / 10000) + "." + std::to_string(info.version / 100 % 100) + "." +
                     std::to_string(info.version % 100);
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  info.mpiVersion = firstLine(text);  // length counts the terminating NUL
  info.weftPlugins = envOrDefault("WEFT_PLUGINS");
  info.weftAlgo = envOrDefault("WEFT_ALGO");
  for (const auto& peer : peers) info.peers.push_back({peer->library(), peer->version(), peer->transport()});
  info.rankLines = gatherRankLines(rank, nranks);
  return info;
}

}  // namespace commperf
