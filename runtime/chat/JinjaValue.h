//===- JinjaValue.h - Python values as Jinja templates see them -*- C++ -*-===//
//
// Chat templates run on Python objects: jinja2's Undefined, None, bool, int,
// float, str (and markupsafe.Markup), list, tuple, dict (insertion ordered),
// range, generators and dict views from filters and methods, namespace(),
// macros and bound methods. `Value` models each with the Python semantics the
// templates observe: truthiness, `==` across int/float/bool, ordering, and
// hashing for dict keys. Containers are immutable once built (the sandbox
// forbids mutating methods), so they are shared, not copied; namespaces, and
// how far a generator has been consumed, are the only mutable state.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAVALUE_H
#define INFER_RUNTIME_CHAT_JINJAVALUE_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace infer::chat::jinja {

struct Sequence;
struct Dict;
struct Namespace;
struct Callable;
struct LoopState;

enum class ValueKind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kSequence,
  kDict,
  kNamespace,
  kCallable,
  kLoop,
};

/// What a Python iterable was; decides printing, len(), indexing and `==`.
enum class SeqKind : uint8_t {
  kList,
  kTuple,
  kRange,
  /// A one-shot iterator (filters like select/map, reverse): no len(), no
  /// indexing, always truthy, consumed by iteration.
  kGenerator,
  kDictKeys,
  kDictValues,
  kDictItems,
};

class Value {
public:
  /// Undefined; `hint` is the message raised when the value is used in a
  /// way jinja2's Undefined refuses (attribute or item access, arithmetic,
  /// ordering; printing, testing and iterating are fine), e.g.
  /// "'x' is undefined".
  static Value undefined(std::string hint);
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value floating(double f);
  /// A str, or a markupsafe.Markup when `markup` (from the `safe` filter).
  static Value string(std::string s, bool markup = false);
  static Value sequence(SeqKind kind, std::vector<Value> items);
  static Value list(std::vector<Value> items) { return sequence(SeqKind::kList, std::move(items)); }
  static Value tuple(std::vector<Value> items) {
    return sequence(SeqKind::kTuple, std::move(items));
  }
  static Value range(int64_t start, int64_t stop, int64_t step, std::vector<Value> items);
  static Value dict(std::shared_ptr<const Dict> dict);
  static Value ns(std::shared_ptr<Namespace> ns);
  static Value callable(std::shared_ptr<const Callable> callable);
  static Value loop(std::shared_ptr<LoopState> loop);

  Value() = default; // Undefined without a hint.

  ValueKind kind() const { return kind_; }
  bool isUndefined() const { return kind_ == ValueKind::kUndefined; }
  bool isNone() const { return kind_ == ValueKind::kNone; }
  bool isString() const { return kind_ == ValueKind::kString; }
  bool isInt() const { return kind_ == ValueKind::kInt; }
  bool isBool() const { return kind_ == ValueKind::kBool; }
  /// bool, int or float (Python's numbers.Number).
  bool isNumber() const {
    return kind_ == ValueKind::kBool || kind_ == ValueKind::kInt || kind_ == ValueKind::kFloat;
  }
  bool isSequence() const { return kind_ == ValueKind::kSequence; }
  bool isSequence(SeqKind k) const;
  bool isDict() const { return kind_ == ValueKind::kDict; }

  bool boolValue() const { return i_ != 0; }
  /// The int value of a bool or int.
  int64_t intValue() const { return i_; }
  /// The value of any number as a double.
  double numberValue() const;
  const std::string &str() const { return s_; }
  bool isMarkup() const { return markup_; }
  const std::string &undefinedHint() const { return s_; }
  const Sequence &seq() const { return *seq_; }
  const std::shared_ptr<Sequence> &seqPtr() const { return seq_; }
  const Dict &dict() const { return *dict_; }
  const std::shared_ptr<const Dict> &dictPtr() const { return dict_; }
  Namespace &ns() const { return *ns_; }
  const std::shared_ptr<Namespace> &nsPtr() const { return ns_; }
  const Callable &callable() const { return *callable_; }
  LoopState &loop() const { return *loop_; }

  /// Python's bool(): Undefined, None, 0, 0.0, "" and empty containers are
  /// false; generators are always true.
  bool truthy() const;
  /// Python's type name, as in error messages ("str", "dict", "NoneType").
  std::string typeName() const;

private:
  ValueKind kind_ = ValueKind::kUndefined;
  bool markup_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  std::shared_ptr<Sequence> seq_;
  std::shared_ptr<const Dict> dict_;
  std::shared_ptr<Namespace> ns_;
  std::shared_ptr<const Callable> callable_;
  std::shared_ptr<LoopState> loop_;
};

struct Sequence {
  SeqKind kind = SeqKind::kList;
  std::vector<Value> items;
  /// For kRange: the arguments, to print `range(0, 3)`.
  int64_t rangeStart = 0, rangeStop = 0, rangeStep = 1;
  /// For kGenerator: how many items were consumed already.
  size_t consumed = 0;
};

/// The value under `key` in `entries`, pairs in insertion order as Dict,
/// Namespace and Scope keep them (`same` compares keys), or nullptr.
template <typename Key, typename Same>
const Value *findEntry(const std::vector<std::pair<Key, Value>> &entries, const Key &key,
                       Same same) {
  for (const auto &entry : entries)
    if (same(entry.first, key))
      return &entry.second;
  return nullptr;
}

/// Replaces the value under `key` in `entries`, keeping the first
/// insertion's position, or appends the pair.
template <typename Key, typename KeyArg, typename Same>
void setEntry(std::vector<std::pair<Key, Value>> &entries, KeyArg &&key, Value value, Same same) {
  for (auto &entry : entries) {
    if (same(entry.first, key)) {
      entry.second = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::forward<KeyArg>(key), std::move(value));
}

/// A dict in insertion order. Keys are hashable values (None, bool, int,
/// float, str, tuples of those); 1, 1.0 and True are the same key.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  const Value *find(const Value &key) const;
  /// Inserts or replaces, keeping the first insertion's position.
  void set(Value key, Value value);
};

/// jinja2's namespace(): the one mutable object, shared by reference.
struct Namespace {
  std::vector<std::pair<std::string, Value>> attrs;
  const Value *find(const std::string &name) const;
  void set(const std::string &name, Value value);
};

/// The state behind a `loop` variable.
struct LoopState {
  int64_t index0 = 0;
  std::shared_ptr<const std::vector<Value>> items;
  int64_t length() const { return static_cast<int64_t>(items->size()); }
};

/// Whether `v` can be a dict key (Python's hashable); containers are not.
bool isHashable(const Value &v);
/// Python's `a == b`.
bool pyEquals(const Value &a, const Value &b);
enum class CmpOp { kLt, kLe, kGt, kGe };
/// Python's ordering comparisons; an error for unorderable types
/// ("'<' not supported between instances of 'int' and 'str'").
StatusOr<bool> pyCompare(const Value &a, const Value &b, CmpOp op);

struct Stmt;
struct Scope;

enum class CallableKind : uint8_t { kBuiltin, kMacro, kBoundMethod };

/// Something a template can call: a global (raise_exception, namespace,
/// range, ...), a `{% macro %}`, or a method bound to its object.
struct Callable {
  CallableKind kind = CallableKind::kBuiltin;
  /// The global's, macro's or method's name.
  std::string name;
  /// kMacro: its definition and the scope it was defined in (macros see
  /// that scope's variables as they are when called).
  const Stmt *macro = nullptr;
  std::shared_ptr<Scope> closure;
  /// kBoundMethod: the object the method was looked up on.
  Value receiver;
};

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAVALUE_H
