//===- JinjaLexer.cpp - template text to tokens ---------------------------===//
//
// Mirrors the regular expressions of jinja2/lexer.py: the root state finds
// the earliest "{%", "{{" or "{#"; inside a tag the end marker is tried
// before any token, and only while brackets are balanced (so `}}` can close
// a dict literal inside `{{ }}`).
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/JinjaLexer.h"

#include "runtime/chat/JinjaAst.h"
#include "runtime/chat/JinjaUnicode.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace infer::chat::jinja {

Status templateError(int line, const std::string &message) {
  return invalidArgumentError("chat template line " + std::to_string(line) + ": " + message);
}

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

int hexDigit(char32_t c) {
  if (c >= '0' && c <= '9')
    return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f')
    return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F')
    return static_cast<int>(c - 'A' + 10);
  return -1;
}

/// Python's "unicode-escape" decoding of a string literal's body, applied
/// (as jinja2 does) after non-ASCII characters were backslash-replaced.
StatusOr<std::string> unescape(std::string_view raw, int line) {
  std::u32string in = toCodePoints(raw);
  std::u32string out;
  for (size_t i = 0; i < in.size(); ++i) {
    char32_t c = in[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 == in.size())
      return templateError(line, "\\ at end of string");
    char32_t d = in[++i];
    if (d >= 0x80) {
      // The backslash escapes the first backslash of "\xe9": both survive.
      char buf[16];
      if (d < 0x100)
        std::snprintf(buf, sizeof buf, "x%02x", static_cast<unsigned>(d));
      else if (d < 0x10000)
        std::snprintf(buf, sizeof buf, "u%04x", static_cast<unsigned>(d));
      else
        std::snprintf(buf, sizeof buf, "U%08x", static_cast<unsigned>(d));
      out.push_back('\\');
      for (const char *p = buf; *p; ++p)
        out.push_back(static_cast<char32_t>(*p));
      continue;
    }
    switch (d) {
    case '\n':
      break; // line continuation
    case '\\':
    case '\'':
    case '"':
      out.push_back(d);
      break;
    case 'a':
      out.push_back(0x07);
      break;
    case 'b':
      out.push_back(0x08);
      break;
    case 'f':
      out.push_back(0x0C);
      break;
    case 'n':
      out.push_back('\n');
      break;
    case 'r':
      out.push_back('\r');
      break;
    case 't':
      out.push_back('\t');
      break;
    case 'v':
      out.push_back(0x0B);
      break;
    case 'x':
    case 'u':
    case 'U': {
      int width = d == 'x' ? 2 : d == 'u' ? 4 : 8;
      char32_t value = 0;
      for (int k = 0; k < width; ++k) {
        int h = i + 1 < in.size() ? hexDigit(in[i + 1]) : -1;
        if (h < 0)
          return templateError(line, std::string("truncated \\") + static_cast<char>(d) +
                                         " escape in string literal");
        value = value * 16 + static_cast<char32_t>(h);
        ++i;
      }
      if (value > 0x10FFFF)
        return templateError(line, "illegal Unicode character in string literal");
      if (value >= 0xD800 && value <= 0xDFFF)
        return templateError(line, "surrogate code points in string literals are not supported");
      out.push_back(value);
      break;
    }
    case 'N':
      return templateError(line, "\\N{...} escapes are not supported");
    default:
      if (d >= '0' && d <= '7') {
        char32_t value = d - '0';
        for (int k = 0; k < 2 && i + 1 < in.size() && in[i + 1] >= '0' && in[i + 1] <= '7'; ++k)
          value = value * 8 + (in[++i] - '0');
        out.push_back(value);
      } else {
        out.push_back('\\'); // unknown escapes stay as written
        out.push_back(d);
      }
    }
  }
  return toUtf8(out);
}

class Lexer {
public:
  explicit Lexer(std::string source) : src_(std::move(source)) {
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n')
        newlines_.push_back(i);
  }

  StatusOr<std::vector<Token>> run() {
    while (pos_ < src_.size())
      RETURN_IF_ERROR(lexRoot());
    Token eof{TokenKind::kEof, "", 0, 0, lineAt(src_.size())};
    tokens_.push_back(eof);
    return std::move(tokens_);
  }

private:
  int lineAt(size_t offset) const {
    return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), offset) -
                                newlines_.begin());
  }

  bool startsWith(size_t p, std::string_view s) const { return src_.compare(p, s.size(), s) == 0; }

  /// The code point at `p` and the offset after it.
  char32_t codePointAt(size_t p, size_t &next) const {
    unsigned char b = static_cast<unsigned char>(src_[p]);
    int len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : 4;
    next = std::min(src_.size(), p + len);
    std::u32string cp = toCodePoints(std::string_view(src_).substr(p, next - p));
    return cp.empty() ? 0 : cp[0];
  }

  size_t skipSpaces(size_t p) const {
    while (p < src_.size()) {
      size_t next;
      if (!isPySpace(codePointAt(p, next)))
        break;
      p = next;
    }
    return p;
  }

  /// The end of [begin, end) once trailing whitespace is removed.
  size_t rstrip(size_t begin, size_t end) const {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(src_[start]) & 0xC0) == 0x80)
        --start;
      size_t next;
      if (!isPySpace(codePointAt(start, next)))
        break;
      end = start;
    }
    return end;
  }

  /// lstrip_blocks: drops the whitespace between the last line start and a
  /// tag at `end`, if only whitespace is there.
  size_t lstripBlock(size_t begin, size_t end) const {
    size_t lineStart = begin;
    bool sawNewline = false;
    for (size_t i = end; i > begin; --i) {
      if (src_[i - 1] == '\n') {
        lineStart = i;
        sawNewline = true;
        break;
      }
    }
    if ((sawNewline || lineStarting_) && lineStart < end && skipSpaces(lineStart) >= end)
      return lineStart;
    return end;
  }

  void emit(TokenKind kind, std::string text, size_t offset) {
    Token token;
    token.kind = kind;
    token.text = std::move(text);
    token.line = lineAt(offset);
    tokens_.push_back(std::move(token));
  }

  void emitData(size_t begin, size_t end) {
    if (end > begin)
      emit(TokenKind::kData, src_.substr(begin, end - begin), begin);
  }

  /// Finishes a tag whose text ended at `end`.
  void finish(size_t end) {
    pos_ = end;
    lineStarting_ = end > 0 && src_[end - 1] == '\n';
  }

  /// `\s*raw\s*(-%}\s*|%})` after "{%" and its sign; npos if not raw.
  size_t matchRawBegin(size_t p) const {
    p = skipSpaces(p);
    if (!startsWith(p, "raw"))
      return std::string::npos;
    p = skipSpaces(p + 3);
    if (startsWith(p, "-%}"))
      return skipSpaces(p + 3);
    if (startsWith(p, "%}"))
      return p + 2;
    return std::string::npos;
  }

  Status lexRoot() {
    size_t tag = std::string::npos;
    for (size_t p = src_.find('{', pos_); p != std::string::npos; p = src_.find('{', p + 1)) {
      if (p + 1 < src_.size() && (src_[p + 1] == '%' || src_[p + 1] == '{' || src_[p + 1] == '#')) {
        tag = p;
        break;
      }
    }
    if (tag == std::string::npos) {
      emitData(pos_, src_.size());
      pos_ = src_.size();
      return okStatus();
    }
    char kind = src_[tag + 1];
    size_t after = tag + 2;
    char sign = 0;
    if (after < src_.size() && (src_[after] == '-' || src_[after] == '+'))
      sign = src_[after++];
    size_t rawBody = kind == '%' ? matchRawBegin(after) : std::string::npos;

    size_t textEnd = tag;
    if (sign == '-')
      textEnd = rstrip(pos_, tag);
    else if (sign != '+' && kind != '{')
      textEnd = lstripBlock(pos_, tag);
    emitData(pos_, textEnd);

    if (rawBody != std::string::npos) {
      finish(rawBody);
      return lexRaw(rawBody, lineAt(tag));
    }
    lineStarting_ = false;
    if (kind == '#')
      return lexComment(after, lineAt(tag));
    emit(kind == '%' ? TokenKind::kBlockBegin : TokenKind::kVariableBegin, "", tag);
    return lexTag(after, kind == '%');
  }

  Status lexComment(size_t p, int line) {
    for (; p < src_.size(); ++p) {
      if (startsWith(p, "+#}")) {
        finish(p + 3);
        return okStatus();
      }
      if (startsWith(p, "-#}")) {
        finish(skipSpaces(p + 3));
        return okStatus();
      }
      if (startsWith(p, "#}")) {
        size_t end = p + 2;
        if (end < src_.size() && src_[end] == '\n')
          ++end;
        finish(end);
        return okStatus();
      }
    }
    return templateError(line, "missing end of comment tag");
  }

  Status lexRaw(size_t body, int line) {
    for (size_t q = src_.find("{%", body); q != std::string::npos; q = src_.find("{%", q + 1)) {
      size_t p = q + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+'))
        sign = src_[p++];
      p = skipSpaces(p);
      if (!startsWith(p, "endraw"))
        continue;
      p = skipSpaces(p + 6);
      size_t end;
      if (startsWith(p, "+%}")) {
        end = p + 3;
      } else if (startsWith(p, "-%}")) {
        end = skipSpaces(p + 3);
      } else if (startsWith(p, "%}")) {
        end = p + 2;
        if (end < src_.size() && src_[end] == '\n')
          ++end;
      } else {
        continue;
      }
      size_t textEnd = q;
      if (sign == '-')
        textEnd = rstrip(body, q);
      else if (sign != '+')
        textEnd = lstripBlock(body, q);
      emitData(body, textEnd);
      finish(end);
      return okStatus();
    }
    return templateError(line, "missing end of raw directive");
  }

  /// (\d+_)*\d+ at p: its end, or npos.
  size_t digitRun(size_t p) const {
    if (p >= src_.size() || !isDigit(src_[p]))
      return std::string::npos;
    while (true) {
      while (p < src_.size() && isDigit(src_[p]))
        ++p;
      if (p + 1 < src_.size() && src_[p] == '_' && isDigit(src_[p + 1])) {
        ++p;
        continue;
      }
      return p;
    }
  }

  /// A float literal at p (not right after a '.'): its end, or npos.
  size_t matchFloat(size_t p) const {
    if (p > 0 && src_[p - 1] == '.')
      return std::string::npos;
    size_t q = digitRun(p);
    if (q == std::string::npos)
      return std::string::npos;
    size_t afterFraction = std::string::npos;
    if (q < src_.size() && src_[q] == '.')
      afterFraction = digitRun(q + 1);
    size_t r = afterFraction == std::string::npos ? q : afterFraction;
    if (r < src_.size() && (src_[r] == 'e' || src_[r] == 'E')) {
      size_t s = r + 1;
      if (s < src_.size() && (src_[s] == '+' || src_[s] == '-'))
        ++s;
      size_t e = digitRun(s);
      if (e != std::string::npos)
        return e;
    }
    return afterFraction;
  }

  /// An integer literal at p (0b/0o/0x, decimal, or zeros): end and base.
  size_t matchInteger(size_t p, int &base) const {
    base = 10;
    if (src_[p] == '0' && p + 1 < src_.size()) {
      char x = static_cast<char>(src_[p + 1] | 0x20);
      int b = x == 'b' ? 2 : x == 'o' ? 8 : x == 'x' ? 16 : 0;
      if (b) {
        size_t q = p + 2, end = std::string::npos;
        while (q < src_.size()) {
          size_t d = q + (src_[q] == '_' ? 1 : 0);
          int v = d < src_.size() ? hexDigit(static_cast<unsigned char>(src_[d])) : -1;
          if (v < 0 || v >= b)
            break;
          q = d + 1;
          end = q;
        }
        if (end != std::string::npos) {
          base = b;
          return end;
        }
      }
    }
    char first = src_[p];
    size_t q = p + 1;
    while (q < src_.size()) {
      size_t d = q + (src_[q] == '_' ? 1 : 0);
      if (d >= src_.size() || !isDigit(src_[d]) || (first == '0' && src_[d] != '0'))
        break;
      q = d + 1;
    }
    return q;
  }

  Status lexNumber(size_t &p) {
    int line = lineAt(p);
    size_t end = matchFloat(p);
    if (end != std::string::npos) {
      std::string text;
      for (size_t i = p; i < end; ++i)
        if (src_[i] != '_')
          text.push_back(src_[i]);
      double value = 0;
      auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
      if (parsed.ec == std::errc::result_out_of_range) // inf or 0, as Python rounds
        value = std::strtod(text.c_str(), nullptr);
      Token token{TokenKind::kFloat, src_.substr(p, end - p), 0, value, line};
      tokens_.push_back(token);
      p = end;
      return okStatus();
    }
    int base;
    end = matchInteger(p, base);
    size_t digits = base == 10 ? p : p + 2;
    unsigned long long value = 0;
    for (size_t i = digits; i < end; ++i) {
      if (src_[i] == '_')
        continue;
      unsigned long long next = value * base + hexDigit(static_cast<unsigned char>(src_[i]));
      if (next / base != value || next > 0x7FFFFFFFFFFFFFFFull)
        return templateError(line, "integer literal " + src_.substr(p, end - p) + " is too large");
      value = next;
    }
    Token token{TokenKind::kInteger, src_.substr(p, end - p), static_cast<int64_t>(value), 0, line};
    tokens_.push_back(token);
    p = end;
    return okStatus();
  }

  Status lexString(size_t &p) {
    int line = lineAt(p);
    char quote = src_[p];
    size_t q = p + 1;
    while (q < src_.size() && src_[q] != quote)
      q += src_[q] == '\\' ? 2 : 1;
    if (q >= src_.size())
      return templateError(line, std::string("unexpected char '") + quote + "'");
    ASSIGN_OR_RETURN(std::string value,
                     unescape(std::string_view(src_).substr(p + 1, q - p - 1), line));
    emit(TokenKind::kString, std::move(value), p);
    p = q + 1;
    return okStatus();
  }

  Status lexOperator(size_t &p) {
    int line = lineAt(p);
    static const char *const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char *op : kTwo) {
      if (startsWith(p, op)) {
        emit(TokenKind::kOperator, op, p);
        p += 2;
        return okStatus();
      }
    }
    char c = src_[p];
    if (std::string_view("+-/*%~[](){}=.:|,;<>").find(c) == std::string_view::npos) {
      size_t next;
      std::string shown;
      appendUtf8(shown, codePointAt(p, next));
      return templateError(line, "unexpected char '" + shown + "'");
    }
    if (c == '{' || c == '(' || c == '[') {
      balance_.push_back(c == '{' ? '}' : c == '(' ? ')' : ']');
    } else if (c == '}' || c == ')' || c == ']') {
      if (balance_.empty())
        return templateError(line, std::string("unexpected '") + c + "'");
      if (balance_.back() != c)
        return templateError(line, std::string("unexpected '") + c + "', expected '" +
                                       balance_.back() + "'");
      balance_.pop_back();
    }
    emit(TokenKind::kOperator, std::string(1, c), p);
    ++p;
    return okStatus();
  }

  Status lexTag(size_t p, bool block) {
    balance_.clear();
    while (p < src_.size()) {
      if (balance_.empty()) {
        size_t end = std::string::npos;
        if (block && startsWith(p, "+%}")) {
          end = p + 3;
        } else if (startsWith(p, block ? "-%}" : "-}}")) {
          end = skipSpaces(p + 3);
        } else if (startsWith(p, block ? "%}" : "}}")) {
          end = p + 2;
          if (block && end < src_.size() && src_[end] == '\n')
            ++end;
        }
        if (end != std::string::npos) {
          emit(block ? TokenKind::kBlockEnd : TokenKind::kVariableEnd, "", p);
          finish(end);
          return okStatus();
        }
      }
      size_t q = skipSpaces(p);
      if (q != p) {
        p = q;
        continue;
      }
      char c = src_[p];
      if (isDigit(c)) {
        RETURN_IF_ERROR(lexNumber(p));
      } else if (isNameStart(c)) {
        q = p;
        while (q < src_.size() && isNameChar(src_[q]))
          ++q;
        emit(TokenKind::kName, src_.substr(p, q - p), p);
        p = q;
      } else if (c == '\'' || c == '"') {
        RETURN_IF_ERROR(lexString(p));
      } else {
        RETURN_IF_ERROR(lexOperator(p));
      }
    }
    // Unterminated tag: the parser reports it at the end of the template.
    pos_ = p;
    return okStatus();
  }

  std::string src_;
  std::vector<size_t> newlines_;
  size_t pos_ = 0;
  bool lineStarting_ = true;
  std::vector<char> balance_;
  std::vector<Token> tokens_;
};

/// jinja2 treats \r\n, \r and \n as line breaks, writes them as \n, and
/// drops one trailing newline (keep_trailing_newline=False).
std::string normalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n')
        ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

} // namespace

StatusOr<std::vector<Token>> tokenize(std::string_view source) {
  std::u32string check;
  if (!decodeUtf8(source, check))
    return invalidArgumentError("chat template is not valid UTF-8");
  Lexer lexer(normalizeNewlines(source));
  return lexer.run();
}

} // namespace infer::chat::jinja
