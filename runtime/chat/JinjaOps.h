//===- JinjaOps.h - Python operators and lookups on values ------*- C++ -*-===//
//
// What jinja2's sandboxed environment does for `x.name`, `x[key]`,
// `x[a:b:c]`, iteration, len(), `in` and the arithmetic operators. The
// lookups follow jinja2: `x.name` tries the Python attribute first (so
// `d.items` is the method) then the item, `x[key]` the reverse; a missing
// attribute or item is Undefined, but using an Undefined that way raises.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAOPS_H
#define INFER_RUNTIME_CHAT_JINJAOPS_H

#include "runtime/chat/JinjaValue.h"

#include <string>
#include <vector>

namespace infer::chat::jinja {

/// The error an Undefined raises when used ("'x' is undefined").
Status undefinedError(const Value &undefined);

StatusOr<Value> getAttr(const Value &object, const std::string &name);
StatusOr<Value> getItem(const Value &object, const Value &key);
/// object[start:stop:step]; None bounds are omitted ones.
StatusOr<Value> getSlice(const Value &object, const Value &start, const Value &stop,
                         const Value &step);

/// The items `for x in value` visits (dict keys, str characters); consumes
/// a generator. Undefined iterates as empty.
StatusOr<std::vector<Value>> iterate(const Value &value);
/// Python's len().
StatusOr<int64_t> length(const Value &value);
/// Python's `item in container`.
StatusOr<bool> contains(const Value &container, const Value &item);

/// + - * / // % ** on two values (JinjaArithmetic.cpp).
StatusOr<Value> binaryOp(const std::string &op, const Value &a, const Value &b);
/// Unary minus (or plus when !minus).
StatusOr<Value> unaryOp(const Value &a, bool minus);

/// A string built from `receiver` keeps it being Markup (markupsafe's
/// methods return Markup).
Value stringLike(const Value &receiver, std::string s);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAOPS_H
