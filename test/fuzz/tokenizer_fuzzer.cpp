//===- tokenizer_fuzzer.cpp - libFuzzer target for the tokenizer ----------===//
//
// The first byte picks what the rest is:
//   0 (mod 4): a tokenizer.json (it comes from an artifact or a model
//      directory): parsed, then used to encode a fixed text and decode it;
//   1..3:      text for one of three real tokenizers loaded once (Llama-2's
//      SentencePiece BPE, GPT-2's byte-level BPE, Gemma's): encoded with and
//      without special tokens, decoded again, and the same bytes read as
//      token ids (some outside the vocabulary) decoded.
//
//===----------------------------------------------------------------------===//

#include "runtime/tokenizer/Tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using infer::tokenizer::Tokenizer;

namespace {

// INFER_TOKENIZER_FIXTURES in the environment overrides the build tree's
// fixtures, so the binary also runs from a copy of the tree elsewhere (a
// campaign on another machine, docs/fuzzing.md).
std::string fixturesDir() {
  const char *dir = std::getenv("INFER_TOKENIZER_FIXTURES");
  return dir && *dir ? dir : INFER_TOKENIZER_FIXTURES;
}

std::unique_ptr<Tokenizer> load(const char *name) {
  auto tokenizer = Tokenizer::fromFile(fixturesDir() + "/" + name + "/tokenizer.json");
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "%s\n", tokenizer.status().message().c_str());
    std::abort();
  }
  return std::move(*tokenizer);
}

void exercise(const Tokenizer &tokenizer, std::string_view text, const uint8_t *idBytes,
              size_t idSize) {
  for (bool special : {false, true}) {
    auto ids = tokenizer.encode(text, special);
    if (ids.ok())
      (void)tokenizer.decode(*ids, !special);
  }
  std::vector<int32_t> ids;
  int64_t vocab = tokenizer.vocabSize();
  for (size_t i = 0; i + 1 < idSize; i += 2) {
    int32_t id = int32_t(idBytes[i] | (idBytes[i + 1] << 8));
    ids.push_back(vocab > 0 ? int32_t(id % (vocab + 2)) - 1 : id); // -1 and vocab: outside
  }
  for (bool skip : {false, true})
    (void)tokenizer.decode(ids, skip);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::unique_ptr<Tokenizer> fixed[] = {load("llama2"), load("gpt2"), load("gemma")};
  if (size == 0)
    return 0;
  std::string_view rest(reinterpret_cast<const char *>(data + 1), size - 1);
  unsigned mode = data[0] % 4;
  if (mode == 0) {
    auto tokenizer = Tokenizer::fromJson(rest);
    if (tokenizer.ok()) {
      static const char sample[] = "Hello world! <s> 123 naïve  \t\n日本語 ☃ 🎉";
      exercise(**tokenizer, sample, data, size < 64 ? size : 64);
    }
    return 0;
  }
  exercise(*fixed[mode - 1], rest, data + 1, size - 1);
  return 0;
}
