//===- JinjaArithmetic.cpp - Python's + - * / // % ** on values -----------===//
//
// Numbers follow Python: bool is an int, int / int is a float, // and %
// floor (toward negative infinity), ** of ints stays exact. Integers are
// 64-bit here; a result that would need more is an error, not a wrapped
// value. + also concatenates str, list and tuple (Markup escapes the other
// operand, as markupsafe does), * repeats them, and str % args formats.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/JinjaOps.h"

#include "runtime/chat/JinjaFormat.h"

#include <cmath>

namespace infer::chat::jinja {
namespace {

Status unsupportedOperands(const std::string &op, const Value &a, const Value &b) {
  return invalidArgumentError("unsupported operand type(s) for " + op + ": '" + a.typeName() +
                              "' and '" + b.typeName() + "'");
}

Status overflow() { return invalidArgumentError("integer overflow (beyond 64 bits)"); }

StatusOr<Value> repeat(const Value &seq, int64_t times) {
  if (seq.isString()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i)
      out += seq.str();
    return stringLike(seq, std::move(out));
  }
  std::vector<Value> items;
  for (int64_t i = 0; i < times; ++i)
    items.insert(items.end(), seq.seq().items.begin(), seq.seq().items.end());
  return Value::sequence(seq.seq().kind, std::move(items));
}

bool isRepeatable(const Value &v) {
  return v.isString() || v.isSequence(SeqKind::kList) || v.isSequence(SeqKind::kTuple);
}

/// Python's float floor division and modulo (float_divmod).
void floatDivmod(double vx, double wx, double &floordiv, double &mod) {
  mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5)
      floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
}

StatusOr<Value> intPow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1)
      if (__builtin_mul_overflow(result, base, &result))
        return overflow();
    exp >>= 1;
    if (exp && __builtin_mul_overflow(base, base, &base))
      return overflow();
  }
  return Value::integer(result);
}

/// printf-style `str % args` for %s, %r, %d, %i and %%; flags, widths,
/// precisions and %(name)s are refused.
StatusOr<Value> percentFormat(const Value &format, const Value &args) {
  if (format.isMarkup())
    return invalidArgumentError("% formatting of Markup is not supported");
  std::vector<Value> values;
  bool mapping = args.isDict();
  if (args.isSequence(SeqKind::kTuple))
    values = args.seq().items;
  else
    values.push_back(args);
  size_t next = 0;
  const std::string &f = format.str();
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out.push_back(f[i]);
      continue;
    }
    char spec = i + 1 < f.size() ? f[++i] : '\0';
    if (spec == '%') {
      out.push_back('%');
      continue;
    }
    if (spec != 's' && spec != 'r' && spec != 'd' && spec != 'i')
      return invalidArgumentError(std::string("% format '%") + spec + "' is not supported");
    if (next >= values.size())
      return invalidArgumentError("not enough arguments for format string");
    const Value &value = values[next++];
    if (spec == 's' || spec == 'r') {
      ASSIGN_OR_RETURN(std::string text, spec == 's' ? pyStr(value) : pyRepr(value));
      out += text;
    } else if (value.isUndefined()) {
      return undefinedError(value);
    } else if (value.isInt() || value.isBool()) {
      out += std::to_string(value.intValue());
    } else if (value.kind() == ValueKind::kFloat && std::isfinite(value.numberValue()) &&
               std::fabs(value.numberValue()) < 9.2e18) {
      out += std::to_string(static_cast<int64_t>(std::trunc(value.numberValue())));
    } else {
      return invalidArgumentError(std::string("%") + spec +
                                  " format: a real number is required, not " + value.typeName());
    }
  }
  if (next < values.size() && !mapping)
    return invalidArgumentError("not all arguments converted during string formatting");
  return Value::string(std::move(out));
}

} // namespace

StatusOr<Value> binaryOp(const std::string &op, const Value &a, const Value &b) {
  if (a.isUndefined())
    return undefinedError(a);
  if (b.isUndefined())
    return undefinedError(b);
  bool ints = (a.isInt() || a.isBool()) && (b.isInt() || b.isBool());
  bool numbers = a.isNumber() && b.isNumber();
  int64_t x = a.intValue(), y = b.intValue(), r;
  double fx = a.numberValue(), fy = b.numberValue();
  if (op == "+") {
    if (ints)
      return __builtin_add_overflow(x, y, &r) ? StatusOr<Value>(overflow()) : Value::integer(r);
    if (numbers)
      return Value::floating(fx + fy);
    if (a.isString() && b.isString()) {
      // markupsafe: Markup + str escapes the str (and str + Markup).
      if (a.isMarkup() || b.isMarkup())
        return Value::string((a.isMarkup() ? a.str() : htmlEscape(a.str())) +
                                 (b.isMarkup() ? b.str() : htmlEscape(b.str())),
                             true);
      return Value::string(a.str() + b.str());
    }
    bool lists = a.isSequence(SeqKind::kList) && b.isSequence(SeqKind::kList);
    bool tuples = a.isSequence(SeqKind::kTuple) && b.isSequence(SeqKind::kTuple);
    if (lists || tuples) {
      std::vector<Value> items = a.seq().items;
      items.insert(items.end(), b.seq().items.begin(), b.seq().items.end());
      return Value::sequence(a.seq().kind, std::move(items));
    }
    if (a.isString())
      return invalidArgumentError("can only concatenate str (not \"" + b.typeName() + "\") to str");
    if (a.isSequence(SeqKind::kList) || a.isSequence(SeqKind::kTuple))
      return invalidArgumentError("can only concatenate " + a.typeName() + " (not \"" +
                                  b.typeName() + "\") to " + a.typeName());
    return unsupportedOperands(op, a, b);
  }
  if (op == "-") {
    if (ints)
      return __builtin_sub_overflow(x, y, &r) ? StatusOr<Value>(overflow()) : Value::integer(r);
    if (numbers)
      return Value::floating(fx - fy);
    return unsupportedOperands(op, a, b);
  }
  if (op == "*") {
    if (ints)
      return __builtin_mul_overflow(x, y, &r) ? StatusOr<Value>(overflow()) : Value::integer(r);
    if (numbers)
      return Value::floating(fx * fy);
    if (isRepeatable(a) && (b.isInt() || b.isBool()))
      return repeat(a, y);
    if (isRepeatable(b) && (a.isInt() || a.isBool()))
      return repeat(b, x);
    return unsupportedOperands(op, a, b);
  }
  if (op == "/") {
    if (!numbers)
      return unsupportedOperands(op, a, b);
    if (fy == 0)
      return invalidArgumentError("division by zero");
    return Value::floating(fx / fy);
  }
  if (op == "//" || op == "%") {
    if (a.isString() && op == "%")
      return percentFormat(a, b);
    if (!numbers)
      return unsupportedOperands(op, a, b);
    if (ints) {
      if (y == 0)
        return invalidArgumentError("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1)
        return op == "%" ? StatusOr<Value>(Value::integer(0)) : StatusOr<Value>(overflow());
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q -= 1;
        m += y;
      }
      return Value::integer(op == "//" ? q : m);
    }
    if (fy == 0)
      return invalidArgumentError(op == "//" ? "float floor division by zero" : "float modulo");
    double q, m;
    floatDivmod(fx, fy, q, m);
    return Value::floating(op == "//" ? q : m);
  }
  if (op == "**") {
    if (!numbers)
      return unsupportedOperands("** or pow()", a, b);
    if (ints && y >= 0)
      return intPow(x, y);
    if (fx == 0 && fy < 0)
      return invalidArgumentError("0.0 cannot be raised to a negative power");
    if (fx < 0 && std::floor(fy) != fy)
      return invalidArgumentError("a negative number to a fractional power is complex");
    return Value::floating(std::pow(fx, fy));
  }
  return invalidArgumentError("unknown operator " + op);
}

StatusOr<Value> unaryOp(const Value &a, bool minus) {
  if (a.isUndefined())
    return undefinedError(a);
  if (a.isInt() || a.isBool()) {
    if (!minus)
      return Value::integer(a.intValue());
    if (a.intValue() == INT64_MIN)
      return overflow();
    return Value::integer(-a.intValue());
  }
  if (a.kind() == ValueKind::kFloat)
    return Value::floating(minus ? -a.numberValue() : a.numberValue());
  return invalidArgumentError(std::string("bad operand type for unary ") + (minus ? "-" : "+") +
                              ": '" + a.typeName() + "'");
}

} // namespace infer::chat::jinja
