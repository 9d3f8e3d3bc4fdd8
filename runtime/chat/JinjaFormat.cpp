//===- JinjaFormat.cpp - str(), repr() and json.dumps() of values ---------===//

#include "runtime/chat/JinjaFormat.h"

#include "runtime/chat/JinjaUnicode.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace infer::chat::jinja {
namespace {

std::string hex(char32_t c, int width, char prefix) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", prefix, width, static_cast<unsigned>(c));
  return buf;
}

StatusOr<std::string> stringRepr(const std::string &s) {
  char quote = '\'';
  if (s.find('\'') != std::string::npos && s.find('"') == std::string::npos)
    quote = '"';
  std::string out(1, quote);
  for (char32_t c : toCodePoints(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += hex(c, 2, 'x');
    } else if (c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      if (isPrintable(c))
        appendUtf8(out, c);
      else if (c <= 0xFF)
        out += hex(c, 2, 'x');
      else if (c <= 0xFFFF)
        out += hex(c, 4, 'u');
      else
        out += hex(c, 8, 'U');
    }
  }
  out.push_back(quote);
  return out;
}

Status unprintable(const Value &value) {
  return invalidArgumentError("printing a " + value.typeName() +
                              " object is not supported (Python prints its address)");
}

/// "a, b, c" of the items' repr().
StatusOr<std::string> joinReprs(const std::vector<Value> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ", ";
    ASSIGN_OR_RETURN(std::string item, pyRepr(items[i]));
    out += item;
  }
  return out;
}

StatusOr<std::string> dictRepr(const std::vector<std::pair<Value, Value>> &entries) {
  std::string out = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i)
      out += ", ";
    ASSIGN_OR_RETURN(std::string key, pyRepr(entries[i].first));
    ASSIGN_OR_RETURN(std::string value, pyRepr(entries[i].second));
    out += key + ": " + value;
  }
  return out + "}";
}

/// str() and repr() agree on everything but strings and Undefined.
StatusOr<std::string> format(const Value &value, bool repr) {
  switch (value.kind()) {
  case ValueKind::kUndefined:
    return std::string(repr ? "Undefined" : "");
  case ValueKind::kNone:
    return std::string("None");
  case ValueKind::kBool:
    return std::string(value.boolValue() ? "True" : "False");
  case ValueKind::kInt:
    return std::to_string(value.intValue());
  case ValueKind::kFloat:
    return floatRepr(value.numberValue());
  case ValueKind::kString:
    if (!repr)
      return value.str();
    if (value.isMarkup()) {
      ASSIGN_OR_RETURN(std::string inner, stringRepr(value.str()));
      return "Markup(" + inner + ")";
    }
    return stringRepr(value.str());
  case ValueKind::kSequence: {
    const Sequence &seq = value.seq();
    switch (seq.kind) {
    case SeqKind::kList: {
      ASSIGN_OR_RETURN(std::string items, joinReprs(seq.items));
      return "[" + items + "]";
    }
    case SeqKind::kTuple: {
      ASSIGN_OR_RETURN(std::string items, joinReprs(seq.items));
      return "(" + items + (seq.items.size() == 1 ? ",)" : ")");
    }
    case SeqKind::kRange: {
      std::string out =
          "range(" + std::to_string(seq.rangeStart) + ", " + std::to_string(seq.rangeStop);
      if (seq.rangeStep != 1)
        out += ", " + std::to_string(seq.rangeStep);
      return out + ")";
    }
    case SeqKind::kDictKeys:
    case SeqKind::kDictValues:
    case SeqKind::kDictItems: {
      ASSIGN_OR_RETURN(std::string items, joinReprs(seq.items));
      return value.typeName() + "([" + items + "])";
    }
    case SeqKind::kGenerator:
      return unprintable(value);
    }
    break;
  }
  case ValueKind::kDict:
    return dictRepr(value.dict().entries);
  case ValueKind::kNamespace: {
    std::vector<std::pair<Value, Value>> entries;
    for (const auto &attr : value.ns().attrs)
      entries.emplace_back(Value::string(attr.first), attr.second);
    ASSIGN_OR_RETURN(std::string attrs, dictRepr(entries));
    return "<Namespace " + attrs + ">";
  }
  case ValueKind::kCallable:
    if (value.callable().kind == CallableKind::kMacro)
      return "<Macro '" + value.callable().name + "'>";
    return unprintable(value);
  case ValueKind::kLoop:
    return "<LoopContext " + std::to_string(value.loop().index0 + 1) + "/" +
           std::to_string(value.loop().length()) + ">";
  }
  return unprintable(value);
}

void jsonString(const std::string &s, bool ensureAscii, std::string &out) {
  out.push_back('"');
  for (char32_t c : toCodePoints(s)) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      // ensure_ascii escapes everything outside ' '..'~', astral code
      // points as surrogate pairs.
      if (c < 0x20 || (ensureAscii && c > 0x7E && c < 0x10000)) {
        out += hex(c, 4, 'u');
      } else if (ensureAscii && c >= 0x10000) {
        char32_t v = c - 0x10000;
        out += hex(0xD800 + (v >> 10), 4, 'u');
        out += hex(0xDC00 + (v & 0x3FF), 4, 'u');
      } else {
        appendUtf8(out, c);
      }
    }
  }
  out.push_back('"');
}

std::string jsonFloat(double f) {
  if (std::isnan(f))
    return "NaN";
  if (std::isinf(f))
    return f > 0 ? "Infinity" : "-Infinity";
  return floatRepr(f);
}

class JsonWriter {
public:
  explicit JsonWriter(const JsonOptions &options) : options_(options) {
    itemSeparator_ = options.itemSeparator ? *options.itemSeparator : (options.indent ? "," : ", ");
  }

  Status write(const Value &value, int level, std::string &out) {
    switch (value.kind()) {
    case ValueKind::kNone:
      out += "null";
      return okStatus();
    case ValueKind::kBool:
      out += value.boolValue() ? "true" : "false";
      return okStatus();
    case ValueKind::kInt:
      out += std::to_string(value.intValue());
      return okStatus();
    case ValueKind::kFloat:
      out += jsonFloat(value.numberValue());
      return okStatus();
    case ValueKind::kString:
      jsonString(value.str(), options_.ensureAscii, out);
      return okStatus();
    case ValueKind::kSequence:
      if (value.isSequence(SeqKind::kList) || value.isSequence(SeqKind::kTuple))
        return writeList(value.seq().items, level, out);
      break;
    case ValueKind::kDict:
      return writeDict(value.dict(), level, out);
    default:
      break;
    }
    return invalidArgumentError("Object of type " + value.typeName() + " is not JSON serializable");
  }

private:
  std::string newlineIndent(int level) const {
    std::string s = "\n";
    for (int i = 0; i < level; ++i)
      s += *options_.indent;
    return s;
  }

  /// `count` items between `open` and `close`, each written by
  /// `writeItem(i)`, separated and indented as json.dumps lays them out
  /// ("[]" or "{}" when empty).
  template <typename WriteItem>
  Status writeItems(size_t count, char open, char close, int level, std::string &out,
                    WriteItem writeItem) {
    out.push_back(open);
    if (count == 0) {
      out.push_back(close);
      return okStatus();
    }
    std::string separator = itemSeparator_;
    if (options_.indent) {
      separator += newlineIndent(level + 1);
      out += newlineIndent(level + 1);
    }
    for (size_t i = 0; i < count; ++i) {
      if (i)
        out += separator;
      RETURN_IF_ERROR(writeItem(i));
    }
    if (options_.indent)
      out += newlineIndent(level);
    out.push_back(close);
    return okStatus();
  }

  Status writeList(const std::vector<Value> &items, int level, std::string &out) {
    return writeItems(items.size(), '[', ']', level, out,
                      [&](size_t i) { return write(items[i], level + 1, out); });
  }

  StatusOr<std::string> key(const Value &k) {
    switch (k.kind()) {
    case ValueKind::kString:
      return k.str();
    case ValueKind::kNone:
      return std::string("null");
    case ValueKind::kBool:
      return std::string(k.boolValue() ? "true" : "false");
    case ValueKind::kInt:
      return std::to_string(k.intValue());
    case ValueKind::kFloat:
      return jsonFloat(k.numberValue());
    default:
      return invalidArgumentError("keys must be str, int, float, bool or None, not " +
                                  k.typeName());
    }
  }

  Status writeDict(const Dict &dict, int level, std::string &out) {
    std::vector<const std::pair<Value, Value> *> entries;
    for (const auto &entry : dict.entries)
      entries.push_back(&entry);
    if (options_.sortKeys) {
      // Insertion sort keeps it simple and surfaces unorderable keys.
      for (size_t i = 1; i < entries.size(); ++i) {
        for (size_t j = i; j > 0; --j) {
          ASSIGN_OR_RETURN(bool less,
                           pyCompare(entries[j]->first, entries[j - 1]->first, CmpOp::kLt));
          if (!less)
            break;
          std::swap(entries[j], entries[j - 1]);
        }
      }
    }
    return writeItems(entries.size(), '{', '}', level, out, [&](size_t i) -> Status {
      ASSIGN_OR_RETURN(std::string k, key(entries[i]->first));
      jsonString(k, options_.ensureAscii, out);
      out += options_.keySeparator;
      return write(entries[i]->second, level + 1, out);
    });
  }

  const JsonOptions &options_;
  std::string itemSeparator_;
};

} // namespace

std::string floatRepr(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  if (value == 0)
    return std::signbit(value) ? "-0.0" : "0.0";
  // The shortest digits that round-trip, as Python's repr picks them.
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, result.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mantissa)
    if (c != '.')
      digits.push_back(c);
  int decpt = exponent + 1; // digits[0:decpt] is the integer part
  int n = static_cast<int>(digits.size());
  std::string out;
  if (decpt <= -4 || decpt > 16) {
    out = digits.substr(0, 1);
    if (n > 1)
      out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  } else if (decpt <= 0) {
    out = "0." + std::string(-decpt, '0') + digits;
  } else if (decpt >= n) {
    out = digits + std::string(decpt - n, '0') + ".0";
  } else {
    out = digits.substr(0, decpt) + "." + digits.substr(decpt);
  }
  return sign + out;
}

StatusOr<std::string> pyStr(const Value &value) { return format(value, /*repr=*/false); }

StatusOr<std::string> pyRepr(const Value &value) { return format(value, /*repr=*/true); }

std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '\'':
      out += "&#39;";
      break;
    case '"':
      out += "&#34;";
      break;
    default:
      out.push_back(c);
    }
  }
  return out;
}

StatusOr<std::string> toJson(const Value &value, const JsonOptions &options) {
  std::string out;
  JsonWriter writer(options);
  RETURN_IF_ERROR(writer.write(value, 0, out));
  return out;
}

} // namespace infer::chat::jinja
