//===- JinjaBuiltins.cpp - tests, methods and global functions ------------===//

#include "runtime/chat/JinjaBuiltins.h"

#include "runtime/chat/JinjaFormat.h"
#include "runtime/chat/JinjaOps.h"
#include "runtime/chat/JinjaString.h"

#include <ctime>

namespace infer::chat::jinja {

StatusOr<std::vector<std::optional<Value>>> bindArgs(const std::string &function,
                                                     const CallArgs &call,
                                                     std::initializer_list<const char *> names,
                                                     size_t required) {
  std::vector<const char *> params(names);
  std::vector<std::optional<Value>> bound(params.size());
  if (call.args.size() > params.size())
    return invalidArgumentError(function + "() takes at most " + std::to_string(params.size()) +
                                " argument(s) (" + std::to_string(call.args.size()) + " given)");
  for (size_t i = 0; i < call.args.size(); ++i)
    bound[i] = call.args[i];
  for (const auto &[key, value] : call.kwargs) {
    size_t i = 0;
    while (i < params.size() && key != params[i])
      ++i;
    if (i == params.size())
      return invalidArgumentError(function + "() got an unexpected keyword argument '" + key + "'");
    if (bound[i])
      return invalidArgumentError(function + "() got multiple values for argument '" + key + "'");
    bound[i] = value;
  }
  for (size_t i = 0; i < required; ++i)
    if (!bound[i])
      return invalidArgumentError(function + "() missing required argument '" + params[i] + "'");
  return bound;
}

namespace {

StatusOr<bool> sameAs(const Value &a, const Value &b) {
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case ValueKind::kNone:
    return true;
  case ValueKind::kBool:
    return a.boolValue() == b.boolValue();
  case ValueKind::kUndefined:
    return false;
  case ValueKind::kInt:
    // CPython caches small ints; identity of others depends on the run.
    if (a.intValue() >= -5 && a.intValue() <= 256 && b.intValue() >= -5 && b.intValue() <= 256)
      return a.intValue() == b.intValue();
    break;
  case ValueKind::kSequence:
    return a.seqPtr() == b.seqPtr();
  case ValueKind::kDict:
    return a.dictPtr() == b.dictPtr();
  case ValueKind::kNamespace:
    return &a.ns() == &b.ns();
  case ValueKind::kCallable:
    return &a.callable() == &b.callable();
  default:
    break;
  }
  return invalidArgumentError("'sameas' on " + a.typeName() +
                              " values is not supported (Python object identity)");
}

StatusOr<bool> compareTest(const std::string &name, const Value &a, const Value &b) {
  if (name == "eq" || name == "equalto" || name == "==")
    return pyEquals(a, b);
  if (name == "ne" || name == "!=")
    return !pyEquals(a, b);
  CmpOp op = (name == "lt" || name == "lessthan" || name == "<")      ? CmpOp::kLt
             : (name == "le" || name == "<=")                         ? CmpOp::kLe
             : (name == "gt" || name == "greaterthan" || name == ">") ? CmpOp::kGt
                                                                      : CmpOp::kGe;
  return pyCompare(a, b, op);
}

bool isIterable(const Value &v) {
  return v.isUndefined() || v.isString() || v.isSequence() || v.isDict() ||
         v.kind() == ValueKind::kLoop;
}

bool isPySequence(const Value &v) {
  if (v.isUndefined() || v.isString() || v.isDict())
    return true;
  if (!v.isSequence())
    return false;
  SeqKind k = v.seq().kind;
  return k == SeqKind::kList || k == SeqKind::kTuple || k == SeqKind::kRange;
}

StatusOr<Value> strMethod(const Value &self, const std::string &name, const CallArgs &call) {
  const std::string &s = self.str();
  auto optionalStr = [&](const std::optional<Value> &v,
                         const char *what) -> StatusOr<std::optional<std::string>> {
    if (!v || v->isNone())
      return std::optional<std::string>();
    if (!v->isString())
      return invalidArgumentError(std::string(what) + " arg must be None or str");
    return std::optional<std::string>(v->str());
  };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"chars"}, 0));
    ASSIGN_OR_RETURN(std::optional<std::string> chars, optionalStr(p[0], name.c_str()));
    return stringLike(self, pyStrip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"sep", "maxsplit"}, 0));
    ASSIGN_OR_RETURN(std::optional<std::string> sep, optionalStr(p[0], "sep"));
    if (p[1] && !p[1]->isInt() && !p[1]->isBool())
      return invalidArgumentError("maxsplit must be an integer");
    ASSIGN_OR_RETURN(std::vector<std::string> parts,
                     pySplit(s, sep, p[1] ? p[1]->intValue() : -1, name == "rsplit"));
    std::vector<Value> items;
    for (std::string &part : parts)
      items.push_back(stringLike(self, std::move(part)));
    return Value::list(std::move(items));
  }
  if (name == "splitlines") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"keepends"}, 0));
    std::vector<Value> items;
    for (std::string &line : pySplitLines(s, p[0] && p[0]->truthy()))
      items.push_back(stringLike(self, std::move(line)));
    return Value::list(std::move(items));
  }
  if (name == "startswith" || name == "endswith") {
    if (call.args.size() != 1 || !call.kwargs.empty())
      return invalidArgumentError(name + "() with start/end arguments is not supported");
    std::vector<Value> options;
    if (call.args[0].isString())
      options.push_back(call.args[0]);
    else if (call.args[0].isSequence(SeqKind::kTuple))
      options = call.args[0].seq().items;
    else
      return invalidArgumentError(name + " first arg must be str or a tuple of str, not " +
                                  call.args[0].typeName());
    for (const Value &option : options) {
      if (!option.isString())
        return invalidArgumentError("tuple for " + name + " must only contain str, not " +
                                    option.typeName());
      const std::string &x = option.str();
      bool hit = x.size() <= s.size() &&
                 (name == "startswith" ? s.compare(0, x.size(), x) == 0
                                       : s.compare(s.size() - x.size(), x.size(), x) == 0);
      if (hit)
        return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    if (!call.args.empty() || !call.kwargs.empty())
      return invalidArgumentError(name + "() takes no arguments");
    StatusOr<std::string> out = name == "upper"   ? pyUpper(s)
                                : name == "lower" ? pyLower(s)
                                : name == "title" ? pyTitle(s)
                                                  : pyCapitalize(s);
    if (!out.ok())
      return out.status();
    return stringLike(self, *out);
  }
  if (name == "replace") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"old", "new", "count"}, 2));
    if (!p[0]->isString() || !p[1]->isString())
      return invalidArgumentError("replace() arguments must be str");
    if (p[2] && !p[2]->isInt())
      return invalidArgumentError("replace() count must be an integer");
    std::string old = p[0]->str(), with = p[1]->str();
    if (self.isMarkup()) { // markupsafe escapes the arguments
      old = p[0]->isMarkup() ? old : htmlEscape(old);
      with = p[1]->isMarkup() ? with : htmlEscape(with);
    }
    return stringLike(self, pyReplace(s, old, with, p[2] ? p[2]->intValue() : -1));
  }
  if (name == "find" || name == "rfind" || name == "count") {
    if (call.args.size() != 1 || !call.kwargs.empty())
      return invalidArgumentError(name + "() with start/end arguments is not supported");
    if (!call.args[0].isString())
      return invalidArgumentError("must be str, not " + call.args[0].typeName());
    if (name == "count")
      return Value::integer(pyCount(s, call.args[0].str()));
    return Value::integer(pyFind(s, call.args[0].str(), name == "rfind"));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"affix"}, 1));
    if (!p[0]->isString())
      return invalidArgumentError(name + "() argument must be str, not " + p[0]->typeName());
    const std::string &x = p[0]->str();
    if (name == "removeprefix" && s.compare(0, x.size(), x) == 0)
      return stringLike(self, s.substr(x.size()));
    if (name == "removesuffix" && !x.empty() && x.size() <= s.size() &&
        s.compare(s.size() - x.size(), x.size(), x) == 0)
      return stringLike(self, s.substr(0, s.size() - x.size()));
    return self;
  }
  if (name == "join") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"iterable"}, 1));
    ASSIGN_OR_RETURN(std::vector<Value> items, iterate(*p[0]));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].isString())
        return invalidArgumentError("sequence item " + std::to_string(i) +
                                    ": expected str instance, " + items[i].typeName() + " found");
      if (i)
        out += s;
      out += self.isMarkup() && !items[i].isMarkup() ? htmlEscape(items[i].str()) : items[i].str();
    }
    return stringLike(self, std::move(out));
  }
  return invalidArgumentError("method '" + name + "' of str is not supported");
}

StatusOr<Value> dictMethod(const Value &self, const std::string &name, const CallArgs &call) {
  if (name == "get") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"key", "default"}, 1));
    if (!isHashable(*p[0]))
      return invalidArgumentError("unhashable type: '" + p[0]->typeName() + "'");
    if (const Value *value = self.dict().find(*p[0]))
      return *value;
    return p[1] ? *p[1] : Value::none();
  }
  if (!call.args.empty() || !call.kwargs.empty())
    return invalidArgumentError(name + "() takes no arguments");
  std::vector<Value> items;
  for (const auto &entry : self.dict().entries) {
    if (name == "items")
      items.push_back(Value::tuple({entry.first, entry.second}));
    else
      items.push_back(name == "keys" ? entry.first : entry.second);
  }
  SeqKind kind = name == "items"  ? SeqKind::kDictItems
                 : name == "keys" ? SeqKind::kDictKeys
                                  : SeqKind::kDictValues;
  return Value::sequence(kind, std::move(items));
}

std::string timeNow(const std::string &format) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string buf(format.size() * 4 + 64, '\0');
  while (true) {
    size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &local);
    if (n > 0 || format.empty() || buf.size() > 65536)
      return buf.substr(0, n);
    buf.resize(buf.size() * 2);
  }
}

} // namespace

StatusOr<bool> applyTest(const std::string &name, const Value &v, const CallArgs &call) {
  auto arg = [&](const char *param) -> StatusOr<Value> {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {param}, 1));
    return *p[0];
  };
  auto noArgs = [&]() -> Status {
    if (!call.args.empty() || !call.kwargs.empty())
      return invalidArgumentError("test '" + name + "' takes no arguments");
    return okStatus();
  };
  if (name == "defined" || name == "undefined") {
    RETURN_IF_ERROR(noArgs());
    return v.isUndefined() == (name == "undefined");
  }
  if (name == "none" || name == "boolean" || name == "true" || name == "false" ||
      name == "integer" || name == "float" || name == "number" || name == "string" ||
      name == "mapping" || name == "iterable" || name == "sequence" || name == "callable") {
    RETURN_IF_ERROR(noArgs());
    if (name == "none")
      return v.isNone();
    if (name == "boolean")
      return v.isBool();
    if (name == "true" || name == "false")
      return v.isBool() && v.boolValue() == (name == "true");
    if (name == "integer")
      return v.isInt();
    if (name == "float")
      return v.kind() == ValueKind::kFloat;
    if (name == "number")
      return v.isNumber();
    if (name == "string")
      return v.isString();
    if (name == "mapping")
      return v.isDict();
    if (name == "iterable")
      return isIterable(v);
    if (name == "sequence")
      return isPySequence(v);
    return v.kind() == ValueKind::kCallable || v.isUndefined() || v.kind() == ValueKind::kLoop;
  }
  if (name == "odd" || name == "even") {
    RETURN_IF_ERROR(noArgs());
    ASSIGN_OR_RETURN(Value mod, binaryOp("%", v, Value::integer(2)));
    return pyEquals(mod, Value::integer(name == "odd" ? 1 : 0));
  }
  if (name == "divisibleby") {
    ASSIGN_OR_RETURN(Value num, arg("num"));
    ASSIGN_OR_RETURN(Value mod, binaryOp("%", v, num));
    return pyEquals(mod, Value::integer(0));
  }
  if (name == "lower" || name == "upper") {
    RETURN_IF_ERROR(noArgs());
    ASSIGN_OR_RETURN(std::string s, pyStr(v));
    return name == "lower" ? pyIsLower(s) : pyIsUpper(s);
  }
  if (name == "in") {
    ASSIGN_OR_RETURN(Value seq, arg("seq"));
    return contains(seq, v);
  }
  if (name == "sameas") {
    ASSIGN_OR_RETURN(Value other, arg("other"));
    return sameAs(v, other);
  }
  ASSIGN_OR_RETURN(Value other, arg("other"));
  return compareTest(name, v, other);
}

StatusOr<Value> callMethod(const Callable &method, const CallArgs &call) {
  const Value &self = method.receiver;
  const std::string &name = method.name;
  switch (self.kind()) {
  case ValueKind::kString:
    return strMethod(self, name, call);
  case ValueKind::kDict:
    return dictMethod(self, name, call);
  case ValueKind::kSequence: {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"value"}, 1));
    const std::vector<Value> &items = self.seq().items;
    int64_t count = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      if (pyEquals(items[i], *p[0])) {
        if (name == "index")
          return Value::integer(static_cast<int64_t>(i));
        ++count;
      }
    }
    if (name == "index")
      return invalidArgumentError("value is not in " + self.typeName());
    return Value::integer(count);
  }
  case ValueKind::kLoop: {
    if (call.args.empty())
      return invalidArgumentError("no items for cycling given");
    const LoopState &loop = self.loop();
    return call.args[static_cast<size_t>(loop.index0) % call.args.size()];
  }
  default:
    return invalidArgumentError("method '" + name + "' of " + self.typeName() +
                                " is not supported");
  }
}

Value globalFunction(const std::string &name) {
  auto callable = std::make_shared<Callable>();
  callable->kind = CallableKind::kBuiltin;
  callable->name = name;
  return Value::callable(std::move(callable));
}

StatusOr<Value> callGlobal(const std::string &name, const CallArgs &call) {
  if (name == "raise_exception") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"message"}, 1));
    ASSIGN_OR_RETURN(std::string message, pyStr(*p[0]));
    return Status(kRaisedCode, message);
  }
  if (name == "strftime_now") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"format"}, 1));
    if (!p[0]->isString())
      return invalidArgumentError("strftime() argument 1 must be str, not " + p[0]->typeName());
    if (p[0]->str().find("%f") != std::string::npos)
      return invalidArgumentError("strftime_now('%f') is not supported");
    return Value::string(timeNow(p[0]->str()));
  }
  if (name == "namespace" || name == "dict") {
    auto ns = std::make_shared<Namespace>();
    auto dict = std::make_shared<Dict>();
    if (call.args.size() > 1)
      return invalidArgumentError(name + "() expected at most 1 positional argument");
    if (call.args.size() == 1) {
      const Value &init = call.args[0];
      if (init.isDict()) {
        for (const auto &entry : init.dict().entries)
          dict->set(entry.first, entry.second);
      } else {
        ASSIGN_OR_RETURN(std::vector<Value> pairs, iterate(init));
        for (const Value &pair : pairs) {
          ASSIGN_OR_RETURN(std::vector<Value> kv, iterate(pair));
          if (kv.size() != 2)
            return invalidArgumentError(name + "() sequence elements must have length 2");
          if (!isHashable(kv[0]))
            return invalidArgumentError("unhashable type: '" + kv[0].typeName() + "'");
          dict->set(kv[0], kv[1]);
        }
      }
    }
    for (const auto &[key, value] : call.kwargs)
      dict->set(Value::string(key), value);
    if (name == "dict")
      return Value::dict(std::move(dict));
    for (const auto &entry : dict->entries) {
      if (!entry.first.isString())
        return invalidArgumentError("namespace() keys must be strings");
      ns->set(entry.first.str(), entry.second);
    }
    return Value::ns(std::move(ns));
  }
  if (name == "range") {
    if (!call.kwargs.empty() || call.args.empty() || call.args.size() > 3)
      return invalidArgumentError("range() takes 1 to 3 positional arguments");
    for (const Value &a : call.args)
      if (!a.isInt() && !a.isBool())
        return invalidArgumentError("'" + a.typeName() +
                                    "' object cannot be interpreted as an integer");
    int64_t start = call.args.size() == 1 ? 0 : call.args[0].intValue();
    int64_t stop = call.args.size() == 1 ? call.args[0].intValue() : call.args[1].intValue();
    int64_t step = call.args.size() == 3 ? call.args[2].intValue() : 1;
    if (step == 0)
      return invalidArgumentError("range() arg 3 must not be zero");
    std::vector<Value> items;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (items.size() >= 100000) // jinja2's sandbox MAX_RANGE
        return invalidArgumentError("Range too big. The sandbox blocks ranges larger than "
                                    "MAX_RANGE (100000).");
      items.push_back(Value::integer(i));
    }
    return Value::range(start, stop, step, std::move(items));
  }
  return invalidArgumentError("function '" + name + "' is not supported");
}

} // namespace infer::chat::jinja
