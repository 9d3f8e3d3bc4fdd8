//===- JinjaFilters.cpp - jinja2's filters, as transformers configures them ===//
//
// With autoescape off, as in transformers: join, replace and `~` return
// plain str; only `safe`/`escape` make Markup. Filters that return
// generators in jinja2 (map, select*, reject*, unique, items, reverse)
// return kGenerator sequences, so `|length` on them fails as it does there.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/JinjaBuiltins.h"

#include "runtime/chat/JinjaFormat.h"
#include "runtime/chat/JinjaOps.h"
#include "runtime/chat/JinjaString.h"
#include "runtime/chat/JinjaUnicode.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace infer::chat::jinja {
namespace {

Value generator(std::vector<Value> items) {
  return Value::sequence(SeqKind::kGenerator, std::move(items));
}

/// jinja2's soft_str: strings (and Markup) as they are, others str()'d.
StatusOr<Value> softStr(const Value &v) {
  if (v.isString())
    return v;
  ASSIGN_OR_RETURN(std::string s, pyStr(v));
  return Value::string(std::move(s));
}

bool isTrue(const std::optional<Value> &v) { return v && v->truthy(); }

/// make_attrgetter: "a.b.0" looks up item a, then b, then index 0.
StatusOr<Value> lookupPath(Value item, const Value &attribute, const std::optional<Value> &dflt) {
  std::vector<Value> parts;
  if (attribute.isString()) {
    std::string path = attribute.str();
    size_t start = 0;
    while (true) {
      size_t dot = path.find('.', start);
      std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
      bool digits = !part.empty() && std::all_of(part.begin(), part.end(),
                                                 [](char c) { return c >= '0' && c <= '9'; });
      parts.push_back(digits ? Value::integer(std::strtoll(part.c_str(), nullptr, 10))
                             : Value::string(part));
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
  } else if (!attribute.isNone()) {
    parts.push_back(attribute);
  }
  for (const Value &part : parts) {
    ASSIGN_OR_RETURN(item, getItem(item, part));
    if (dflt && !dflt->isNone() && item.isUndefined())
      item = *dflt;
  }
  return item;
}

/// ignore_case: lowercases strings for case-insensitive comparisons.
StatusOr<Value> ignoreCase(const Value &v) {
  if (!v.isString())
    return v;
  ASSIGN_OR_RETURN(std::string lower, pyLower(v.str()));
  return Value::string(std::move(lower));
}

/// The sort key of `item`: its attribute (if given), lowercased unless
/// case-sensitive.
StatusOr<Value> sortKey(const Value &item, const std::optional<Value> &attribute,
                        bool caseSensitive) {
  Value key = item;
  if (attribute && !attribute->isNone()) {
    if (attribute->isString() && attribute->str().find(',') != std::string::npos)
      return invalidArgumentError("sorting by several attributes is not supported");
    ASSIGN_OR_RETURN(key, lookupPath(item, *attribute, std::nullopt));
  }
  if (!caseSensitive)
    return ignoreCase(key);
  return key;
}

/// Python's sorted() on (key, item) pairs: the items as a list, in a stable
/// order of their keys (`reverse` keeps equal items in order).
StatusOr<Value> sortedItems(std::vector<std::pair<Value, Value>> keyed, bool reverse) {
  Status error;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto &x, const auto &y) {
    if (!error.ok())
      return false;
    StatusOr<bool> less =
        reverse ? pyCompare(y.first, x.first, CmpOp::kLt) : pyCompare(x.first, y.first, CmpOp::kLt);
    if (!less.ok()) {
      error = less.status();
      return false;
    }
    return *less;
  });
  RETURN_IF_ERROR(error);
  std::vector<Value> out;
  for (auto &entry : keyed)
    out.push_back(std::move(entry.second));
  return Value::list(std::move(out));
}

StatusOr<Value> sortFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("sort", call, {"reverse", "case_sensitive", "attribute"}, 0));
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value &item : items) {
    ASSIGN_OR_RETURN(Value key, sortKey(item, p[2], isTrue(p[1])));
    keyed.emplace_back(key, item);
  }
  return sortedItems(std::move(keyed), isTrue(p[0]));
}

StatusOr<Value> dictsortFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("dictsort", call, {"case_sensitive", "by", "reverse"}, 0));
  if (!input.isDict())
    return invalidArgumentError("dictsort needs a dict, not " + input.typeName());
  std::string by = p[1] && p[1]->isString() ? p[1]->str() : "key";
  if (p[1] && !(by == "key" || by == "value"))
    return invalidArgumentError("You can only sort by either \"key\" or \"value\"");
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto &entry : input.dict().entries) {
    const Value &k = by == "key" ? entry.first : entry.second;
    ASSIGN_OR_RETURN(Value key, isTrue(p[0]) ? StatusOr<Value>(k) : ignoreCase(k));
    keyed.emplace_back(key, Value::tuple({entry.first, entry.second}));
  }
  return sortedItems(std::move(keyed), isTrue(p[2]));
}

StatusOr<Value> uniqueFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("unique", call, {"case_sensitive", "attribute"}, 0));
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> seen, out;
  for (const Value &item : items) {
    ASSIGN_OR_RETURN(Value key, sortKey(item, p[1], isTrue(p[0])));
    if (!isHashable(key))
      return invalidArgumentError("unhashable type: '" + key.typeName() + "'");
    if (std::none_of(seen.begin(), seen.end(), [&](const Value &s) { return pyEquals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return generator(std::move(out));
}

StatusOr<Value> minMaxFilter(const Value &input, const CallArgs &call, bool max) {
  ASSIGN_OR_RETURN(auto p, bindArgs(max ? "max" : "min", call, {"case_sensitive", "attribute"}, 0));
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  if (items.empty())
    return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  ASSIGN_OR_RETURN(Value bestKey, sortKey(items[0], p[1], isTrue(p[0])));
  for (size_t i = 1; i < items.size(); ++i) {
    ASSIGN_OR_RETURN(Value key, sortKey(items[i], p[1], isTrue(p[0])));
    ASSIGN_OR_RETURN(bool better, pyCompare(key, bestKey, max ? CmpOp::kGt : CmpOp::kLt));
    if (better) {
      best = i;
      bestKey = key;
    }
  }
  return items[best];
}

/// select / reject / selectattr / rejectattr.
StatusOr<Value> selectFilter(const Value &input, const CallArgs &call, bool attr, bool keep) {
  if (!input.truthy())
    return generator({});
  size_t off = attr ? 1 : 0;
  if (attr && call.args.empty())
    return invalidArgumentError("Missing parameter for attribute name");
  CallArgs testArgs;
  std::string test;
  if (call.args.size() > off) {
    if (!call.args[off].isString())
      return invalidArgumentError("a test name must be a string");
    test = call.args[off].str();
    testArgs.args.assign(call.args.begin() + static_cast<std::ptrdiff_t>(off + 1), call.args.end());
    testArgs.kwargs = call.kwargs;
  }
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> out;
  for (const Value &item : items) {
    Value subject = item;
    if (attr) {
      ASSIGN_OR_RETURN(subject, lookupPath(item, call.args[0], std::nullopt));
    }
    bool passed;
    if (test.empty()) {
      passed = subject.truthy();
    } else {
      ASSIGN_OR_RETURN(passed, applyTest(test, subject, testArgs));
    }
    if (passed == keep)
      out.push_back(item);
  }
  return generator(std::move(out));
}

StatusOr<Value> mapFilter(const Value &input, const CallArgs &call) {
  if (!input.truthy())
    return generator({});
  std::optional<Value> attribute, dflt;
  std::string filter;
  CallArgs filterArgs;
  if (call.args.empty()) {
    for (const auto &[key, value] : call.kwargs) {
      if (key == "attribute")
        attribute = value;
      else if (key == "default")
        dflt = value;
      else
        return invalidArgumentError("Unexpected keyword argument '" + key + "'");
    }
    if (!attribute)
      return invalidArgumentError("map requires a filter argument");
  } else {
    if (!call.args[0].isString())
      return invalidArgumentError("map's filter name must be a string");
    filter = call.args[0].str();
    filterArgs.args.assign(call.args.begin() + 1, call.args.end());
    filterArgs.kwargs = call.kwargs;
  }
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::vector<Value> out;
  for (const Value &item : items) {
    if (attribute) {
      ASSIGN_OR_RETURN(Value v, lookupPath(item, *attribute, dflt));
      out.push_back(std::move(v));
    } else {
      ASSIGN_OR_RETURN(Value v, applyFilter(filter, item, filterArgs));
      out.push_back(std::move(v));
    }
  }
  return generator(std::move(out));
}

StatusOr<Value> joinFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("join", call, {"d", "attribute"}, 0));
  std::string separator;
  if (p[0]) {
    ASSIGN_OR_RETURN(separator, pyStr(*p[0]));
  }
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (p[1] && !p[1]->isNone()) {
      ASSIGN_OR_RETURN(item, lookupPath(item, *p[1], std::nullopt));
    }
    ASSIGN_OR_RETURN(std::string s, pyStr(item));
    if (i)
      out += separator;
    out += s;
  }
  return Value::string(std::move(out));
}

StatusOr<Value> tojsonFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(
      auto p, bindArgs("tojson", call, {"ensure_ascii", "indent", "separators", "sort_keys"}, 0));
  JsonOptions options;
  options.ensureAscii = isTrue(p[0]);
  if (p[1] && !p[1]->isNone()) {
    if (p[1]->isString())
      options.indent = p[1]->str();
    else if (p[1]->isInt() || p[1]->isBool())
      options.indent =
          std::string(static_cast<size_t>(std::max<int64_t>(0, p[1]->intValue())), ' ');
    else
      return invalidArgumentError("tojson indent must be an int or a string");
  }
  if (p[2] && !p[2]->isNone()) {
    const Value &sep = *p[2];
    if (!sep.isSequence() || sep.seq().items.size() != 2 || !sep.seq().items[0].isString() ||
        !sep.seq().items[1].isString())
      return invalidArgumentError("tojson separators must be a pair of strings");
    options.itemSeparator = sep.seq().items[0].str();
    options.keySeparator = sep.seq().items[1].str();
  }
  options.sortKeys = isTrue(p[3]);
  ASSIGN_OR_RETURN(std::string json, toJson(input, options));
  return Value::string(std::move(json));
}

StatusOr<Value> indentFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("indent", call, {"width", "first", "blank"}, 0));
  if (!input.isString()) {
    if (input.isUndefined())
      return undefinedError(input);
    return invalidArgumentError("unsupported operand type(s) for +=: '" + input.typeName() +
                                "' and 'str'");
  }
  std::string indention;
  if (!p[0])
    indention = "    ";
  else if (p[0]->isString())
    indention = p[0]->str();
  else if (p[0]->isInt())
    indention = std::string(static_cast<size_t>(std::max<int64_t>(0, p[0]->intValue())), ' ');
  else
    return invalidArgumentError("indent width must be an int or a string");
  // jinja2 appends a newline first, then splits with str.splitlines().
  std::vector<std::string> lines = pySplitLines(input.str() + "\n", false);
  std::string out;
  if (isTrue(p[2])) {
    for (size_t i = 0; i < lines.size(); ++i)
      out += (i ? "\n" + indention : "") + lines[i];
  } else {
    out = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i)
      out += "\n" + (lines[i].empty() ? lines[i] : indention + lines[i]);
  }
  if (isTrue(p[1]))
    out = indention + out;
  return stringLike(input, std::move(out));
}

StatusOr<Value> reverseFilter(const Value &input) {
  if (input.isString()) {
    std::u32string cps = toCodePoints(input.str());
    std::reverse(cps.begin(), cps.end());
    return stringLike(input, toUtf8(cps));
  }
  bool generatorInput = input.isSequence(SeqKind::kGenerator);
  ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
  std::reverse(items.begin(), items.end());
  // reversed() of a generator fails, and jinja2 falls back to a list.
  return generatorInput ? Value::list(std::move(items)) : generator(std::move(items));
}

/// Python's float() of a str; nullopt when it is not a float literal.
std::optional<double> parsePyFloat(const std::string &text) {
  std::string s = pyStrip(text, std::nullopt, true, true), clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      bool between = i > 0 && i + 1 < s.size() &&
                     std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                     std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!between)
        return std::nullopt;
      continue;
    }
    clean.push_back(s[i]);
  }
  if (clean.empty() || clean.find_first_of("xXpP(") != std::string::npos)
    return std::nullopt;
  char *end = nullptr;
  double value = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size())
    return std::nullopt;
  return value;
}

/// Python's int() of a str in `base`; nullopt when invalid.
std::optional<int64_t> parsePyInt(const std::string &text, int64_t base) {
  std::string s = pyStrip(text, std::nullopt, true, true);
  if (base < 2 || base > 36)
    return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    negative = s[i++] == '-';
  if (i >= s.size())
    return std::nullopt;
  int64_t value = 0;
  bool lastUnderscore = true;
  for (; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (lastUnderscore)
        return std::nullopt;
      lastUnderscore = true;
      continue;
    }
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    int64_t digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : 99;
    if (digit >= base)
      return std::nullopt;
    if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, digit, &value))
      return std::nullopt;
    lastUnderscore = false;
  }
  if (lastUnderscore)
    return std::nullopt;
  return negative ? -value : value;
}

StatusOr<Value> intFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("int", call, {"default", "base"}, 0));
  Value dflt = p[0] ? *p[0] : Value::integer(0);
  int64_t base = p[1] && p[1]->isInt() ? p[1]->intValue() : 10;
  if (input.isUndefined())
    return undefinedError(input);
  if (input.isInt() || input.isBool())
    return Value::integer(input.intValue());
  if (input.kind() == ValueKind::kFloat) {
    double f = std::trunc(input.numberValue());
    if (!std::isfinite(f) || std::fabs(f) >= 9.2e18)
      return dflt;
    return Value::integer(static_cast<int64_t>(f));
  }
  if (input.isString()) {
    if (std::optional<int64_t> i = parsePyInt(input.str(), base))
      return Value::integer(*i);
    if (std::optional<double> f = parsePyFloat(input.str()))
      if (std::isfinite(*f) && std::fabs(*f) < 9.2e18)
        return Value::integer(static_cast<int64_t>(std::trunc(*f)));
  }
  return dflt;
}

StatusOr<Value> floatFilter(const Value &input, const CallArgs &call) {
  ASSIGN_OR_RETURN(auto p, bindArgs("float", call, {"default"}, 0));
  if (input.isUndefined())
    return undefinedError(input);
  if (input.isNumber())
    return Value::floating(input.numberValue());
  if (input.isString())
    if (std::optional<double> f = parsePyFloat(input.str()))
      return Value::floating(*f);
  return p[0] ? *p[0] : Value::floating(0.0);
}

StatusOr<Value> caseFilter(const std::string &name, const Value &input) {
  ASSIGN_OR_RETURN(Value s, softStr(input));
  StatusOr<std::string> out = name == "upper"        ? pyUpper(s.str())
                              : name == "lower"      ? pyLower(s.str())
                              : name == "capitalize" ? pyCapitalize(s.str())
                                                     : jinjaTitle(s.str());
  if (!out.ok())
    return out.status();
  return stringLike(s, *out);
}

} // namespace

StatusOr<Value> applyFilter(const std::string &name, const Value &input, const CallArgs &call) {
  auto noArgs = [&]() -> Status {
    if (!call.args.empty() || !call.kwargs.empty())
      return invalidArgumentError(name + "() takes no arguments");
    return okStatus();
  };
  if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
    RETURN_IF_ERROR(noArgs());
    return caseFilter(name, input);
  }
  if (name == "trim") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"chars"}, 0));
    ASSIGN_OR_RETURN(Value s, softStr(input));
    std::optional<std::string> chars;
    if (p[0] && !p[0]->isNone() && !p[0]->isUndefined()) {
      if (!p[0]->isString())
        return invalidArgumentError("strip arg must be None or str");
      chars = p[0]->str();
    }
    return stringLike(s, pyStrip(s.str(), chars, true, true));
  }
  if (name == "length" || name == "count") {
    RETURN_IF_ERROR(noArgs());
    ASSIGN_OR_RETURN(int64_t n, length(input));
    return Value::integer(n);
  }
  if (name == "string") {
    RETURN_IF_ERROR(noArgs());
    return softStr(input);
  }
  if (name == "safe") {
    RETURN_IF_ERROR(noArgs());
    ASSIGN_OR_RETURN(Value s, softStr(input));
    return Value::string(s.str(), true);
  }
  if (name == "escape" || name == "e") {
    RETURN_IF_ERROR(noArgs());
    if (input.isMarkup())
      return input;
    ASSIGN_OR_RETURN(std::string s, pyStr(input));
    return Value::string(htmlEscape(s), true);
  }
  if (name == "default" || name == "d") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"default_value", "boolean"}, 0));
    if (input.isUndefined() || (isTrue(p[1]) && !input.truthy()))
      return p[0] ? *p[0] : Value::string("");
    return input;
  }
  if (name == "first") {
    RETURN_IF_ERROR(noArgs());
    if (input.isSequence(SeqKind::kGenerator)) {
      Sequence &seq = *input.seqPtr();
      if (seq.consumed < seq.items.size())
        return seq.items[seq.consumed++];
      return Value::undefined("No first item, sequence was empty.");
    }
    ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
    if (items.empty())
      return Value::undefined("No first item, sequence was empty.");
    return items.front();
  }
  if (name == "last") {
    RETURN_IF_ERROR(noArgs());
    if (input.isSequence(SeqKind::kGenerator))
      return invalidArgumentError("'generator' object is not reversible");
    ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
    if (items.empty())
      return Value::undefined("No last item, sequence was empty.");
    return items.back();
  }
  if (name == "list") {
    RETURN_IF_ERROR(noArgs());
    ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
    return Value::list(std::move(items));
  }
  if (name == "items") {
    RETURN_IF_ERROR(noArgs());
    if (input.isUndefined())
      return generator({});
    if (!input.isDict())
      return invalidArgumentError("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto &entry : input.dict().entries)
      pairs.push_back(Value::tuple({entry.first, entry.second}));
    return generator(std::move(pairs));
  }
  if (name == "join")
    return joinFilter(input, call);
  if (name == "replace") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"old", "new", "count"}, 2));
    ASSIGN_OR_RETURN(std::string s, pyStr(input));
    ASSIGN_OR_RETURN(std::string old, pyStr(*p[0]));
    ASSIGN_OR_RETURN(std::string with, pyStr(*p[1]));
    int64_t count = -1;
    if (p[2] && !p[2]->isNone()) {
      if (!p[2]->isInt())
        return invalidArgumentError("replace count must be an int");
      count = p[2]->intValue();
    }
    return Value::string(pyReplace(s, old, with, count));
  }
  if (name == "tojson")
    return tojsonFilter(input, call);
  if (name == "indent")
    return indentFilter(input, call);
  if (name == "int")
    return intFilter(input, call);
  if (name == "float")
    return floatFilter(input, call);
  if (name == "abs") {
    RETURN_IF_ERROR(noArgs());
    if (input.isInt() || input.isBool())
      return input.intValue() < 0 ? unaryOp(input, true) : Value::integer(input.intValue());
    if (input.kind() == ValueKind::kFloat)
      return Value::floating(std::fabs(input.numberValue()));
    return invalidArgumentError("bad operand type for abs(): '" + input.typeName() + "'");
  }
  if (name == "map")
    return mapFilter(input, call);
  if (name == "select" || name == "reject")
    return selectFilter(input, call, false, name == "select");
  if (name == "selectattr" || name == "rejectattr")
    return selectFilter(input, call, true, name == "selectattr");
  if (name == "sort")
    return sortFilter(input, call);
  if (name == "dictsort")
    return dictsortFilter(input, call);
  if (name == "unique")
    return uniqueFilter(input, call);
  if (name == "max" || name == "min")
    return minMaxFilter(input, call, name == "max");
  if (name == "reverse") {
    RETURN_IF_ERROR(noArgs());
    return reverseFilter(input);
  }
  if (name == "sum") {
    ASSIGN_OR_RETURN(auto p, bindArgs(name, call, {"attribute", "start"}, 0));
    ASSIGN_OR_RETURN(std::vector<Value> items, iterate(input));
    Value total = p[1] ? *p[1] : Value::integer(0);
    if (total.isString())
      return invalidArgumentError("sum() can't sum strings [use ''.join(seq) instead]");
    for (const Value &item : items) {
      Value v = item;
      if (p[0] && !p[0]->isNone()) {
        ASSIGN_OR_RETURN(v, lookupPath(item, *p[0], std::nullopt));
      }
      ASSIGN_OR_RETURN(total, binaryOp("+", total, v));
    }
    return total;
  }
  return invalidArgumentError("filter '" + name + "' is not supported");
}

} // namespace infer::chat::jinja
