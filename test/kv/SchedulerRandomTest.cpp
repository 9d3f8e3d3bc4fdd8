//===- SchedulerRandomTest.cpp - continuous batching against a reference --===//
//
// Random workloads driven through the scheduler and FakePagedModel; every
// request's output must equal the same function computed one request at a
// time, so batching, chunking, prefix sharing and preemption must not change
// a single token.
//
//===----------------------------------------------------------------------===//

#include "test/kv/SchedulerTestUtils.h"

#include <random>

namespace infer::scheduler {
namespace {

using namespace kvtest;

/// Random prompts, some sharing a prefix or repeating an earlier prompt so
/// that the prefix cache gets hits; a third have a stop token.
std::vector<RequestSpec> randomWorkload(std::mt19937 &rng, int32_t count, int32_t maxPrompt,
                                        int32_t maxNew, int64_t maxArrival) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<std::vector<int32_t>> prefixes(2);
  for (auto &prefix : prefixes)
    for (int64_t i = 0, n = uniform(4, 24); i < n; ++i)
      prefix.push_back(static_cast<int32_t>(uniform(0, kVocab - 1)));
  std::vector<RequestSpec> specs;
  for (int32_t id = 0; id < count; ++id) {
    RequestSpec spec;
    spec.id = 1000 + id;
    int64_t length = uniform(1, maxPrompt);
    int64_t kind = uniform(0, 7);
    if (kind == 0 && !specs.empty()) {
      spec.prompt = specs[uniform(0, specs.size() - 1)].prompt;
    } else {
      if (kind <= 4)
        spec.prompt = prefixes[kind % 2];
      spec.prompt.resize(std::min<int64_t>(spec.prompt.size(), length));
      while (static_cast<int64_t>(spec.prompt.size()) < length)
        spec.prompt.push_back(static_cast<int32_t>(uniform(0, kVocab - 1)));
    }
    spec.maxNewTokens = static_cast<int32_t>(uniform(1, maxNew));
    if (uniform(0, 2) == 0)
      spec.stopTokenIds.push_back(static_cast<int32_t>(uniform(0, kVocab - 1)));
    spec.arrivalStep = uniform(0, 1) ? 0 : uniform(0, maxArrival);
    specs.push_back(std::move(spec));
  }
  return specs;
}

/// Blocks a request may hold at its longest (as Scheduler refuses them).
int32_t worstBlocks(const RequestSpec &spec, const SchedulerConfig &config) {
  int64_t prompt = spec.prompt.size();
  int64_t finalLen = std::min<int64_t>(prompt + spec.maxNewTokens, config.maxSeqLen);
  int64_t computed = std::max<int64_t>(prompt, finalLen - 1);
  return static_cast<int32_t>((computed + config.blockSize - 1) / config.blockSize);
}

enum class Load { kFits, kChunked, kOversubscribed, kOversubscribedChunked };

struct RandomCase {
  Load load;
  bool prefixCaching;
};

class SchedulerRandomTest : public ::testing::TestWithParam<RandomCase> {};

TEST_P(SchedulerRandomTest, MatchesOneRequestAtATime) {
  const RandomCase param = GetParam();
  int64_t totalPreemptions = 0, totalChunks = 0, totalCached = 0, totalCancelled = 0;
  for (uint32_t seed = 1; seed <= 64; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const int32_t blockSizes[] = {1, 2, 4, 16};
    SchedulerConfig config;
    config.blockSize = blockSizes[seed % 4];
    config.maxSeqLen = 56;
    config.enablePrefixCaching = param.prefixCaching;
    int32_t count = 24;
    std::vector<RequestSpec> specs = randomWorkload(rng, count, 48, 20, 30);
    int32_t sumWorst = 0, maxWorst = 0;
    for (const RequestSpec &spec : specs) {
      sumWorst += worstBlocks(spec, config);
      maxWorst = std::max(maxWorst, worstBlocks(spec, config));
    }
    switch (param.load) {
    case Load::kFits:
      config.numBlocks = 1 + sumWorst;
      config.maxBatchTokens = 2048;
      config.maxSequences = count;
      break;
    case Load::kChunked:
      config.numBlocks = 1 + sumWorst;
      config.maxBatchTokens = 1 + static_cast<int32_t>(rng() % 8);
      config.maxSequences = 1 + static_cast<int32_t>(rng() % 6);
      break;
    case Load::kOversubscribed:
    case Load::kOversubscribedChunked:
      // A quarter of what all requests need at their longest, all arriving
      // at once so that they compete for it. With a small budget some are
      // cancelled midway too (not with the large one, where every seed must
      // preempt).
      for (RequestSpec &spec : specs) {
        spec.arrivalStep = 0;
        if (param.load == Load::kOversubscribedChunked && rng() % 8 == 0)
          spec.cancelStep = rng() % 40;
      }
      config.numBlocks = 1 + std::max(maxWorst, sumWorst / 4);
      config.maxBatchTokens = 16 + static_cast<int32_t>(rng() % 256);
      if (param.load == Load::kOversubscribedChunked) {
        // As small as a pool may be: the longest request just fits alone.
        config.numBlocks = 1 + maxWorst;
        config.maxBatchTokens = 1 + static_cast<int32_t>(rng() % 12);
      }
      config.maxSequences = count;
      break;
    }
    Scheduler scheduler = makeScheduler(config);
    RunStats stats;
    std::map<RequestId, Outcome> outcomes = drive(scheduler, specs, stats);
    ASSERT_EQ(outcomes.size(), specs.size());
    for (const RequestSpec &spec : specs) {
      Outcome expected = reference(spec, config.maxSeqLen);
      const Outcome &got = outcomes[spec.id];
      if (got.reason == FinishReason::kCancelled) {
        // Whatever it generated before the cancel must agree with the reference.
        EXPECT_GE(spec.cancelStep, 0) << "request " << spec.id;
        ASSERT_LE(got.generated.size(), expected.generated.size()) << "request " << spec.id;
        EXPECT_TRUE(std::equal(got.generated.begin(), got.generated.end(),
                               expected.generated.begin()))
            << "request " << spec.id << ": " << got << " vs " << expected;
        ++totalCancelled;
        continue;
      }
      EXPECT_EQ(got, expected) << "request " << spec.id;
    }
    EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 0);
    EXPECT_EQ(scheduler.kvCache().numSequences(), 0u);
    EXPECT_EQ(scheduler.kvCache().pool().numFreeBlocks(), config.numBlocks - 1);
    if (param.load == Load::kOversubscribed) {
      EXPECT_GT(scheduler.numPreemptions(), 0);
    } else if (param.load != Load::kOversubscribedChunked) {
      EXPECT_EQ(scheduler.numPreemptions(), 0);
    }
    totalPreemptions += scheduler.numPreemptions();
    totalChunks += stats.chunksWithoutLogits;
    totalCached += stats.cachedTokens;
  }
  if (param.load == Load::kChunked || param.load == Load::kOversubscribedChunked) {
    EXPECT_GT(totalChunks, 0) << "no prompt was split across steps";
  }
  if (param.load == Load::kOversubscribedChunked) {
    EXPECT_GT(totalPreemptions, 0);
    EXPECT_GT(totalCancelled, 0);
  }
  if (param.prefixCaching) {
    EXPECT_GT(totalCached, 0) << "the prefix cache never hit";
  } else {
    EXPECT_EQ(totalCached, 0);
  }
  RecordProperty("preemptions", std::to_string(totalPreemptions));
  RecordProperty("cancelled", std::to_string(totalCancelled));
}

std::string caseName(const ::testing::TestParamInfo<RandomCase> &info) {
  const char *loads[] = {"Fits", "Chunked", "Oversubscribed", "OversubscribedChunked"};
  return std::string(loads[static_cast<int>(info.param.load)]) +
         (info.param.prefixCaching ? "PrefixCache" : "NoPrefixCache");
}

INSTANTIATE_TEST_SUITE_P(
    Loads, SchedulerRandomTest,
    ::testing::Values(RandomCase{Load::kFits, true}, RandomCase{Load::kFits, false},
                      RandomCase{Load::kChunked, true}, RandomCase{Load::kChunked, false},
                      RandomCase{Load::kOversubscribed, true},
                      RandomCase{Load::kOversubscribed, false},
                      RandomCase{Load::kOversubscribedChunked, true},
                      RandomCase{Load::kOversubscribedChunked, false}),
    caseName);

} // namespace
} // namespace infer::scheduler
