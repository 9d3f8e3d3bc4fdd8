//===- JinjaInterpreter.h - renders a parsed template -----------*- C++ -*-===//
//
// Scoping follows jinja2: `{% if %}` shares its scope, each `{% for %}`
// iteration starts a fresh scope over the enclosing one (so a `set` in a
// loop body is gone in the next iteration and after the loop; namespace()
// objects carry state out), and a macro body runs in a scope over the one
// it was defined in, seeing that scope's variables as they are at the call.
// Names a scope starts without (JinjaFrames.cpp) are bound to Undefined on
// entry, so they hide the render context as jinja2's compiled frames do.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAINTERPRETER_H
#define INFER_RUNTIME_CHAT_JINJAINTERPRETER_H

#include "runtime/chat/JinjaAst.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace infer::chat::jinja {

/// Variables assigned in one scope; lookups walk `parent`.
struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  const Value *find(const std::string &name) const;
  void set(const std::string &name, Value value);
};

/// Renders `tmpl` with the variables in `context` (a dict with string
/// keys); errors carry the template line.
StatusOr<std::string> renderTemplate(const Template &tmpl, const Value &context);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAINTERPRETER_H
