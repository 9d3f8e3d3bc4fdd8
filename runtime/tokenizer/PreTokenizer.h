//===- PreTokenizer.h - tokenizer.json pre-tokenizers -----------*- C++ -*-===//
//
// ByteLevel, Split, Metaspace, Digits, Punctuation, Whitespace,
// WhitespaceSplit, CharDelimiterSplit and Sequence. HF splits the whole list
// of pieces stage by stage; every stage here is a function of one piece, so
// we stream instead: a stage hands each sub-piece straight to the next one
// (and the last to the model), with no list in between. A stage that rewrites
// text writes into its own slot of the per-call scratch, which stays valid
// while the stages after it run.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_PRETOKENIZER_H
#define INFER_RUNTIME_TOKENIZER_PRETOKENIZER_H

#include "runtime/tokenizer/JsonFields.h"
#include "runtime/tokenizer/Regex.h"

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace infer::tokenizer {

/// A non-owning callable reference (the callee outlives the call).
template <typename Signature>
class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
public:
  template <typename F, typename = std::enable_if_t<
                            !std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F &&f) // NOLINT: implicit, like std::function
      : object_(const_cast<void *>(static_cast<const void *>(&f))),
        call_([](void *o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F> *>(o))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
  void *object_;
  R (*call_)(void *, Args...);
};

/// One pre-token: text, and whether it starts at offset 0 of the original
/// input (what Metaspace's prepend_scheme "first" asks).
struct Piece {
  std::string_view text;
  bool atOrigin = false;
};

using PieceSink = FunctionRef<Status(const Piece &)>;

/// A span of HF's find_matches output: a match of the pattern, or a gap.
struct FlaggedSpan {
  size_t start, end;
  bool match;
};

/// Buffers for one encode call, one slot per pre-tokenizer node.
struct PreTokenizeScratch {
  struct Slot {
    std::string text, mapped;
    std::vector<Span> matches, segments;
    std::vector<FlaggedSpan> parts;
  };
  std::vector<Slot> slots;
};

class PreTokenizer {
public:
  explicit PreTokenizer(int slot) : slot_(slot) {}
  virtual ~PreTokenizer() = default;
  /// Hands each non-empty sub-piece of `piece`, in order, to `sink`; stops
  /// at the first error.
  virtual Status split(const Piece &piece, PreTokenizeScratch &scratch,
                       PieceSink sink) const = 0;

protected:
  PreTokenizeScratch::Slot &slot(PreTokenizeScratch &scratch) const {
    return scratch.slots[slot_];
  }

private:
  int slot_;
};

/// The `pre_tokenizer` field: nullptr for null. `slots` counts the nodes
/// (size PreTokenizeScratch::slots to it).
StatusOr<std::unique_ptr<PreTokenizer>> parsePreTokenizer(const Json &json, int &slots);

/// How a split treats the delimiters (HF's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/// `matches` (sorted, non-overlapping spans of `length` bytes) as HF's
/// find_matches sees them, cut per `behavior` (flags flipped by `invert`):
/// the kept non-empty segments in order. `parts` is scratch.
void splitSegments(const std::vector<Span> &matches, size_t length, SplitBehavior behavior,
                   bool invert, std::vector<FlaggedSpan> &parts, std::vector<Span> &segments);

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_PRETOKENIZER_H
