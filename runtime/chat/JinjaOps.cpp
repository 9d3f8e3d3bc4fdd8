//===- JinjaOps.cpp - Python operators and lookups on values --------------===//

#include "runtime/chat/JinjaOps.h"

#include "runtime/chat/JinjaFormat.h"
#include "runtime/chat/JinjaParser.h"
#include "runtime/chat/JinjaString.h"
#include "runtime/chat/JinjaUnicode.h"

#include <set>

namespace infer::chat::jinja {
namespace {

// Attribute names Python objects have; the subset callable here is
// isSupportedStrMethod(). Names here but not supported are refused instead of
// being looked up as items.
const std::set<std::string> kStrAttributes = {
    "capitalize",   "casefold",    "center",    "count",      "encode",       "endswith",
    "expandtabs",   "find",        "format",    "format_map", "index",        "isalnum",
    "isalpha",      "isascii",     "isdecimal", "isdigit",    "isidentifier", "islower",
    "isnumeric",    "isprintable", "isspace",   "istitle",    "isupper",      "join",
    "ljust",        "lower",       "lstrip",    "maketrans",  "partition",    "removeprefix",
    "removesuffix", "replace",     "rfind",     "rindex",     "rjust",        "rpartition",
    "rsplit",       "rstrip",      "split",     "splitlines", "startswith",   "strip",
    "swapcase",     "title",       "translate", "upper",      "zfill",        "escape",
    "unescape",     "striptags"};
const std::set<std::string> kDictMutators = {"clear", "pop", "popitem", "setdefault", "update"};
const std::set<std::string> kListMutators = {"append", "clear",  "extend",  "insert",
                                             "pop",    "remove", "reverse", "sort"};
const std::set<std::string> kNumberAttributes = {
    "as_integer_ratio", "bit_count", "bit_length", "conjugate", "denominator", "from_bytes", "imag",
    "numerator",        "real",      "to_bytes",   "fromhex",   "hex",         "is_integer"};

Value bound(const Value &receiver, const std::string &name) {
  auto callable = std::make_shared<Callable>();
  callable->kind = CallableKind::kBoundMethod;
  callable->name = name;
  callable->receiver = receiver;
  return Value::callable(std::move(callable));
}

Status unsupportedAttribute(const Value &object, const std::string &name) {
  return invalidArgumentError("attribute '" + name + "' of " + object.typeName() +
                              " is not supported");
}

Value unsafe(const Value &object, const std::string &name) {
  return Value::undefined("access to attribute '" + name + "' of '" + object.typeName() +
                          "' object is unsafe.");
}

std::string objectRepr(const Value &object) {
  return object.isNone() ? "None" : object.typeName() + " object";
}

Value noAttribute(const Value &object, const std::string &name) {
  return Value::undefined("'" + objectRepr(object) + "' has no attribute '" + name + "'");
}

Value noElement(const Value &object, const Value &key) {
  StatusOr<std::string> shown = pyRepr(key);
  return Value::undefined(objectRepr(object) + " has no element " +
                          (shown.ok() ? *shown : std::string("?")));
}

/// Python's slice.indices(): normalized start, stop for a length and step.
void adjustSlice(int64_t len, const Value &startV, const Value &stopV, int64_t step, int64_t &start,
                 int64_t &stop) {
  auto adjust = [&](const Value &v, bool isStart) {
    if (v.isNone())
      return step < 0 ? (isStart ? len - 1 : -1) : (isStart ? 0 : len);
    int64_t i = v.intValue();
    if (i < 0) {
      i += len;
      if (i < 0)
        i = step < 0 ? -1 : 0;
    } else if (i >= len) {
      i = step < 0 ? len - 1 : len;
    }
    return i;
  };
  start = adjust(startV, true);
  stop = adjust(stopV, false);
}

/// Loop attributes (jinja2's LoopContext).
StatusOr<Value> loopAttribute(const Value &loop, const std::string &name) {
  const LoopState &state = loop.loop();
  int64_t i = state.index0, n = state.length();
  if (name == "index")
    return Value::integer(i + 1);
  if (name == "index0")
    return Value::integer(i);
  if (name == "revindex")
    return Value::integer(n - i);
  if (name == "revindex0")
    return Value::integer(n - i - 1);
  if (name == "first")
    return Value::boolean(i == 0);
  if (name == "last")
    return Value::boolean(i == n - 1);
  if (name == "length")
    return Value::integer(n);
  if (name == "depth")
    return Value::integer(1);
  if (name == "depth0")
    return Value::integer(0);
  if (name == "previtem")
    return i > 0 ? (*state.items)[i - 1] : Value::undefined("there is no previous item");
  if (name == "nextitem")
    return i + 1 < n ? (*state.items)[i + 1] : Value::undefined("there is no next item");
  if (name == "cycle")
    return bound(loop, name);
  if (name == "changed")
    return unsupportedAttribute(loop, name);
  return noAttribute(loop, name);
}

/// The Python attribute `name` of `object`, or nullopt if it has none (then
/// jinja2 falls back to the item).
StatusOr<std::optional<Value>> pythonAttribute(const Value &object, const std::string &name) {
  switch (object.kind()) {
  case ValueKind::kString:
    if (isSupportedStrMethod(name))
      return std::optional<Value>(bound(object, name));
    if (kStrAttributes.count(name))
      return unsupportedAttribute(object, name);
    return std::optional<Value>();
  case ValueKind::kDict:
    if (name == "get" || name == "items" || name == "keys" || name == "values")
      return std::optional<Value>(bound(object, name));
    if (kDictMutators.count(name))
      return std::optional<Value>(unsafe(object, name));
    if (name == "copy" || name == "fromkeys")
      return unsupportedAttribute(object, name);
    return std::optional<Value>();
  case ValueKind::kSequence: {
    SeqKind kind = object.seq().kind;
    if (kind == SeqKind::kList || kind == SeqKind::kTuple || kind == SeqKind::kRange) {
      if (name == "count" || name == "index")
        return std::optional<Value>(bound(object, name));
      if (kind == SeqKind::kList && kListMutators.count(name))
        return std::optional<Value>(unsafe(object, name));
      if (kind == SeqKind::kList && name == "copy")
        return unsupportedAttribute(object, name);
      if (kind == SeqKind::kRange && (name == "start" || name == "stop" || name == "step")) {
        const Sequence &seq = object.seq();
        return std::optional<Value>(Value::integer(name == "start"  ? seq.rangeStart
                                                   : name == "stop" ? seq.rangeStop
                                                                    : seq.rangeStep));
      }
    }
    return std::optional<Value>();
  }
  case ValueKind::kNamespace:
    if (const Value *attr = object.ns().find(name))
      return std::optional<Value>(*attr);
    return std::optional<Value>();
  case ValueKind::kBool:
  case ValueKind::kInt:
  case ValueKind::kFloat:
    if (kNumberAttributes.count(name))
      return unsupportedAttribute(object, name);
    return std::optional<Value>();
  case ValueKind::kCallable:
    if (object.callable().kind == CallableKind::kMacro &&
        (name == "name" || name == "arguments" || name == "defaults" || name == "catch_kwargs" ||
         name == "catch_varargs" || name == "caller"))
      return unsupportedAttribute(object, name);
    return std::optional<Value>();
  default:
    return std::optional<Value>();
  }
}

/// object[key] in Python, or nullopt where Python raises a TypeError or
/// LookupError (jinja2 then tries the attribute, or returns Undefined).
std::optional<Value> pythonItem(const Value &object, const Value &key) {
  bool intKey = key.isInt() || key.isBool();
  switch (object.kind()) {
  case ValueKind::kString: {
    if (!intKey)
      return std::nullopt;
    std::u32string cps = toCodePoints(object.str());
    int64_t n = static_cast<int64_t>(cps.size()), i = key.intValue();
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      return std::nullopt;
    std::string out;
    appendUtf8(out, cps[static_cast<size_t>(i)]);
    return stringLike(object, out);
  }
  case ValueKind::kSequence: {
    const Sequence &seq = object.seq();
    if (!intKey ||
        !(seq.kind == SeqKind::kList || seq.kind == SeqKind::kTuple || seq.kind == SeqKind::kRange))
      return std::nullopt;
    int64_t n = static_cast<int64_t>(seq.items.size()), i = key.intValue();
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      return std::nullopt;
    return seq.items[static_cast<size_t>(i)];
  }
  case ValueKind::kDict:
    if (!isHashable(key))
      return std::nullopt;
    if (const Value *value = object.dict().find(key))
      return *value;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

} // namespace

Status undefinedError(const Value &undefined) {
  return invalidArgumentError(undefined.undefinedHint().empty() ? "value is undefined"
                                                                : undefined.undefinedHint());
}

Value stringLike(const Value &receiver, std::string s) {
  return Value::string(std::move(s), receiver.isMarkup());
}

StatusOr<Value> getAttr(const Value &object, const std::string &name) {
  if (object.isUndefined())
    return undefinedError(object);
  if (object.kind() == ValueKind::kLoop)
    return loopAttribute(object, name);
  ASSIGN_OR_RETURN(std::optional<Value> attr, pythonAttribute(object, name));
  if (attr)
    return *attr;
  if (std::optional<Value> item = pythonItem(object, Value::string(name)))
    return *item;
  return noAttribute(object, name);
}

StatusOr<Value> getItem(const Value &object, const Value &key) {
  if (object.isUndefined())
    return undefinedError(object);
  if (std::optional<Value> item = pythonItem(object, key))
    return *item;
  if (key.isString()) {
    if (object.kind() == ValueKind::kLoop)
      return loopAttribute(object, key.str());
    ASSIGN_OR_RETURN(std::optional<Value> attr, pythonAttribute(object, key.str()));
    if (attr)
      return *attr;
    return noAttribute(object, key.str());
  }
  return noElement(object, key);
}

StatusOr<Value> getSlice(const Value &object, const Value &startV, const Value &stopV,
                         const Value &stepV) {
  // jinja2 compiles x[a:b] to a plain Python subscript (not through the
  // sandbox's getitem), so failures raise instead of giving Undefined.
  if (object.isUndefined())
    return undefinedError(object);
  bool isStr = object.isString();
  bool isSeq = object.isSequence(SeqKind::kList) || object.isSequence(SeqKind::kTuple) ||
               object.isSequence(SeqKind::kRange);
  if (object.isDict())
    return invalidArgumentError("unhashable type: 'slice'");
  if (!isStr && !isSeq)
    return invalidArgumentError("'" + object.typeName() + "' object is not subscriptable");
  for (const Value *bound : {&startV, &stopV, &stepV})
    if (!bound->isNone() && !bound->isInt() && !bound->isBool())
      return invalidArgumentError(
          "slice indices must be integers or None or have an __index__ method");
  int64_t step = stepV.isNone() ? 1 : stepV.intValue();
  if (step == 0)
    return invalidArgumentError("slice step cannot be zero");
  std::u32string cps;
  if (isStr)
    cps = toCodePoints(object.str());
  int64_t len =
      isStr ? static_cast<int64_t>(cps.size()) : static_cast<int64_t>(object.seq().items.size());
  int64_t start, stop;
  adjustSlice(len, startV, stopV, step, start, stop);
  if (isStr)
    return stringLike(object, pySliceIndices(cps, start, stop, step));
  const Sequence &seq = object.seq();
  std::vector<Value> items;
  if (step > 0)
    for (int64_t i = start; i < stop; i += step)
      items.push_back(seq.items[static_cast<size_t>(i)]);
  else
    for (int64_t i = start; i > stop; i += step)
      items.push_back(seq.items[static_cast<size_t>(i)]);
  if (seq.kind == SeqKind::kRange) {
    int64_t count = static_cast<int64_t>(items.size());
    int64_t first = seq.rangeStart + start * seq.rangeStep;
    int64_t newStep = seq.rangeStep * step;
    return Value::range(first, first + count * newStep, newStep, std::move(items));
  }
  return Value::sequence(seq.kind, std::move(items));
}

StatusOr<std::vector<Value>> iterate(const Value &value) {
  switch (value.kind()) {
  case ValueKind::kUndefined:
    return std::vector<Value>();
  case ValueKind::kString: {
    std::vector<Value> chars;
    for (char32_t c : toCodePoints(value.str())) {
      std::string s;
      appendUtf8(s, c);
      chars.push_back(Value::string(std::move(s)));
    }
    return chars;
  }
  case ValueKind::kSequence: {
    Sequence &seq = *value.seqPtr();
    if (seq.kind != SeqKind::kGenerator)
      return seq.items;
    std::vector<Value> rest(seq.items.begin() + static_cast<std::ptrdiff_t>(seq.consumed),
                            seq.items.end());
    seq.consumed = seq.items.size();
    return rest;
  }
  case ValueKind::kDict: {
    std::vector<Value> keys;
    for (const auto &entry : value.dict().entries)
      keys.push_back(entry.first);
    return keys;
  }
  default:
    return invalidArgumentError("'" + value.typeName() + "' object is not iterable");
  }
}

StatusOr<int64_t> length(const Value &value) {
  switch (value.kind()) {
  case ValueKind::kUndefined:
    return 0;
  case ValueKind::kString:
    return static_cast<int64_t>(codePointCount(value.str()));
  case ValueKind::kSequence:
    if (value.seq().kind != SeqKind::kGenerator)
      return static_cast<int64_t>(value.seq().items.size());
    break;
  case ValueKind::kDict:
    return static_cast<int64_t>(value.dict().entries.size());
  case ValueKind::kLoop:
    return value.loop().length();
  default:
    break;
  }
  return invalidArgumentError("object of type '" + value.typeName() + "' has no len()");
}

StatusOr<bool> contains(const Value &container, const Value &item) {
  switch (container.kind()) {
  case ValueKind::kUndefined:
    return false;
  case ValueKind::kString:
    if (!item.isString())
      return invalidArgumentError("'in <string>' requires string as left operand, not " +
                                  item.typeName());
    return container.str().find(item.str()) != std::string::npos;
  case ValueKind::kSequence: {
    Sequence &seq = *container.seqPtr();
    size_t begin = seq.kind == SeqKind::kGenerator ? seq.consumed : 0;
    for (size_t i = begin; i < seq.items.size(); ++i) {
      if (pyEquals(seq.items[i], item)) {
        if (seq.kind == SeqKind::kGenerator)
          seq.consumed = i + 1;
        return true;
      }
    }
    if (seq.kind == SeqKind::kGenerator)
      seq.consumed = seq.items.size();
    return false;
  }
  case ValueKind::kDict:
    if (!isHashable(item))
      return invalidArgumentError("unhashable type: '" + item.typeName() + "'");
    return container.dict().find(item) != nullptr;
  default:
    return invalidArgumentError("argument of type '" + container.typeName() + "' is not iterable");
  }
}

} // namespace infer::chat::jinja
