// commperf's arithmetic and parsing, without MPI or Weft traffic: nccl-tests' bandwidth formulas, buffer
// counts, round statistics, the order of turns, summaries, option parsing, interface matching, and the
// bounds' sanity.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench.h"
#include "bounds.h"
#include "colls.h"
#include "info.h"
#include "netif.h"
#include "options.h"
#include "stats.h"
#include "summary.h"
#include "turn_order.h"

namespace commperf {
namespace {

const CollDesc& coll(const char* name) {
  const CollDesc* desc = findColl(name);
  EXPECT_NE(desc, nullptr) << name;
  return *desc;
}

// nccl-tests PERFORMANCE.md: busbw = algbw * factor.
TEST(BusBandwidth, FactorsMatchNcclTests) {
  for (int n = 1; n <= 16; ++n) {
    double ring = static_cast<double>(n - 1) / n;
    EXPECT_DOUBLE_EQ(coll("allreduce").busFactor(n), 2.0 * (n - 1) / n) << n;
    EXPECT_DOUBLE_EQ(coll("reducescatter").busFactor(n), ring) << n;
    EXPECT_DOUBLE_EQ(coll("allgather").busFactor(n), ring) << n;
    EXPECT_DOUBLE_EQ(coll("alltoall").busFactor(n), ring) << n;
    EXPECT_DOUBLE_EQ(coll("broadcast").busFactor(n), 1.0) << n;
    EXPECT_DOUBLE_EQ(coll("reduce").busFactor(n), 1.0) << n;
    EXPECT_DOUBLE_EQ(coll("sendrecv").busFactor(n), 1.0) << n;
  }
}

TEST(BusBandwidth, EveryCollectiveHasAFactor) {
  EXPECT_EQ(allColls().size(), 7u);
  for (const CollDesc& desc : allColls()) EXPECT_GT(desc.busFactor(4), 0.0) << desc.name;
}

// algbw's byte count: nccl-tests counts count*typesize*nranks for the gathered kinds (count per rank) and
// count*typesize for the others.
TEST(AlgBandwidth, BytesCountedAsNcclTests) {
  const int n = 4;
  EXPECT_DOUBLE_EQ(algBytes(coll("allreduce"), 1000, 4, n), 4000.0);
  EXPECT_DOUBLE_EQ(algBytes(coll("broadcast"), 1000, 4, n), 4000.0);
  EXPECT_DOUBLE_EQ(algBytes(coll("reduce"), 1000, 4, n), 4000.0);
  EXPECT_DOUBLE_EQ(algBytes(coll("sendrecv"), 1000, 4, n), 4000.0);
  EXPECT_DOUBLE_EQ(algBytes(coll("allgather"), 250, 4, n), 4000.0);
  EXPECT_DOUBLE_EQ(algBytes(coll("reducescatter"), 250, 4, n), 4000.0);
  EXPECT_DOUBLE_EQ(algBytes(coll("alltoall"), 250, 4, n), 4000.0);
}

TEST(Counts, PerRankBlocksAsNcclTests) {
  CollCounts ag = coll("allgather").counts(1000, 2, 4);
  EXPECT_EQ(ag.sendCount, 250u);
  EXPECT_EQ(ag.recvCount, 1000u);
  EXPECT_EQ(ag.paramCount, 250u);
  EXPECT_EQ(ag.sendInplaceOffset, 500u);
  CollCounts rs = coll("reducescatter").counts(1000, 3, 4);
  EXPECT_EQ(rs.sendCount, 1000u);
  EXPECT_EQ(rs.recvCount, 250u);
  EXPECT_EQ(rs.recvInplaceOffset, 750u);
  CollCounts a2a = coll("alltoall").counts(1001, 0, 4);  // rounded down to a multiple of the ranks
  EXPECT_EQ(a2a.sendCount, 1000u);
  EXPECT_EQ(a2a.paramCount, 250u);
}

TEST(Stats, MedianMinMax) {
  std::vector<double> odd{5, 1, 3};
  Spread s = summarize(odd);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  std::vector<double> even{4, 1, 3, 100};
  EXPECT_DOUBLE_EQ(summarize(even).median, 3.5);  // one slow round does not move it far
  EXPECT_DOUBLE_EQ(summarize(std::vector<double>{}).median, 0);
}

TEST(Stats, GeometricMeanCancelsInverseRatios) {
  std::vector<double> ratios{2.0, 0.5, 0.0, -1.0};  // non-positive values are skipped
  EXPECT_NEAR(geometricMean(ratios), 1.0, 1e-12);
  EXPECT_EQ(geometricMean(std::vector<double>{}), 0.0);
}

Measure measured(double us, double busBw, long long wrong) {
  Measure m;
  m.ran = true;
  m.timeUs = us;
  m.busBw = busBw;
  m.wrong = wrong;
  return m;
}

Measure skipped(const char* why) {
  Measure m;
  m.skipped = why;
  return m;
}

TEST(Summary, AveragesPeaksAndRatios) {
  CollSummary summary;
  summary.desc = &coll("allreduce");
  Row a{summary.desc, 8, 2, weftFloat32, weftSum, -1, measured(10, 1.0, 0), {}, {measured(20, 0.5, 0)}, {}};
  Row b{summary.desc, 16, 4, weftFloat32, weftSum, -1, measured(10, 3.0, 1), {}, {measured(5, 6.0, 0)}, {}};
  Row c{summary.desc, 32, 8, weftFloat32, weftSum, -1, measured(10, 2.0, 0), {}, {skipped("n/a")}, {}};
  EXPECT_DOUBLE_EQ(a.ratio(0), 2.0);
  EXPECT_DOUBLE_EQ(c.ratio(0), 0.0);
  EXPECT_DOUBLE_EQ(c.ratio(1), 0.0);  // no such peer
  for (const Row& row : {a, b, c}) summary.add(row);
  summary.finish();
  EXPECT_DOUBLE_EQ(summary.weft.avgBusBw, 2.0);
  EXPECT_DOUBLE_EQ(summary.weft.peakBusBw, 3.0);
  EXPECT_EQ(summary.weft.wrong, 1);
  EXPECT_EQ(summary.weft.measured, 3);
  ASSERT_EQ(summary.peers.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.peers[0].avgBusBw, 3.25);
  EXPECT_EQ(summary.peers[0].measured, 2);
  EXPECT_EQ(summary.peers[0].ratios, 2);
  EXPECT_NEAR(summary.peers[0].geomeanRatio, 1.0, 1e-12);  // 2.0 and 0.5
  EXPECT_EQ(summary.totalWrong(), 1);
}

// Two peers: each keeps its own averages, wrong counts and ratios; a shape one peer skips leaves the other's.
TEST(Summary, EachPeerOnItsOwn) {
  CollSummary summary;
  summary.desc = &coll("allreduce");
  summary.peers.resize(2);
  summary.peers[0].library = "mpi";
  summary.peers[1].library = "gloo";
  Row a{summary.desc,
        8,
        2,
        weftFloat32,
        weftSum,
        -1,
        measured(10, 1.0, 0),
        {},
        {measured(5, 2.0, 0), measured(40, 0.25, 2)},
        {}};
  Row b{summary.desc,
        16,
        4,
        weftFloat16,
        weftSum,
        -1,
        measured(10, 1.0, 0),
        {},
        {skipped("MPI has no float16/bfloat16 reduction"), measured(10, 1.0, 0)},
        {}};
  EXPECT_DOUBLE_EQ(a.ratio(0), 0.5);
  EXPECT_DOUBLE_EQ(a.ratio(1), 4.0);
  EXPECT_DOUBLE_EQ(b.ratio(0), 0.0);
  for (const Row& row : {a, b}) summary.add(row);
  summary.finish();
  ASSERT_EQ(summary.peers.size(), 2u);
  EXPECT_EQ(summary.peers[0].library, "mpi");
  EXPECT_EQ(summary.peers[0].measured, 1);
  EXPECT_EQ(summary.peers[0].ratios, 1);
  EXPECT_DOUBLE_EQ(summary.peers[0].geomeanRatio, 0.5);
  EXPECT_EQ(summary.peers[1].measured, 2);
  EXPECT_EQ(summary.peers[1].wrong, 2);
  EXPECT_NEAR(summary.peers[1].geomeanRatio, 2.0, 1e-12);  // 4.0 and 1.0
  EXPECT_DOUBLE_EQ(summary.peers[1].avgBusBw, 0.625);
  EXPECT_EQ(summary.totalWrong(), 2);
}

// --peer_in_place: a peer's in-place form counts in its summary like its out-of-place one, and its ratio is
// against Weft's in-place time; a peer without that form (ran = false) has none.
TEST(Summary, PeersInPlaceForms) {
  CollSummary summary;
  summary.desc = &coll("allgather");
  Measure none;
  Row a{summary.desc,
        8,
        2,
        weftFloat32,
        weftSum,
        -1,
        measured(10, 1.0, 0),
        measured(4, 2.0, 0),
        {measured(20, 0.5, 0), measured(30, 0.4, 0)},
        {measured(12, 1.0, 1), none}};
  EXPECT_DOUBLE_EQ(a.ratio(0), 2.0);
  EXPECT_DOUBLE_EQ(a.inPlaceRatio(0), 3.0);  // 12 / 4, not 12 / 10
  EXPECT_DOUBLE_EQ(a.inPlaceRatio(1), 0.0);
  EXPECT_DOUBLE_EQ(a.inPlaceRatio(2), 0.0);  // no such peer
  summary.peers.resize(2);
  summary.add(a);
  summary.finish();
  EXPECT_EQ(summary.weft.measured, 2);
  EXPECT_EQ(summary.peers[0].measured, 2);
  EXPECT_EQ(summary.peers[0].wrong, 1);
  EXPECT_DOUBLE_EQ(summary.peers[0].avgBusBw, 0.75);
  EXPECT_EQ(summary.peers[0].ratios, 1);  // the geometric mean stays out of place, as the table
  EXPECT_EQ(summary.peers[1].measured, 1);
  EXPECT_EQ(summary.totalWrong(), 1);
}

ParseResult parse(std::vector<std::string> args, Options& options) {
  args.insert(args.begin(), "commperf");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return parseOptions(static_cast<int>(args.size()), argv.data(), options);
}

TEST(Options, PeerRoundsAndFiles) {
  Options o;
  ASSERT_EQ(parse({"--peer", "gloo", "--rounds", "4", "-n", "10", "--json", "a.json", "--csv", "a.csv",
                   "--gloo_allreduce", "bcube", "--bounds", "--bounds_bytes", "1M", "--peer_in_place"},
                  o)
                .status,
            ParseStatus::kRun);
  EXPECT_EQ(o.peers, std::vector<PeerKind>{PeerKind::kGloo});
  EXPECT_EQ(o.rounds, 4);
  EXPECT_EQ(o.itersPerRound(), 3);  // 10 over 4 rounds, rounded up
  EXPECT_EQ(o.jsonPath, "a.json");
  EXPECT_EQ(o.csvPath, "a.csv");
  EXPECT_EQ(o.glooAllreduce, "bcube");
  EXPECT_TRUE(o.bounds);
  EXPECT_EQ(o.boundsBytes, 1u << 20);
  EXPECT_TRUE(o.peerInPlace);
  Options none;
  ASSERT_EQ(parse({"--coll", "none", "--bounds"}, none).status, ParseStatus::kRun);
  EXPECT_TRUE(none.colls.empty());
  EXPECT_FALSE(none.peerInPlace);
}

TEST(Options, GapBetweenCalls) {
  Options o;
  ASSERT_EQ(parse({"--gap_us", "20", "--touch_input"}, o).status, ParseStatus::kRun);
  EXPECT_EQ(o.gapUs, 20);
  EXPECT_TRUE(o.touchInput);
  Options defaults;
  ASSERT_EQ(parse({}, defaults).status, ParseStatus::kRun);
  EXPECT_EQ(defaults.gapUs, 0);
}

TEST(Options, MemoryKinds) {
  for (const auto& [arg, source] :
       {std::pair{"heap", BufferSource::Heap}, std::pair{"malloc", BufferSource::Malloc},
        std::pair{"weft", BufferSource::Weft}}) {
    Options o;
    ASSERT_EQ(parse({"--memory", arg}, o).status, ParseStatus::kRun) << arg;
    EXPECT_EQ(o.memory, source) << arg;
  }
  Options defaults;
  ASSERT_EQ(parse({}, defaults).status, ParseStatus::kRun);
  EXPECT_EQ(defaults.memory, BufferSource::Heap);
}

TEST(Options, PeerList) {
  using enum PeerKind;
  struct Case {
    const char* arg;
    std::vector<PeerKind> peers;
  };
  const Case cases[] = {
      {"none", {}}, {"mpi", {kMpi}}, {"gloo", {kGloo}}, {"mpi,gloo", {kMpi, kGloo}}, {"gloo,mpi", {kGloo, kMpi}},
  };
  for (const Case& c : cases) {
    Options o;
    ParseResult r = parse({"--peer", c.arg}, o);
    ASSERT_EQ(r.status, ParseStatus::kRun) << c.arg << ": " << r.error;
    EXPECT_EQ(o.peers, c.peers) << c.arg;  // in the order given: the table's column order
  }
  Options defaults;
  ASSERT_EQ(parse({}, defaults).status, ParseStatus::kRun);
  EXPECT_TRUE(defaults.peers.empty());
  Options last;  // a later --peer replaces an earlier one, as every other option does
  ASSERT_EQ(parse({"--peer", "mpi,gloo", "--peer", "gloo"}, last).status, ParseStatus::kRun);
  EXPECT_EQ(last.peers, std::vector<PeerKind>{kGloo});
  EXPECT_STREQ(peerName(kMpi), "mpi");
  EXPECT_STREQ(peerName(kGloo), "gloo");
}

TEST(Options, BadPeerListsSayWhatIsWrong) {
  struct Case {
    const char* arg;
    const char* message;
  };
  const Case cases[] = {
      {"nccl", "unknown --peer 'nccl'"},
      {"mpi,nccl", "unknown library 'nccl' in --peer 'mpi,nccl'"},
      {"MPI", "unknown --peer 'MPI'"},
      {"mpi,mpi", "--peer 'mpi,mpi' names mpi twice"},
      {"gloo,mpi,gloo", "names gloo twice"},
      {"none,mpi", "none means Weft alone and cannot be listed with other libraries"},
      {"mpi,none", "none means Weft alone"},
      {"none,none", "none means Weft alone"},
      {"", "empty library name in --peer ''"},
      {"mpi,", "empty library name in --peer 'mpi,'"},
      {",gloo", "empty library name"},
      {"mpi,,gloo", "empty library name"},
      {"mpi gloo", "unknown --peer 'mpi gloo'"},
  };
  for (const Case& c : cases) {
    Options o;
    ParseResult r = parse({"--peer", c.arg}, o);
    EXPECT_EQ(r.status, ParseStatus::kError) << c.arg;
    EXPECT_NE(r.error.find(c.message), std::string::npos) << c.arg << ": " << r.error;
    EXPECT_NE(r.error.find("mpi"), std::string::npos) << "the message names the choices: " << r.error;
    EXPECT_TRUE(o.peers.empty()) << c.arg;  // nothing half-parsed is kept
  }
}

TEST(Options, FusionCases) {
  Options o;
  ASSERT_EQ(parse({"--fusion", "1000:4K,100:64K,3:10"}, o).status, ParseStatus::kRun);
  std::vector<FusionCase> want{{1000, 4096}, {100, 65536}, {3, 10}};
  EXPECT_EQ(o.fusion, want);
  EXPECT_TRUE(o.colls.empty());  // --fusion alone replaces the size sweep
  Options both;
  ASSERT_EQ(parse({"--coll", "allgather", "--fusion", "8:1M"}, both).status, ParseStatus::kRun);
  EXPECT_EQ(both.colls, std::vector<std::string>{"allgather"});
  EXPECT_EQ(both.fusion, (std::vector<FusionCase>{{8, 1u << 20}}));
  Options fusionOnly;  // --coll none with --fusion runs the cases alone
  EXPECT_EQ(parse({"--coll", "none", "--fusion", "2:8"}, fusionOnly).status, ParseStatus::kRun);
  Options defaults;
  ASSERT_EQ(parse({}, defaults).status, ParseStatus::kRun);
  EXPECT_TRUE(defaults.fusion.empty());
  EXPECT_EQ(defaults.colls, std::vector<std::string>{"allreduce"});
  for (const char* bad : {"", "1000", "1000:", ":4K", "0:4K", "-1:4K", "10:4", "10:7B", "10:4K,", ",10:4K",
                          "10:4X", "x:4K", "2000000:8", "10:4K:1", "4:18446744073709551615"}) {
    Options b;
    ParseResult r = parse({"--fusion", bad}, b);
    EXPECT_EQ(r.status, ParseStatus::kError) << bad;
    EXPECT_NE(r.error.find("invalid --fusion"), std::string::npos) << r.error;
  }
}

TEST(Options, FusionCollectives) {
  Options defaults;
  ASSERT_EQ(parse({"--fusion", "2:8"}, defaults).status, ParseStatus::kRun);
  EXPECT_EQ(defaults.fusionColls, std::vector<std::string>{"allreduce"});
  Options o;
  ASSERT_EQ(parse({"--fusion", "2:8", "--fusion_coll", "reducescatter,allgather"}, o).status, ParseStatus::kRun);
  EXPECT_EQ(o.fusionColls, (std::vector<std::string>{"reducescatter", "allgather"}));  // in the order given
  for (const char* bad : {"", "broadcast", "allreduce,", ",allgather", "allgather,allgather", "all"}) {
    Options b;
    ParseResult r = parse({"--fusion", "2:8", "--fusion_coll", bad}, b);
    EXPECT_EQ(r.status, ParseStatus::kError) << bad;
    EXPECT_NE(r.error.find("--fusion_coll"), std::string::npos) << r.error;
    EXPECT_EQ(b.fusionColls, std::vector<std::string>{"allreduce"}) << bad;  // left as it was
  }
}

TEST(Options, PlanCases) {
  Options o;
  ASSERT_EQ(parse({"--plan", "100,1000:4K,3:10"}, o).status, ParseStatus::kRun);
  std::vector<PlanCase> want{{100, 1024}, {1000, 4096}, {3, 10}};  // BYTES defaults to 1K
  EXPECT_EQ(o.plan, want);
  EXPECT_TRUE(o.colls.empty());  // --plan alone replaces the size sweep
  EXPECT_TRUE(o.fusion.empty());
  Options both;
  ASSERT_EQ(parse({"--coll", "allgather", "--plan", "8", "--fusion", "2:8"}, both).status, ParseStatus::kRun);
  EXPECT_EQ(both.colls, std::vector<std::string>{"allgather"});
  EXPECT_EQ(both.plan, (std::vector<PlanCase>{{8, 1024}}));
  EXPECT_EQ(both.fusion, (std::vector<FusionCase>{{2, 8}}));
  Options planOnly;  // --coll none with --plan runs the cases alone
  EXPECT_EQ(parse({"--coll", "none", "--plan", "2"}, planOnly).status, ParseStatus::kRun);
  Options defaults;
  ASSERT_EQ(parse({}, defaults).status, ParseStatus::kRun);
  EXPECT_TRUE(defaults.plan.empty());
  for (const char* bad : {"", "0", "-1", "1000:", ":4K", "0:4K", "10:4", "10:7B", "10,", ",10", "10:4X", "x",
                          "2000000", "10:4K:1", "4:18446744073709551615"}) {
    Options b;
    ParseResult r = parse({"--plan", bad}, b);
    EXPECT_EQ(r.status, ParseStatus::kError) << bad;
    EXPECT_NE(r.error.find("invalid --plan"), std::string::npos) << r.error;
    EXPECT_TRUE(b.plan.empty()) << bad;
  }
}

TEST(Options, BadFlagsSayWhatIsWrong) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"--peer", "nccl"}, "unknown --peer 'nccl'"},
      {{"--rounds", "0"}, "invalid --rounds '0'"},
      {{"--gloo_allreduce", "tree"}, "unknown --gloo_allreduce 'tree'"},
      {{"--bounds=1"}, "takes no argument"},
      {{"--bounds_bytes", "12"}, "invalid --bounds_bytes"},
      {{"--coll", "none"}, "--coll none runs nothing without --bounds"},
      {{"--csv"}, "needs an argument"},
      {{"--nope"}, "unknown option '--nope'"},
      {{"-x"}, "unknown option '-x'"},
      {{"-b", "1M", "-e", "1K"}, "--minbytes is larger than --maxbytes"},
      {{"--memory", "mmap"}, "invalid --memory 'mmap' (heap, malloc or weft)"},
      {{"--gap_us", "-1"}, "invalid --gap_us '-1' (0 to 1000000)"},
      {{"--gap_us", "20us"}, "invalid --gap_us '20us'"},
  };
  for (const Case& c : cases) {
    Options o;
    ParseResult r = parse(c.args, o);
    EXPECT_EQ(r.status, ParseStatus::kError) << c.args[0];
    EXPECT_NE(r.error.find(c.message), std::string::npos) << r.error;
  }
}

TEST(NetInterface, WeftSocketIfnameRules) {
  EXPECT_TRUE(interfaceMatches("eth", "eth0"));
  EXPECT_FALSE(interfaceMatches("eth", "lo"));
  EXPECT_TRUE(interfaceMatches("ib,lo", "lo"));
  EXPECT_FALSE(interfaceMatches("^lo,docker", "docker0"));
  EXPECT_TRUE(interfaceMatches("^lo,docker", "eth0"));
  EXPECT_TRUE(interfaceMatches("=eth0", "eth0"));
  EXPECT_FALSE(interfaceMatches("=eth0", "eth01"));
  EXPECT_FALSE(interfaceMatches("^=eth0", "eth0"));
  NetInterface loopback;
  std::string error;
  ASSERT_TRUE(pickInterface("", loopback, error)) << error;
  EXPECT_FALSE(loopback.address.empty());
  NetInterface none;
  EXPECT_FALSE(pickInterface("=no-such-interface", none, error));
  EXPECT_NE(error.find("no-such-interface"), std::string::npos);
}

// Counted here by brute force over one cycle, not from the construction's algebra.
TEST(TurnOrder, EverySideFirstAndAfterEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 9; ++n) {
    const size_t cycle = turnOrderCycle(n);
    EXPECT_EQ(cycle % n, 0u) << n;
    std::vector<size_t> first(n, 0);
    std::vector<std::vector<size_t>> after(n, std::vector<size_t>(n, 0));  // after[a][b]: b right after a
    for (size_t round = 0; round < cycle; ++round) {
      const std::vector<size_t> order = turnOrder(n, round);
      ASSERT_EQ(order.size(), n);
      std::vector<bool> seen(n, false);
      for (size_t side : order) {
        ASSERT_LT(side, n);
        EXPECT_FALSE(seen[side]) << "side " << side << " twice in round " << round << " of " << n;
        seen[side] = true;
      }
      ++first[order[0]];
      for (size_t t = 1; t < n; ++t) ++after[order[t - 1]][order[t]];
      EXPECT_EQ(order, turnOrder(n, round + cycle)) << "the cycle repeats";
    }
    for (size_t a = 0; a < n; ++a) {
      EXPECT_EQ(first[a], cycle / n) << "side " << a << " of " << n;
      for (size_t b = 0; b < n; ++b) {
        // cycle * (n - 1) neighbours spread evenly over the n * (n - 1) ordered pairs.
        if (a != b) {
          EXPECT_EQ(after[a][b], cycle / n) << b << " after " << a << " of " << n;
        }
      }
    }
  }
  EXPECT_TRUE(turnOrder(0, 3).empty());
}

TEST(Info, WeftAlgoPerCollective) {
  EXPECT_EQ(weftAlgorithmFor("default", "allreduce"), "default");
  EXPECT_EQ(weftAlgorithmFor("allreduce:ring;broadcast:binomial_tree", "broadcast"), "binomial_tree");
  EXPECT_EQ(weftAlgorithmFor("allreduce:ring", "allgather"), "default");
}

TEST(Bounds, SmallBuffersGivePositiveFigures) {
  Bounds b = measureBounds(1 << 20);
  EXPECT_EQ(b.bytes, 1u << 20);
  EXPECT_GE(b.threads, 1);
  EXPECT_GT(b.memcpy1, 0);
  EXPECT_GT(b.memcpyAll, 0);
  EXPECT_GT(b.add1, 0);
  EXPECT_GT(b.addAll, 0);
  EXPECT_GT(b.pingPongUs, 0);
  EXPECT_TRUE(std::isfinite(b.pingPongUs));
}

}  // namespace
}  // namespace commperf
