//===- FoldedLaunchesTest.cpp - CudaLaunch's recorded partner launches ----===//

#include "runtime/cuda/FoldedLaunches.h"

#include <gtest/gtest.h>

namespace infer::cuda {
namespace {
namespace art = artifact;

/// A program of launches of `kinds` with empty cuda records.
struct Program {
  art::ExecProgram program;
  google::protobuf::RepeatedPtrField<art::CudaLaunch> launches;
  explicit Program(std::initializer_list<art::Launch::Kind> kinds) {
    for (art::Launch::Kind kind : kinds) {
      program.add_launches()->set_kind(kind);
      launches.Add();
    }
  }
  StatusOr<FoldedLaunches> maps() const { return foldedLaunches(program, launches, "m.infer"); }
};

// A layer as the step program has it: norm, qkv GEMM, rotary, attention,
// o GEMM, norm, gate/up GEMM, gated activation, down GEMM.
Program layer() {
  Program p({art::Launch::RMS_NORM, art::Launch::GEMM, art::Launch::ROTARY,
             art::Launch::KV_ATTENTION, art::Launch::GEMM, art::Launch::RMS_NORM, art::Launch::GEMM,
             art::Launch::GATED_ACTIVATION, art::Launch::GEMM});
  p.launches.Mutable(1)->set_prologue_launch(0);
  p.launches.Mutable(3)->set_prologue_launch(2);
  p.launches.Mutable(3)->set_qkv_gemm_launch(1);
  p.launches.Mutable(6)->set_prologue_launch(5);
  p.launches.Mutable(6)->set_epilogue_launch(7);
  p.launches.Mutable(8)->set_prologue_launch(7);
  return p;
}

TEST(FoldedLaunchesTest, MapsBothWays) {
  StatusOr<FoldedLaunches> maps = layer().maps();
  ASSERT_TRUE(maps.ok()) << maps.status().message();
  EXPECT_EQ(maps->prologue, (std::vector<int>{-1, 0, -1, 2, -1, -1, 5, -1, 7}));
  EXPECT_EQ(maps->prologueOf, (std::vector<int>{1, -1, 3, -1, -1, 6, -1, 8, -1}));
  EXPECT_EQ(maps->epilogue[6], 7);
  EXPECT_EQ(maps->epilogueOf[7], 6);
  EXPECT_EQ(maps->qkvGemm[3], 1);
  EXPECT_EQ(maps->qkvAttentionOf[1], 3);
  EXPECT_EQ(maps->qkvAttentionOf[4], -1);
}

TEST(FoldedLaunchesTest, NoRecordsNoPartners) {
  Program p({art::Launch::RMS_NORM, art::Launch::GEMM});
  StatusOr<FoldedLaunches> maps = p.maps();
  ASSERT_TRUE(maps.ok());
  EXPECT_EQ(maps->prologue, (std::vector<int>{-1, -1}));
  EXPECT_EQ(maps->prologueOf, (std::vector<int>{-1, -1}));
}

/// The error of `p`'s maps, which must fail.
std::string failure(const Program &p) {
  StatusOr<FoldedLaunches> maps = p.maps();
  EXPECT_FALSE(maps.ok());
  return maps.ok() ? std::string() : std::string(maps.status().message());
}

TEST(FoldedLaunchesTest, RefusesIndicesOutOfRangeOrOrder) {
  for (int target : {-1, 1, 2, 9, 1 << 30}) {
    Program p = layer();
    p.launches.Mutable(1)->set_prologue_launch(target);
    EXPECT_NE(failure(p).find("m.infer: launch 1's prologue_launch " + std::to_string(target)),
              std::string::npos)
        << target;
  }
  Program p = layer();
  p.launches.Mutable(6)->set_epilogue_launch(5); // before the GEMM
  EXPECT_NE(failure(p).find("is not a launch after it"), std::string::npos);
}

TEST(FoldedLaunchesTest, RefusesKindsThatCannotFold) {
  Program rotaryOfGemm = layer();
  rotaryOfGemm.launches.Mutable(4)->set_prologue_launch(2); // the o GEMM "folds" a rotary
  EXPECT_NE(failure(rotaryOfGemm).find("ROTARY launch, which it cannot fold"), std::string::npos);
  Program normOfAttention = layer();
  normOfAttention.launches.Mutable(3)->set_prologue_launch(0);
  EXPECT_NE(failure(normOfAttention).find("RMS_NORM launch"), std::string::npos);
  Program fromNorm = layer();
  fromNorm.launches.Mutable(5)->set_prologue_launch(4);
  EXPECT_NE(failure(fromNorm).find("neither a GEMM nor a KV_ATTENTION"), std::string::npos);
  Program qkvWithoutRotary = layer();
  qkvWithoutRotary.launches.Mutable(3)->clear_prologue_launch();
  EXPECT_NE(
      failure(qkvWithoutRotary).find("qkv_gemm_launch but is not a KV_ATTENTION with a rotary"),
      std::string::npos);
}

TEST(FoldedLaunchesTest, RefusesALaunchClaimedTwice) {
  Program p = layer();
  p.launches.Mutable(4)->set_prologue_launch(0); // the o GEMM claims the first norm too
  EXPECT_NE(failure(p).find("is launch 1's too"), std::string::npos);
}

TEST(FoldedLaunchesTest, RefusesRecordsOfAnotherCount) {
  Program p = layer();
  p.launches.RemoveLast();
  EXPECT_NE(failure(p).find("8 cuda launch records for 9 launches"), std::string::npos);
}

} // namespace
} // namespace infer::cuda
