//===- Regex.cpp - PCRE2 patterns with Oniguruma's meaning ----------------===//
#define PCRE2_CODE_UNIT_WIDTH 8
#include "runtime/tokenizer/Regex.h"

#include "runtime/tokenizer/UnicodeTables.h"
#include "runtime/tokenizer/Utf8.h"

#include <pcre2.h>

namespace infer::tokenizer {
namespace {

// Oniguruma's `\s` is White_Space: PCRE2's (10.42) lacks U+0085 and has U+180E.
constexpr std::string_view kSpaceMembers =
    "\\t\\n\\x0B\\f\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";
constexpr std::string_view kHexMembers = "0-9a-fA-F";

/// Long general-category names Oniguruma accepts, and their short forms.
constexpr std::pair<std::string_view, std::string_view> kLongCategoryNames[] = {
    {"letter", "L"},           {"uppercaseletter", "Lu"},      {"lowercaseletter", "Ll"},
    {"titlecaseletter", "Lt"}, {"modifierletter", "Lm"},       {"otherletter", "Lo"},
    {"mark", "M"},             {"combiningmark", "M"},         {"nonspacingmark", "Mn"},
    {"spacingmark", "Mc"},     {"enclosingmark", "Me"},        {"number", "N"},
    {"decimalnumber", "Nd"},   {"letternumber", "Nl"},         {"othernumber", "No"},
    {"punctuation", "P"},      {"connectorpunctuation", "Pc"}, {"dashpunctuation", "Pd"},
    {"openpunctuation", "Ps"}, {"closepunctuation", "Pe"},     {"initialpunctuation", "Pi"},
    {"finalpunctuation", "Pf"}, {"otherpunctuation", "Po"},    {"symbol", "S"},
    {"mathsymbol", "Sm"},      {"currencysymbol", "Sc"},       {"modifiersymbol", "Sk"},
    {"othersymbol", "So"},     {"separator", "Z"},             {"spaceseparator", "Zs"},
    {"lineseparator", "Zl"},   {"paragraphseparator", "Zp"},
};

/// Oniguruma matches property names ignoring case, spaces, '_' and '-'.
std::string looseName(std::string_view name) {
  std::string out;
  for (char c : name)
    if (c != ' ' && c != '_' && c != '-')
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return out;
}

/// The class body PCRE2 needs for Oniguruma's \p{name}, or nullptr when we
/// have no table for it (then PCRE2's own meaning is used).
const char *propertyMembers(std::string_view name) {
  std::string loose = looseName(name);
  for (const auto &[longName, shortName] : kLongCategoryNames)
    if (loose == longName)
      loose = looseName(shortName);
  for (size_t i = 0; i < unicode::kRegexClassesSize; ++i)
    if (looseName(unicode::kRegexClasses[i].name) == loose)
      return unicode::kRegexClasses[i].members;
  return nullptr;
}

bool isHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string pcre2Message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof(buffer));
  return reinterpret_cast<const char *>(buffer);
}

} // namespace

struct Regex::Code {
  pcre2_code *code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

std::string translateOnigurumaPattern(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  int classDepth = 0;
  // A class given by its members: as is inside brackets, else bracketed. A
  // negated one inside brackets has no spelling: `original` stays (PCRE2's).
  auto addClass = [&](std::string_view members, bool negated, std::string_view original) {
    if (classDepth > 0) {
      out += negated ? original : members;
      return;
    }
    out += negated ? "[^" : "[";
    out += members;
    out += ']';
  };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      size_t escape = i;
      char e = p[++i];
      switch (e) {
      case 's':
      case 'S':
        addClass(kSpaceMembers, e == 'S', "\\S");
        continue;
      case 'w':
      case 'W':
        addClass(unicode::kOnigWordClass, e == 'W', "\\W");
        continue;
      case 'd':
      case 'D':
        addClass(propertyMembers("Nd"), e == 'D', "\\D");
        continue;
      case 'b': // word boundaries on Oniguruma's \w (not inside brackets: backspace)
      case 'B':
        if (classDepth == 0) {
          std::string w = std::string("[") + unicode::kOnigWordClass + "]";
          out += e == 'b' ? "(?:(?<=" + w + ")(?!" + w + ")|(?<!" + w + ")(?=" + w + "))"
                          : "(?:(?<=" + w + ")(?=" + w + ")|(?<!" + w + ")(?!" + w + "))";
          continue;
        }
        break;
      case 'h': // Ruby's hex digit, not PCRE2's horizontal space
      case 'H':
        addClass(kHexMembers, e == 'H', "\\H");
        continue;
      case 'p':
      case 'P': {
        size_t end = i + 1;
        if (end >= p.size() || p[end] != '{') { // Ruby: `\pN` is the letters "pN"
          out += e;
          continue;
        }
        size_t close = p.find('}', end);
        if (close == std::string_view::npos)
          break;
        std::string_view name = p.substr(end + 1, close - end - 1);
        end = close + 1;
        bool negated = e == 'P';
        if (!name.empty() && name[0] == '^') {
          negated = !negated;
          name.remove_prefix(1);
        }
        const char *members = propertyMembers(name);
        std::string_view original = p.substr(escape, end - escape);
        if (!members)
          out += original;
        else
          addClass(members, negated, original);
        i = end - 1;
        continue;
      }
      case 'u': // Ruby's \uHHHH
        if (i + 4 < p.size() && isHex(p[i + 1]) && isHex(p[i + 2]) && isHex(p[i + 3]) &&
            isHex(p[i + 4])) {
          out += "\\x{";
          out.append(p.substr(i + 1, 4));
          out += '}';
          i += 4;
          continue;
        }
        break;
      default:
        break;
      }
      out += '\\';
      out += e;
      continue;
    }
    if (classDepth > 0) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
        size_t close = p.find(":]", i + 2);
        if (close != std::string_view::npos) {
          out.append(p.substr(i, close + 2 - i));
          i = close + 1;
          continue;
        }
      }
      if (c == '[')
        ++classDepth;
      else if (c == ']')
        --classDepth;
      out += c;
      continue;
    }
    if (c == '[') {
      classDepth = 1;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^')
        out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') { // a leading ']' is literal
        out += "\\]";
        ++i;
      }
      continue;
    }
    if (c == '(' && i + 2 < p.size() && p[i + 1] == '?') {
      // Inline options: Ruby's `m` is PCRE2's `s` (dot matches newline).
      size_t j = i + 2;
      std::string flags;
      for (; j < p.size() && (p[j] == 'i' || p[j] == 'm' || p[j] == 'x' || p[j] == '-'); ++j)
        flags += p[j] == 'm' ? 's' : p[j];
      if (!flags.empty() && j < p.size() && (p[j] == ')' || p[j] == ':')) {
        out += "(?";
        out += flags;
        i = j - 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

StatusOr<std::unique_ptr<Regex>> Regex::compile(std::string_view pattern, bool literal) {
  std::unique_ptr<Regex> regex(new Regex());
  regex->translated_ = literal ? std::string(pattern) : translateOnigurumaPattern(pattern);
  uint32_t options = PCRE2_UTF;
  if (literal)
    options |= PCRE2_LITERAL;
  else
    options |= PCRE2_UCP | PCRE2_MULTILINE; // Ruby's ^ and $ are line anchors
  pcre2_compile_context *context = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(context, PCRE2_NEWLINE_LF);
  int error = 0;
  PCRE2_SIZE errorOffset = 0;
  pcre2_code *code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex->translated_.data()),
                    regex->translated_.size(), options, &error, &errorOffset, context);
  pcre2_compile_context_free(context);
  if (!code)
    return invalidArgumentError("pattern '" + std::string(pattern) + "' does not compile (" +
                                pcre2Message(error) + " at offset " +
                                std::to_string(errorOffset) + ")");
  regex->code_ = std::make_unique<Code>();
  regex->code_->code = code;
  regex->code_->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return regex;
}

void replaceMatches(std::string &text, const std::vector<Span> &matches, std::string_view content) {
  std::string out;
  out.reserve(text.size() + matches.size() * content.size());
  size_t last = 0;
  for (const Span &m : matches) {
    out.append(text, last, m.start - last);
    out += content;
    last = m.end;
  }
  out.append(text, last, std::string::npos);
  text.swap(out);
}

StatusOr<std::unique_ptr<Regex>> compileRegex(std::string_view where, std::string_view pattern,
                                              bool literal) {
  auto regex = Regex::compile(pattern, literal);
  if (!regex.ok())
    return regex.status().withPrefix(where);
  return std::move(regex).value();
}

Regex::~Regex() = default;

Status Regex::findAll(std::string_view subject, std::vector<Span> &matches) const {
  matches.clear();
  pcre2_match_data *data = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  pcre2_match_context *bigStack = nullptr;
  pcre2_jit_stack *jitStack = nullptr;
  auto cleanup = [&] {
    pcre2_match_data_free(data);
    pcre2_match_context_free(bigStack);
    pcre2_jit_stack_free(jitStack);
  };
  auto *text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t n = subject.size();
  size_t lastEnd = 0;
  bool haveLast = false;
  size_t lastMatchEnd = 0;
  while (lastEnd <= n) {
    int rc = code_->jit && !bigStack
                 ? pcre2_jit_match(code_->code, text, n, lastEnd, 0, data, nullptr)
                 : pcre2_match(code_->code, text, n, lastEnd, PCRE2_NO_UTF_CHECK, data, bigStack);
    if (rc == PCRE2_ERROR_NOMATCH)
      break;
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !bigStack) {
      // Deep backtracking on a long input: retry with a 64 MiB JIT stack.
      bigStack = pcre2_match_context_create(nullptr);
      jitStack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
      pcre2_jit_stack_assign(bigStack, nullptr, jitStack);
      continue;
    }
    if (rc < 0) {
      cleanup();
      return resourceExhaustedError("pattern '" + translated_ + "' failed on a " +
                                    std::to_string(n) + "-byte input (" + pcre2Message(rc) + ")");
    }
    PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(data);
    size_t start = ovector[0], end = ovector[1];
    if (start == end && haveLast && lastMatchEnd == end) {
      lastEnd += lastEnd < n ? utf8Length(static_cast<unsigned char>(subject[lastEnd])) : 1;
      continue;
    }
    lastEnd = end;
    lastMatchEnd = end;
    haveLast = true;
    matches.push_back({start, end});
  }
  cleanup();
  return okStatus();
}

} // namespace infer::tokenizer
