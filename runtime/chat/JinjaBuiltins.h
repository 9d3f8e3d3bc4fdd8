//===- JinjaBuiltins.h - filters, tests, methods and globals ----*- C++ -*-===//
//
// The callable part of the subset, each with the Python signature and
// behaviour of jinja2 3.1 (filters and tests), CPython (str, dict and list
// methods) and transformers (tojson, raise_exception, strftime_now). The
// parser has checked the names; these check the arguments.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJABUILTINS_H
#define INFER_RUNTIME_CHAT_JINJABUILTINS_H

#include "runtime/chat/JinjaValue.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace infer::chat::jinja {

/// Evaluated call arguments.
struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
};

/// Binds `args` to parameter `names` the way Python does (positionally,
/// then by keyword); missing optional parameters are nullopt. Errors name
/// `function`, e.g. "replace() missing required argument 'new'".
StatusOr<std::vector<std::optional<Value>>> bindArgs(const std::string &function,
                                                     const CallArgs &args,
                                                     std::initializer_list<const char *> names,
                                                     size_t required);

StatusOr<Value> applyFilter(const std::string &name, const Value &input, const CallArgs &args);
StatusOr<bool> applyTest(const std::string &name, const Value &input, const CallArgs &args);
/// Calls a bound method (see getAttr) with its receiver.
StatusOr<Value> callMethod(const Callable &method, const CallArgs &args);
/// Calls a global function (raise_exception, strftime_now, namespace,
/// range, dict).
StatusOr<Value> callGlobal(const std::string &name, const CallArgs &args);
/// The value a template sees for a global function's name.
Value globalFunction(const std::string &name);

/// The status code of errors from raise_exception(), so callers can tell a
/// conversation the template rejects from a template that failed.
constexpr StatusCode kRaisedCode = StatusCode::kFailedPrecondition;

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJABUILTINS_H
