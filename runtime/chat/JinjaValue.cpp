//===- JinjaValue.cpp - Python values as Jinja templates see them ---------===//

#include "runtime/chat/JinjaValue.h"

#include <cmath>
#include <functional>

namespace infer::chat::jinja {

Value Value::undefined(std::string hint) {
  Value v;
  v.s_ = std::move(hint);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = ValueKind::kNone;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = ValueKind::kBool;
  v.i_ = b ? 1 : 0;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = ValueKind::kInt;
  v.i_ = i;
  return v;
}

Value Value::floating(double f) {
  Value v;
  v.kind_ = ValueKind::kFloat;
  v.f_ = f;
  return v;
}

Value Value::string(std::string s, bool markup) {
  Value v;
  v.kind_ = ValueKind::kString;
  v.s_ = std::move(s);
  v.markup_ = markup;
  return v;
}

Value Value::sequence(SeqKind kind, std::vector<Value> items) {
  Value v;
  v.kind_ = ValueKind::kSequence;
  v.seq_ = std::make_shared<Sequence>();
  v.seq_->kind = kind;
  v.seq_->items = std::move(items);
  return v;
}

Value Value::range(int64_t start, int64_t stop, int64_t step, std::vector<Value> items) {
  Value v = sequence(SeqKind::kRange, std::move(items));
  v.seq_->rangeStart = start;
  v.seq_->rangeStop = stop;
  v.seq_->rangeStep = step;
  return v;
}

Value Value::dict(std::shared_ptr<const Dict> dict) {
  Value v;
  v.kind_ = ValueKind::kDict;
  v.dict_ = std::move(dict);
  return v;
}

Value Value::ns(std::shared_ptr<Namespace> ns) {
  Value v;
  v.kind_ = ValueKind::kNamespace;
  v.ns_ = std::move(ns);
  return v;
}

Value Value::callable(std::shared_ptr<const Callable> callable) {
  Value v;
  v.kind_ = ValueKind::kCallable;
  v.callable_ = std::move(callable);
  return v;
}

Value Value::loop(std::shared_ptr<LoopState> loop) {
  Value v;
  v.kind_ = ValueKind::kLoop;
  v.loop_ = std::move(loop);
  return v;
}

bool Value::isSequence(SeqKind k) const { return kind_ == ValueKind::kSequence && seq_->kind == k; }

double Value::numberValue() const {
  return kind_ == ValueKind::kFloat ? f_ : static_cast<double>(i_);
}

bool Value::truthy() const {
  switch (kind_) {
  case ValueKind::kUndefined:
  case ValueKind::kNone:
    return false;
  case ValueKind::kBool:
  case ValueKind::kInt:
    return i_ != 0;
  case ValueKind::kFloat:
    return f_ != 0.0;
  case ValueKind::kString:
    return !s_.empty();
  case ValueKind::kSequence:
    return seq_->kind == SeqKind::kGenerator || !seq_->items.empty();
  case ValueKind::kDict:
    return !dict_->entries.empty();
  case ValueKind::kNamespace:
  case ValueKind::kCallable:
  case ValueKind::kLoop:
    return true;
  }
  return false;
}

std::string Value::typeName() const {
  switch (kind_) {
  case ValueKind::kUndefined:
    return "Undefined";
  case ValueKind::kNone:
    return "NoneType";
  case ValueKind::kBool:
    return "bool";
  case ValueKind::kInt:
    return "int";
  case ValueKind::kFloat:
    return "float";
  case ValueKind::kString:
    return markup_ ? "Markup" : "str";
  case ValueKind::kSequence:
    switch (seq_->kind) {
    case SeqKind::kList:
      return "list";
    case SeqKind::kTuple:
      return "tuple";
    case SeqKind::kRange:
      return "range";
    case SeqKind::kGenerator:
      return "generator";
    case SeqKind::kDictKeys:
      return "dict_keys";
    case SeqKind::kDictValues:
      return "dict_values";
    case SeqKind::kDictItems:
      return "dict_items";
    }
    break;
  case ValueKind::kDict:
    return "dict";
  case ValueKind::kNamespace:
    return "Namespace";
  case ValueKind::kCallable:
    switch (callable_->kind) {
    case CallableKind::kMacro:
      return "Macro";
    case CallableKind::kBuiltin:
      return "function";
    case CallableKind::kBoundMethod:
      return "builtin_function_or_method";
    }
    break;
  case ValueKind::kLoop:
    return "LoopContext";
  }
  return "object";
}

const Value *Dict::find(const Value &key) const { return findEntry(entries, key, pyEquals); }

void Dict::set(Value key, Value value) {
  setEntry(entries, std::move(key), std::move(value), pyEquals);
}

const Value *Namespace::find(const std::string &name) const {
  return findEntry(attrs, name, std::equal_to<>());
}

void Namespace::set(const std::string &name, Value value) {
  setEntry(attrs, name, std::move(value), std::equal_to<>());
}

bool isHashable(const Value &v) {
  switch (v.kind()) {
  case ValueKind::kNone:
  case ValueKind::kBool:
  case ValueKind::kInt:
  case ValueKind::kFloat:
  case ValueKind::kString:
  case ValueKind::kUndefined:
  case ValueKind::kNamespace:
  case ValueKind::kCallable:
  case ValueKind::kLoop:
    return true;
  case ValueKind::kSequence:
    if (v.seq().kind == SeqKind::kTuple) {
      for (const Value &item : v.seq().items)
        if (!isHashable(item))
          return false;
      return true;
    }
    return v.seq().kind == SeqKind::kRange || v.seq().kind == SeqKind::kGenerator;
  case ValueKind::kDict:
    return false;
  }
  return false;
}

namespace {

/// int == float exactly, as Python compares them (no rounding of the int).
bool intEqualsFloat(int64_t i, double f) {
  if (!std::isfinite(f) || std::floor(f) != f)
    return false;
  if (f < -9223372036854775808.0 || f >= 9223372036854775808.0)
    return false;
  return static_cast<int64_t>(f) == i;
}

bool itemsEqual(const std::vector<Value> &a, const std::vector<Value> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!pyEquals(a[i], b[i]))
      return false;
  return true;
}

/// Set equality of two dict key or item views.
bool sameElements(const std::vector<Value> &a, const std::vector<Value> &b) {
  if (a.size() != b.size())
    return false;
  for (const Value &x : a) {
    bool found = false;
    for (const Value &y : b)
      if (pyEquals(x, y)) {
        found = true;
        break;
      }
    if (!found)
      return false;
  }
  return true;
}

} // namespace

bool pyEquals(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) {
    bool af = a.kind() == ValueKind::kFloat, bf = b.kind() == ValueKind::kFloat;
    if (af && bf)
      return a.numberValue() == b.numberValue();
    if (af)
      return intEqualsFloat(b.intValue(), a.numberValue());
    if (bf)
      return intEqualsFloat(a.intValue(), b.numberValue());
    return a.intValue() == b.intValue();
  }
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case ValueKind::kUndefined:
  case ValueKind::kNone:
    return true;
  case ValueKind::kString:
    return a.str() == b.str();
  case ValueKind::kSequence: {
    const Sequence &x = a.seq(), &y = b.seq();
    if (a.seqPtr() == b.seqPtr())
      return true;
    if (x.kind != y.kind)
      return false;
    switch (x.kind) {
    case SeqKind::kList:
    case SeqKind::kTuple:
    case SeqKind::kRange:
      return itemsEqual(x.items, y.items);
    case SeqKind::kDictKeys:
    case SeqKind::kDictItems:
      return sameElements(x.items, y.items);
    case SeqKind::kDictValues:
    case SeqKind::kGenerator:
      return false;
    }
    return false;
  }
  case ValueKind::kDict: {
    const Dict &x = a.dict(), &y = b.dict();
    if (x.entries.size() != y.entries.size())
      return false;
    for (const auto &entry : x.entries) {
      const Value *other = y.find(entry.first);
      if (!other || !pyEquals(entry.second, *other))
        return false;
    }
    return true;
  }
  case ValueKind::kNamespace:
    return &a.ns() == &b.ns();
  case ValueKind::kCallable:
    return &a.callable() == &b.callable();
  case ValueKind::kLoop:
    return &a.loop() == &b.loop();
  default:
    return false;
  }
}

namespace {

const char *opText(CmpOp op) {
  switch (op) {
  case CmpOp::kLt:
    return "<";
  case CmpOp::kLe:
    return "<=";
  case CmpOp::kGt:
    return ">";
  case CmpOp::kGe:
    return ">=";
  }
  return "<";
}

template <typename T>
bool apply(CmpOp op, const T &a, const T &b) {
  switch (op) {
  case CmpOp::kLt:
    return a < b;
  case CmpOp::kLe:
    return a <= b;
  case CmpOp::kGt:
    return a > b;
  case CmpOp::kGe:
    return a >= b;
  }
  return false;
}

} // namespace

StatusOr<bool> pyCompare(const Value &a, const Value &b, CmpOp op) {
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() != ValueKind::kFloat && b.kind() != ValueKind::kFloat)
      return apply(op, a.intValue(), b.intValue());
    return apply(op, a.numberValue(), b.numberValue());
  }
  if (a.isString() && b.isString())
    return apply(op, a.str(), b.str()); // UTF-8 byte order is code point order.
  bool lists = a.isSequence(SeqKind::kList) && b.isSequence(SeqKind::kList);
  bool tuples = a.isSequence(SeqKind::kTuple) && b.isSequence(SeqKind::kTuple);
  if (lists || tuples) {
    const auto &x = a.seq().items, &y = b.seq().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!pyEquals(x[i], y[i]))
        return pyCompare(x[i], y[i], op);
    return apply(op, x.size(), y.size());
  }
  if (a.isUndefined() || b.isUndefined())
    return invalidArgumentError((a.isUndefined() ? a : b).undefinedHint());
  return invalidArgumentError(std::string("'") + opText(op) +
                              "' not supported between instances of '" + a.typeName() + "' and '" +
                              b.typeName() + "'");
}

} // namespace infer::chat::jinja
