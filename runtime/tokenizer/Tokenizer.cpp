//===- Tokenizer.cpp - Hugging Face tokenizer.json in C++ -----------------===//
//
// The encode pipeline, as HF's encode_single_sequence:
//
//   text ─ added tokens (normalized=false, on the raw text) ─┬─ token ids
//                                                           └─ each other piece:
//     normalizer ─ added tokens (normalized=true) ─┬─ token ids
//                                                 └─ pre-tokenizer ─ BPE ─ ids
//
// then the post-processor when add_special_tokens. Every stage works on one
// piece at a time and appends ids in text order.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer/Tokenizer.h"

#include "runtime/base/FileReader.h"

#include "runtime/tokenizer/AddedVocabulary.h"
#include "runtime/tokenizer/Bpe.h"
#include "runtime/tokenizer/Decoder.h"
#include "runtime/tokenizer/Normalizer.h"
#include "runtime/tokenizer/PostProcessor.h"
#include "runtime/tokenizer/PreTokenizer.h"
#include "runtime/tokenizer/Utf8.h"

#include <sys/stat.h>

#include <cerrno>

namespace infer::tokenizer {

struct Tokenizer::Impl {
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> preTokenizer;
  int preTokenizerSlots = 0;
  std::unique_ptr<BpeModel> model;
  AddedVocabulary added;
  std::unique_ptr<Decoder> decoder;
  PostProcessor postProcessor;
  int64_t vocabSize = 0;
};

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;

namespace {

const Json &fieldOrNull(const Json &root, const char *key) {
  static const Json null;
  auto it = root.find(key);
  return it == root.end() ? null : *it;
}

} // namespace

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::fromJson(std::string_view text) {
  Json root = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return invalidArgumentError("tokenizer.json is not a JSON object");
  // The typed readers check every field; this only guards against a throw
  // from a path they missed.
  try {
    auto version = root.find("version");
    if (version != root.end() && !(version->is_string() && *version == "1.0"))
      return unsupported("tokenizer.json version", version->dump());
    for (const char *key : {"truncation", "padding"})
      if (!fieldOrNull(root, key).is_null())
        return unsupported(key, fieldOrNull(root, key).dump().substr(0, 80) +
                                    " (encode would differ from HF; set it to null)");
    std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
    Impl &impl = *tokenizer->impl_;
    ASSIGN_OR_RETURN(impl.normalizer, parseNormalizer(fieldOrNull(root, "normalizer")));
    ASSIGN_OR_RETURN(impl.preTokenizer,
                     parsePreTokenizer(fieldOrNull(root, "pre_tokenizer"), impl.preTokenizerSlots));
    ASSIGN_OR_RETURN(impl.model, BpeModel::fromJson(fieldOrNull(root, "model")));
    ASSIGN_OR_RETURN(impl.decoder, parseDecoder(fieldOrNull(root, "decoder")));
    ASSIGN_OR_RETURN(impl.postProcessor,
                     PostProcessor::fromJson(fieldOrNull(root, "post_processor")));
    ASSIGN_OR_RETURN(impl.added, AddedVocabulary::fromJson(fieldOrNull(root, "added_tokens"),
                                                           *impl.model, impl.normalizer.get()));
    // HF counts the added contents the model lacks on top of the model's.
    impl.vocabSize = impl.model->size() + static_cast<int64_t>(impl.added.size()) -
                     static_cast<int64_t>(impl.added.countInModel(*impl.model));
    return tokenizer;
  } catch (const std::exception &e) {
    return invalidArgumentError(std::string("tokenizer.json: ") + e.what());
  }
}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::fromFile(const std::string &path) {
  std::string file = path;
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return errnoError(errno, path);
  if (S_ISDIR(info.st_mode))
    file = path + "/tokenizer.json";
  ASSIGN_OR_RETURN(std::string contents, readRegularFile(file, kMaxTokenizerJsonBytes));
  auto tokenizer = fromJson(contents);
  if (!tokenizer.ok())
    return tokenizer.status().withPrefix(file);
  return tokenizer;
}

StatusOr<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                                 bool addSpecialTokens) const {
  size_t valid = validUtf8Prefix(text);
  if (valid != text.size())
    return invalidArgumentError("text is not valid UTF-8 (bad byte at offset " +
                                std::to_string(valid) + ")");
  const Impl &impl = *impl_;
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  PreTokenizeScratch scratch;
  scratch.slots.resize(static_cast<size_t>(impl.preTokenizerSlots));
  auto toModel = [&](const Piece &piece) { return impl.model->tokenize(piece.text, ids); };

  std::vector<AddedVocabulary::Segment> rawSegments, normalizedSegments;
  std::string normalized;
  impl.added.split(text, /*normalizedSet=*/false, rawSegments);
  for (const auto &raw : rawSegments) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    if (raw.start == raw.end)
      continue;
    normalized.assign(text.substr(raw.start, raw.end - raw.start));
    bool originKept = true;
    if (impl.normalizer)
      RETURN_IF_ERROR(impl.normalizer->normalize(normalized, originKept));
    impl.added.split(normalized, /*normalizedSet=*/true, normalizedSegments);
    for (const auto &segment : normalizedSegments) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      if (segment.start == segment.end)
        continue;
      Piece piece{std::string_view(normalized).substr(segment.start, segment.end - segment.start),
                  raw.start == 0 && originKept && segment.start == 0};
      if (impl.preTokenizer)
        RETURN_IF_ERROR(impl.preTokenizer->split(piece, scratch, toModel));
      else
        RETURN_IF_ERROR(toModel(piece));
    }
  }
  if (addSpecialTokens)
    return impl.postProcessor.apply(ids);
  return ids;
}

StatusOr<std::string> Tokenizer::decode(const std::vector<int32_t> &ids,
                                        bool skipSpecialTokens) const {
  const Impl &impl = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string *token = impl.added.spelling(id);
    if (!token)
      token = impl.model->idToToken(id);
    if (!token)
      return checkId(id);
    if (skipSpecialTokens && impl.added.isSpecialContent(*token))
      continue;
    tokens.push_back(*token);
  }
  std::string text;
  if (!impl.decoder) {
    for (size_t i = 0; i < tokens.size(); ++i)
      text += (i ? " " : "") + tokens[i];
    return text;
  }
  RETURN_IF_ERROR(impl.decoder->decodeChain(tokens));
  for (const std::string &token : tokens)
    text += token;
  return text;
}

Status Tokenizer::checkId(int32_t id) const {
  if (impl_->added.spelling(id) || impl_->model->idToToken(id))
    return okStatus();
  return invalidArgumentError("id " + std::to_string(id) + " is not in the vocabulary (" +
                              std::to_string(vocabSize()) + " tokens)");
}

bool Tokenizer::endsInOpenByteRun(const std::vector<int32_t> &ids,
                                  bool skipSpecialTokens) const {
  const Impl &impl = *impl_;
  if (!impl.decoder || !impl.decoder->decodesByteRuns())
    return false;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    const std::string *token = impl.added.spelling(*it);
    if (!token)
      token = impl.model->idToToken(*it);
    if (!token)
      return false;
    if (skipSpecialTokens && impl.added.isSpecialContent(*token))
      continue; // decode drops it: the run goes on through it
    return fallbackByte(*token) >= 0;
  }
  return false;
}

int64_t Tokenizer::vocabSize() const { return impl_->vocabSize; }

std::optional<int32_t> Tokenizer::tokenToId(std::string_view token) const {
  if (auto id = impl_->added.tokenToId(token))
    return id;
  return impl_->model->tokenToId(token);
}

bool Tokenizer::isSpecial(int32_t id) const { return impl_->added.isSpecialId(id); }

} // namespace infer::tokenizer
