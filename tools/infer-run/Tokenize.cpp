//===- Tokenize.cpp - infer-run tokenize: text <-> ids for scripts and tests -===//
//
// One request per stdin line, one answer per stdout line (flushed, so a
// script can talk to it line by line):
//
//   encode:    "a JSON string"   ->  [ids]          (no BOS unless --add-special-tokens)
//   --decode:  [ids]             ->  "the text"     (a JSON string)
//
// A bad line (not valid UTF-8, not a JSON string / integer array, an id out
// of range) stops the command with one message naming the line, exit 1.
//
//===----------------------------------------------------------------------===//
#include "tools/infer-run/Tokenize.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/artifact/ArtifactReader.h"
#include "runtime/base/FileReader.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/Utf8.h"
#include "tools/infer-run/Output.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <algorithm>
#include <fstream>

namespace infer::tools {
namespace {

using tokenizer::Tokenizer;

struct TokenizeOptions {
  std::string tokenizerPath;
  bool decode = false;
  bool skipSpecialTokens = false;
  bool addSpecialTokens = false;
};

/// Whether `file` is a regular file that starts like an artifact.
bool isArtifact(const std::string &file) {
  struct stat info;
  if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
    return false;
  char magic[sizeof(artifact::kMagic)] = {};
  std::ifstream in(file, std::ios::binary);
  return in.read(magic, sizeof(magic)) &&
         std::equal(magic, magic + sizeof(magic), artifact::kMagic);
}

/// The tokenizer.json text behind --tokenizer PATH: the file itself, the
/// tokenizer.json of a directory, or the tokenizer an artifact carries.
StatusOr<std::string> readTokenizerJson(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return errnoError(errno, path);
  std::string file = S_ISDIR(info.st_mode) ? path + "/tokenizer.json" : path;
  if (!isArtifact(file))
    return readRegularFile(file, tokenizer::kMaxTokenizerJsonBytes);
  ASSIGN_OR_RETURN(auto reader, artifact::ArtifactReader::open(file));
  if (!reader->manifest().has_text())
    return failedPreconditionError(file + ": the artifact has no tokenizer (infer-compile stores "
                                          "the tokenizer.json beside the model, or --tokenizer DIR)");
  return reader->manifest().text().tokenizer_json();
}

StatusOr<std::unique_ptr<Tokenizer>> loadTokenizer(const std::string &path) {
  ASSIGN_OR_RETURN(std::string json, readTokenizerJson(path));
  auto loaded = Tokenizer::fromJson(json);
  if (!loaded.ok())
    return loaded.status().withPrefix(path);
  return loaded;
}

/// One encode request: a JSON string -> "[id,...]".
StatusOr<std::string> encodeLine(const Tokenizer &tokenizer, const std::string &line,
                                 bool addSpecialTokens) {
  auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_string())
    return invalidArgumentError("not a JSON string");
  ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                   tokenizer.encode(json.get_ref<const std::string &>(), addSpecialTokens));
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i)
      out += ',';
    out += std::to_string(ids[i]);
  }
  out += ']';
  return out;
}

/// One decode request: a JSON array of ids -> the text as a JSON string.
StatusOr<std::string> decodeLine(const Tokenizer &tokenizer, const std::string &line,
                                 bool skipSpecialTokens) {
  auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_array())
    return invalidArgumentError("not a JSON array of token ids");
  std::vector<int32_t> ids;
  ids.reserve(json.size());
  for (const auto &id : json) {
    if (!id.is_number_integer() || id.get<int64_t>() < INT32_MIN || id.get<int64_t>() > INT32_MAX)
      return invalidArgumentError("not a JSON array of token ids (" + id.dump() + ")");
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  ASSIGN_OR_RETURN(std::string text, tokenizer.decode(ids, skipSpecialTokens));
  // decode's text is valid UTF-8; `replace` only keeps dump from throwing.
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The longest request line (a text of this size is far beyond any context).
constexpr size_t kMaxLineBytes = size_t(256) << 20;

enum class LineRead { kLine, kEnd, kTooLong };

/// The next line of `in` without its newline, as std::getline reads it, but
/// at most kMaxLineBytes: input without newlines (/dev/zero) must not grow
/// memory without end.
LineRead readLine(std::streambuf &in, std::string &line) {
  line.clear();
  for (;;) {
    int c = in.sbumpc();
    if (c == std::char_traits<char>::eof())
      return line.empty() ? LineRead::kEnd : LineRead::kLine;
    if (c == '\n')
      return LineRead::kLine;
    if (line.size() == kMaxLineBytes)
      return LineRead::kTooLong;
    line.push_back(static_cast<char>(c));
  }
}

Status run(const TokenizeOptions &options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, loadTokenizer(options.tokenizerPath));
  std::ios::sync_with_stdio(false);
  std::string line;
  for (size_t number = 1;; ++number) {
    LineRead read = readLine(*std::cin.rdbuf(), line);
    if (read == LineRead::kEnd)
      break;
    if (read == LineRead::kTooLong)
      return invalidArgumentError("line " + std::to_string(number) + ": longer than " +
                                  std::to_string(kMaxLineBytes) + " bytes");
    size_t valid = tokenizer::validUtf8Prefix(line);
    if (valid != line.size())
      return invalidArgumentError("line " + std::to_string(number) +
                                  ": not valid UTF-8 (bad byte at offset " +
                                  std::to_string(valid) + ")");
    auto answer = options.decode ? decodeLine(*tokenizer, line, options.skipSpecialTokens)
                                 : encodeLine(*tokenizer, line, options.addSpecialTokens);
    if (!answer.ok())
      return answer.status().withPrefix("line " + std::to_string(number));
    std::fwrite(answer->data(), 1, answer->size(), stdout);
    std::fputc('\n', stdout);
    RETURN_IF_ERROR(flushStdout());
  }
  return flushStdout();
}

} // namespace

int runTokenizeCommand(int argc, char **argv) {
  CLI::App app{"infer-run tokenize: text <-> token ids through a Hugging Face tokenizer.json, "
               "one JSON value per stdin line",
               "infer-run tokenize"};
  TokenizeOptions options;
  app.add_option("--tokenizer", options.tokenizerPath,
                 "a tokenizer.json, a directory holding one, or an artifact (MODEL.infer) that carries one")
      ->required();
  app.add_flag("--decode", options.decode,
               "read JSON arrays of ids and print the text as JSON strings (default: read JSON "
               "strings, print id arrays)");
  app.add_flag("--skip-special-tokens", options.skipSpecialTokens,
               "--decode: leave out special tokens");
  app.add_flag("--add-special-tokens", options.addSpecialTokens,
               "encode: add the post-processor's special tokens (e.g. BOS)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    return app.exit(error);
  }
  Status status = run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.toString().c_str());
    return 1;
  }
  return 0;
}

} // namespace infer::tools
