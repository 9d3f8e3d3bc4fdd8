//===- TokenizerTool.cpp - test and bench helper for runtime/tokenizer ----===//
//
//   infer-tokenizer-tool info TOKENIZER
//       {"vocab_size": N, "specials": [ids]}     (special ids among 0..vocab_size)
//   infer-tokenizer-tool stream TOKENIZER [--skip-special-tokens]
//       per stdin line [ids]: {"chunks": [...], "finish": "...", "valid": bool}, each
//       chunk one DecodeStream::step; valid is false if any chunk (or finish) is not
//       UTF-8 on its own (then the strings are printed with U+FFFD substitutions)
//   infer-tokenizer-tool pieces SPEC.json
//       SPEC holds a "normalizer" and a "pre_tokenizer" (tokenizer.json syntax); per
//       stdin line (a JSON string): the pre-tokenized pieces of the normalized text
//   infer-tokenizer-tool bench TOKENIZER FILE [--repeat N]
//       encodes FILE in documents of whole lines (~4 KiB) on this thread: one cold pass,
//       then N timed passes; prints {"bytes", "documents", "tokens", "seconds",
//       "mb_per_s", "cold_mb_per_s"} (timing only the encode calls)
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer/Normalizer.h"
#include "runtime/tokenizer/PreTokenizer.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/Utf8.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

using infer::tokenizer::DecodeStream;
using infer::tokenizer::Tokenizer;
using Json = nlohmann::json;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

std::string lossy(const std::string &text) {
  std::string out;
  infer::tokenizer::appendLossyUtf8(out, text);
  return out;
}

int info(const Tokenizer &tokenizer) {
  Json specials = Json::array();
  for (int64_t id = 0; id < tokenizer.vocabSize(); ++id)
    if (tokenizer.isSpecial(static_cast<int32_t>(id)))
      specials.push_back(id);
  Json out = {{"vocab_size", tokenizer.vocabSize()}, {"specials", specials}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

int stream(const Tokenizer &tokenizer, bool skipSpecialTokens) {
  std::string line;
  for (size_t number = 1; std::getline(std::cin, line); ++number) {
    Json ids = Json::parse(line, nullptr, false);
    if (ids.is_discarded() || !ids.is_array())
      return fail("line " + std::to_string(number) + ": not a JSON array");
    DecodeStream decoder(tokenizer, skipSpecialTokens);
    Json chunks = Json::array();
    bool valid = true;
    for (const Json &id : ids) {
      auto chunk = decoder.step(id.get<int32_t>());
      if (!chunk.ok())
        return fail("line " + std::to_string(number) + ": " + chunk.status().toString());
      valid = valid && infer::tokenizer::isValidUtf8(*chunk);
      chunks.push_back(lossy(*chunk));
    }
    std::string rest = decoder.finish();
    valid = valid && infer::tokenizer::isValidUtf8(rest);
    Json out = {{"chunks", chunks}, {"finish", lossy(rest)}, {"valid", valid}};
    std::printf("%s\n", out.dump().c_str());
  }
  return 0;
}

int bench(const Tokenizer &tokenizer, const std::string &file, int repeat) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return fail("cannot read " + file);
  std::stringstream all;
  all << in.rdbuf();
  // Documents of whole lines, about 4 KiB each (bench/tokenizer_bench.py cuts the
  // same ones for the Python library).
  std::vector<std::string> documents;
  std::string text = all.str(), current;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    current.append(text, start, end - start);
    start = end;
    if (current.size() >= 4096) {
      documents.push_back(current);
      current.clear();
    }
  }
  if (!current.empty())
    documents.push_back(current);
  size_t bytes = 0, tokens = 0;
  for (const auto &d : documents)
    bytes += d.size();
  double seconds = 0, coldSeconds = 0;
  for (int pass = 0; pass <= repeat; ++pass) {
    tokens = 0;
    auto start = std::chrono::steady_clock::now();
    for (const auto &d : documents) {
      auto ids = tokenizer.encode(d);
      if (!ids.ok())
        return fail(ids.status().toString());
      tokens += ids->size();
    }
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pass == 0) // the word cache starts empty
      coldSeconds = elapsed;
    else
      seconds += elapsed;
  }
  double perPass = seconds / repeat;
  Json out = {{"bytes", bytes},
              {"documents", documents.size()},
              {"tokens", tokens},
              {"seconds", perPass},
              {"mb_per_s", static_cast<double>(bytes) / perPass / 1e6},
              {"cold_mb_per_s", static_cast<double>(bytes) / coldSeconds / 1e6}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

int pieces(const std::string &specPath) {
  std::ifstream in(specPath);
  std::stringstream text;
  text << in.rdbuf();
  Json spec = Json::parse(text.str(), nullptr, false);
  if (spec.is_discarded())
    return fail("spec is not JSON");
  auto normalizer = infer::tokenizer::parseNormalizer(spec.value("normalizer", Json()));
  if (!normalizer.ok())
    return fail(normalizer.status().toString());
  int slots = 0;
  auto preTokenizer =
      infer::tokenizer::parsePreTokenizer(spec.value("pre_tokenizer", Json()), slots);
  if (!preTokenizer.ok())
    return fail(preTokenizer.status().toString());
  infer::tokenizer::PreTokenizeScratch scratch;
  scratch.slots.resize(static_cast<size_t>(slots));
  std::string line;
  for (size_t number = 1; std::getline(std::cin, line); ++number) {
    Json input = Json::parse(line, nullptr, false);
    if (!input.is_string())
      return fail("line " + std::to_string(number) + ": not a JSON string");
    std::string normalized = input.get<std::string>();
    bool originKept = true;
    if (*normalizer) {
      infer::Status status = (*normalizer)->normalize(normalized, originKept);
      if (!status.ok())
        return fail(status.toString());
    }
    Json out = Json::array();
    auto collect = [&](const infer::tokenizer::Piece &piece) {
      out.push_back(std::string(piece.text));
      return infer::okStatus();
    };
    if (normalized.empty()) {
    } else if (*preTokenizer) {
      // As pre_tokenize_str: the normalized text is a fresh string at offset 0.
      infer::Status status = (*preTokenizer)->split({normalized, true}, scratch, collect);
      if (!status.ok())
        return fail(status.toString());
    } else {
      out.push_back(normalized);
    }
    std::printf("%s\n", out.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: infer-tokenizer-tool info|stream|bench TOKENIZER [...]");
  std::string mode = argv[1];
  if (mode == "pieces")
    return pieces(argv[2]);
  auto tokenizer = Tokenizer::fromFile(argv[2]);
  if (!tokenizer.ok())
    return fail(tokenizer.status().toString());
  if (mode == "info")
    return info(**tokenizer);
  if (mode == "stream")
    return stream(**tokenizer, argc > 3 && std::strcmp(argv[3], "--skip-special-tokens") == 0);
  if (mode == "bench" && argc >= 4) {
    int repeat = argc >= 6 && std::strcmp(argv[4], "--repeat") == 0 ? std::atoi(argv[5]) : 3;
    return bench(**tokenizer, argv[3], repeat < 1 ? 1 : repeat);
  }
  return fail("unknown mode '" + mode + "'");
}
