//===- DecodeStreamTest.cpp - streaming decode against the oracle ---------===//
//
// stream_cases.json holds, per fixture, id sequences that split multi-byte
// characters over tokens (byte fallback, byte-level) and the `tokenizers`
// library's decode of each (make_stream_cases.py writes it; the
// tokenizer.stream-cases test checks it is still the library's answer).
// Fed one id at a time, every step must be valid UTF-8 on its own, no step may
// show U+FFFD for a character that later completes, and the steps plus
// finish() must equal the oracle's decode, with and without skipping special
// tokens. Sequences of bytes that never complete end in U+FFFD after finish().
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/Utf8.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

namespace infer::tokenizer {
namespace {

using Json = nlohmann::json;
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

const Json &allCases() {
  static const Json cases = [] {
    std::ifstream in(std::string(INFER_TOKENIZER_TEST_DIR) + "/stream_cases.json");
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str(), nullptr, false);
  }();
  return cases;
}

const Tokenizer &fixture(const std::string &name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  auto &slot = loaded[name];
  if (!slot) {
    auto tokenizer =
        Tokenizer::fromFile(std::string(INFER_TOKENIZER_TEST_DIR) + "/fixtures/" + name);
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().toString();
    slot = std::move(tokenizer).value();
  }
  return *slot;
}

class DecodeStreamTest : public testing::TestWithParam<std::string> {};

TEST_P(DecodeStreamTest, StepsConcatenateToTheOracleDecode) {
  const Json &cases = allCases();
  ASSERT_FALSE(cases.is_discarded()) << "stream_cases.json does not parse";
  ASSERT_TRUE(cases.contains(GetParam()));
  const Tokenizer &tokenizer = fixture(GetParam());
  for (const Json &c : cases[GetParam()]) {
    std::vector<int32_t> ids = c["ids"].get<std::vector<int32_t>>();
    for (bool skip : {false, true}) {
      SCOPED_TRACE(c["name"].get<std::string>() + (skip ? " (skip special)" : ""));
      std::string expected = c[skip ? "decode_skip" : "decode"].get<std::string>();
      bool expectReplacement = expected.find(kReplacement) != std::string::npos;
      DecodeStream stream(tokenizer, skip);
      std::string all, steps;
      for (int32_t id : ids) {
        auto chunk = stream.step(id);
        ASSERT_TRUE(chunk.ok()) << chunk.status().toString();
        EXPECT_TRUE(isValidUtf8(*chunk)) << "step after id " << id;
        if (!expectReplacement) {
          EXPECT_EQ(chunk->find(kReplacement), std::string::npos)
              << "a step showed U+FFFD for a character still completing (id " << id << ")";
        }
        steps += *chunk;
      }
      std::string rest = stream.finish();
      EXPECT_TRUE(isValidUtf8(rest));
      all = steps + rest;
      EXPECT_EQ(all, expected);
      auto direct = tokenizer.decode(ids, skip);
      ASSERT_TRUE(direct.ok());
      EXPECT_EQ(*direct, expected);
      if (c["incomplete"].get<bool>()) {
        // Held back until finish(), which gives the U+FFFD.
        EXPECT_EQ(steps, "");
        ASSERT_GE(rest.size(), kReplacement.size());
        EXPECT_EQ(rest.substr(rest.size() - kReplacement.size()), kReplacement);
      }
    }
  }
}

TEST_P(DecodeStreamTest, BadIdIsAnErrorAndLeavesTheStream) {
  const Tokenizer &tokenizer = fixture(GetParam());
  DecodeStream stream(tokenizer, false);
  auto bad = stream.step(static_cast<int32_t>(tokenizer.vocabSize()) + 5);
  EXPECT_FALSE(bad.ok());
  std::vector<int32_t> ids = *tokenizer.encode("Hello world");
  std::string all;
  for (int32_t id : ids)
    all += *stream.step(id);
  all += stream.finish();
  EXPECT_EQ(all, *tokenizer.decode(ids, false));
  EXPECT_FALSE(tokenizer.decode({-1}, false).ok());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeStreamTest,
                         testing::Values("llama2", "llama3", "gpt2", "mistral", "qwen2", "gemma",
                                         "misc", "suffix", "metaspace"),
                         [](const testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
} // namespace infer::tokenizer
