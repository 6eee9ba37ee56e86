// WEFT_ALGO parsing and the default choices.
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/tuner/tuner.h"

namespace weft {
namespace {

TEST(Tuner, ForcesWhatWeftAlgoSays) {
  Tuner t = Tuner::parse("allreduce:ring;broadcast:binomial_tree;allgather:bruck");
  EXPECT_EQ(t.choose(Collective::AllReduce, 8, 4), Algorithm::Ring);
  EXPECT_EQ(t.choose(Collective::AllReduce, 1 << 30, 4), Algorithm::Ring);
  EXPECT_EQ(t.choose(Collective::AllGather, 1 << 30, 4), Algorithm::Bruck);
  EXPECT_EQ(t.choose(Collective::Broadcast, 8, 4), Algorithm::BinomialTree);
}

TEST(Tuner, DefaultsBySize) {
  Tuner t = Tuner::parse("");
  EXPECT_EQ(t.choose(Collective::AllReduce, 8, 4), Algorithm::RecursiveDoubling);
  EXPECT_EQ(t.choose(Collective::AllReduce, 64 << 20, 4), Algorithm::Ring);
  EXPECT_EQ(t.choose(Collective::AllToAll, 8, 4), Algorithm::Pairwise);
}

TEST(Tuner, RejectsUnknownNamesWithAClearMessage) {
  try {
    Tuner::parse("allreduce:bruck");
    FAIL() << "accepted an algorithm of another collective";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("ring, recursive_doubling, rabenseifner"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tuner::parse("allreduce:fastest"), Error);
  EXPECT_THROW(Tuner::parse("allreduc:ring"), Error);
  EXPECT_THROW(Tuner::parse("allreduce"), Error);
  EXPECT_THROW(Tuner::parse("allreduce:ring:0-64K"), Error);
}

TEST(Tuner, EverySupportedPairHasAName) {
  for (int c = 0; c < static_cast<int>(Collective::Count); ++c) {
    for (int a = 0; a < static_cast<int>(Algorithm::Count); ++a) {
      if (!supports(Collective(c), Algorithm(a))) continue;
      std::string text = std::string(collectiveName(Collective(c))) + ":" + algorithmName(Algorithm(a));
      EXPECT_EQ(Tuner::parse(text).choose(Collective(c), 1, 3), Algorithm(a)) << text;
    }
  }
}

}  // namespace
}  // namespace weft
