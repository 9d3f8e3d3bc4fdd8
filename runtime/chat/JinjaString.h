//===- JinjaString.h - Python str methods on UTF-8 strings ------*- C++ -*-===//
//
// The str operations chat templates call (strip, split, replace, title,
// ...), by code point as Python does. Case conversions fail, rather than
// guess, on code points outside JinjaUnicode's known subset.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJASTRING_H
#define INFER_RUNTIME_CHAT_JINJASTRING_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infer::chat::jinja {

/// str.strip / lstrip / rstrip; `chars` nullopt strips whitespace.
std::string pyStrip(const std::string &s, const std::optional<std::string> &chars, bool left,
                    bool right);
/// str.split / rsplit; `sep` nullopt splits on whitespace runs. An empty
/// separator is an error, as in Python.
StatusOr<std::vector<std::string>> pySplit(const std::string &s,
                                           const std::optional<std::string> &sep, int64_t maxsplit,
                                           bool fromRight);
std::vector<std::string> pySplitLines(const std::string &s, bool keepends);
/// str.replace; count < 0 replaces all.
std::string pyReplace(const std::string &s, const std::string &old, const std::string &with,
                      int64_t count);
/// str.find / rfind as a code point index, -1 if absent.
int64_t pyFind(const std::string &s, const std::string &sub, bool fromRight);
/// str.count: non-overlapping occurrences.
int64_t pyCount(const std::string &s, const std::string &sub);

StatusOr<std::string> pyUpper(const std::string &s);
StatusOr<std::string> pyLower(const std::string &s);
/// str.title: each cased run starts titlecased ("they're" -> "They'Re").
StatusOr<std::string> pyTitle(const std::string &s);
StatusOr<std::string> pyCapitalize(const std::string &s);
/// jinja2's `title` filter: words split at whitespace and -({[< start with
/// an uppercase letter, the rest lowercased.
StatusOr<std::string> jinjaTitle(const std::string &s);
StatusOr<bool> pyIsLower(const std::string &s);
StatusOr<bool> pyIsUpper(const std::string &s);

/// s[start:stop:step] by code point, bounds already normalized by the caller
/// (Python's slice.indices).
std::string pySliceIndices(const std::u32string &s, int64_t start, int64_t stop, int64_t step);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJASTRING_H
