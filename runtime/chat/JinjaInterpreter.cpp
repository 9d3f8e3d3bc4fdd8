//===- JinjaInterpreter.cpp - renders a parsed template -------------------===//

#include "runtime/chat/JinjaInterpreter.h"

#include "runtime/chat/JinjaBuiltins.h"
#include "runtime/chat/JinjaFormat.h"
#include "runtime/chat/JinjaOps.h"
#include "runtime/chat/JinjaParser.h"

#include <functional>

namespace infer::chat::jinja {

const Value *Scope::find(const std::string &name) const {
  return findEntry(vars, name, std::equal_to<>());
}

void Scope::set(const std::string &name, Value value) {
  setEntry(vars, name, std::move(value), std::equal_to<>());
}

namespace {

using ScopePtr = std::shared_ptr<Scope>;

/// Deeper macro recursion than this is refused (Python would hit its
/// recursion limit somewhat later).
constexpr int kMaxMacroDepth = 100;

/// Prefixes the line of the construct that failed, once.
Status locate(const Status &status, int line) {
  if (status.message().rfind("chat template line ", 0) == 0)
    return status;
  std::string message = status.message();
  if (status.code() == kRaisedCode)
    message = "raise_exception: " + message;
  return Status(status.code(), "chat template line " + std::to_string(line) + ": " + message);
}

class Interpreter {
public:
  explicit Interpreter(const Dict &context) : context_(context) {}

  /// Macros hold the scope they were defined in, which holds them: the
  /// scopes and namespaces still alive after rendering are emptied to
  /// break those reference cycles.
  ~Interpreter() {
    for (const std::weak_ptr<Scope> &weak : scopes_)
      if (ScopePtr scope = weak.lock())
        scope->vars.clear();
    for (const std::weak_ptr<Namespace> &weak : namespaces_)
      if (std::shared_ptr<Namespace> ns = weak.lock())
        ns->attrs.clear();
  }

  StatusOr<std::string> run(const Template &tmpl) {
    std::string out;
    Flow flow = Flow::kNormal;
    RETURN_IF_ERROR(execBody(tmpl.body, child(nullptr, tmpl.bodyUndefined), out, flow));
    return out;
  }

private:
  /// A scope for a jinja2 frame: over `parent`, with the names the frame
  /// starts without bound to Undefined (see JinjaFrames.cpp).
  ScopePtr child(const ScopePtr &parent, const std::vector<std::string> &undefinedOnEntry = {}) {
    auto scope = std::make_shared<Scope>();
    scope->parent = parent;
    for (const std::string &name : undefinedOnEntry)
      scope->set(name, Value::undefined("'" + name + "' is undefined"));
    scopes_.push_back(scope);
    return scope;
  }

  enum class Flow { kNormal, kBreak, kContinue };

  //===--- Statements ----------------------------------------------------===//

  Status execBody(const Body &body, const ScopePtr &scope, std::string &out, Flow &flow) {
    for (const StmtPtr &stmt : body) {
      Status status = exec(*stmt, scope, out, flow);
      if (!status.ok())
        return locate(status, stmt->line);
      if (flow != Flow::kNormal)
        break;
    }
    return okStatus();
  }

  /// Binds `value` to one target, or unpacks it over several.
  Status assign(const Stmt &stmt, const Value &value, Scope &scope) {
    if (!stmt.unpack) {
      scope.set(stmt.targets[0], value);
      return okStatus();
    }
    ASSIGN_OR_RETURN(std::vector<Value> items, iterate(value));
    if (items.size() < stmt.targets.size())
      return invalidArgumentError("not enough values to unpack (expected " +
                                  std::to_string(stmt.targets.size()) + ", got " +
                                  std::to_string(items.size()) + ")");
    if (items.size() > stmt.targets.size())
      return invalidArgumentError("too many values to unpack (expected " +
                                  std::to_string(stmt.targets.size()) + ")");
    for (size_t i = 0; i < items.size(); ++i)
      scope.set(stmt.targets[i], items[i]);
    return okStatus();
  }

  /// Applies a filter chain whose innermost input is `input`.
  StatusOr<Value> applyChain(const Expr &filter, const Value &input, const ScopePtr &scope) {
    Value value = input;
    if (filter.a) {
      ASSIGN_OR_RETURN(value, applyChain(*filter.a, input, scope));
    }
    ASSIGN_OR_RETURN(CallArgs args, evalArgs(filter, scope));
    return applyFilter(filter.name, value, args);
  }

  Status execFor(const Stmt &stmt, const ScopePtr &scope, std::string &out, Flow &flow) {
    ASSIGN_OR_RETURN(Value iterable, eval(*stmt.expr, scope));
    ASSIGN_OR_RETURN(std::vector<Value> all, iterate(iterable));
    auto items = std::make_shared<std::vector<Value>>();
    if (stmt.filter) {
      for (const Value &item : all) {
        ScopePtr test = child(scope);
        RETURN_IF_ERROR(assign(stmt, item, *test));
        ASSIGN_OR_RETURN(Value keep, eval(*stmt.filter, test));
        if (keep.truthy())
          items->push_back(item);
      }
    } else {
      *items = std::move(all);
    }
    // jinja2 skips the else block once an iteration ran to the end of the
    // body; iterations cut short by break or continue do not count.
    bool completed = false;
    for (size_t i = 0; i < items->size(); ++i) {
      ScopePtr iteration = child(scope, stmt.bodyUndefined);
      RETURN_IF_ERROR(assign(stmt, (*items)[i], *iteration));
      auto loop = std::make_shared<LoopState>();
      loop->index0 = static_cast<int64_t>(i);
      loop->items = items;
      iteration->set("loop", Value::loop(std::move(loop)));
      Flow bodyFlow = Flow::kNormal;
      RETURN_IF_ERROR(execBody(stmt.body, iteration, out, bodyFlow));
      if (bodyFlow == Flow::kBreak)
        break;
      completed = completed || bodyFlow == Flow::kNormal;
    }
    if (!completed && !stmt.elseBody.empty())
      return execBody(stmt.elseBody, child(scope, stmt.elseUndefined), out, flow);
    return okStatus();
  }

  Status exec(const Stmt &stmt, const ScopePtr &scope, std::string &out, Flow &flow) {
    switch (stmt.kind) {
    case StmtKind::kData:
      out += stmt.text;
      return okStatus();
    case StmtKind::kPrint: {
      ASSIGN_OR_RETURN(Value value, eval(*stmt.expr, scope));
      ASSIGN_OR_RETURN(std::string text, pyStr(value));
      out += text;
      return okStatus();
    }
    case StmtKind::kIf:
      for (const auto &[test, body] : stmt.branches) {
        ASSIGN_OR_RETURN(Value cond, eval(*test, scope));
        if (cond.truthy())
          return execBody(body, scope, out, flow);
      }
      return execBody(stmt.elseBody, scope, out, flow);
    case StmtKind::kFor:
      return execFor(stmt, scope, out, flow);
    case StmtKind::kSet: {
      ASSIGN_OR_RETURN(Value value, eval(*stmt.expr, scope));
      if (stmt.attr.empty())
        return assign(stmt, value, *scope);
      ASSIGN_OR_RETURN(Value target, lookup(stmt.targets[0], *scope));
      if (target.kind() != ValueKind::kNamespace)
        return invalidArgumentError("cannot assign attribute on non-namespace object");
      target.ns().set(stmt.attr, std::move(value));
      return okStatus();
    }
    case StmtKind::kSetBlock:
    case StmtKind::kFilterBlock: {
      std::string captured;
      Flow inner = Flow::kNormal;
      RETURN_IF_ERROR(execBody(stmt.body, child(scope, stmt.bodyUndefined), captured, inner));
      Value value = Value::string(std::move(captured));
      if (stmt.filter) {
        ASSIGN_OR_RETURN(value, applyChain(*stmt.filter, value, scope));
      }
      if (stmt.kind == StmtKind::kSetBlock)
        return assign(stmt, value, *scope);
      ASSIGN_OR_RETURN(std::string text, pyStr(value));
      out += text;
      return okStatus();
    }
    case StmtKind::kMacro: {
      auto macro = std::make_shared<Callable>();
      macro->kind = CallableKind::kMacro;
      macro->name = stmt.name;
      macro->macro = &stmt;
      macro->closure = scope;
      scope->set(stmt.name, Value::callable(std::move(macro)));
      return okStatus();
    }
    case StmtKind::kScope:
      return execBody(stmt.body, child(scope, stmt.bodyUndefined), out, flow);
    case StmtKind::kBreak:
      flow = Flow::kBreak;
      return okStatus();
    case StmtKind::kContinue:
      flow = Flow::kContinue;
      return okStatus();
    }
    return okStatus();
  }

  //===--- Expressions ---------------------------------------------------===//

  StatusOr<Value> lookup(const std::string &name, const Scope &scope) const {
    for (const Scope *s = &scope; s; s = s->parent.get())
      if (const Value *value = s->find(name))
        return *value;
    if (const Value *value = context_.find(Value::string(name)))
      return *value;
    if (isSupportedGlobal(name))
      return globalFunction(name);
    return Value::undefined("'" + name + "' is undefined");
  }

  StatusOr<CallArgs> evalArgs(const Expr &call, const ScopePtr &scope) {
    CallArgs args;
    for (const ExprPtr &arg : call.items) {
      ASSIGN_OR_RETURN(Value value, eval(*arg, scope));
      args.args.push_back(std::move(value));
    }
    for (const auto &[key, arg] : call.kwargs) {
      ASSIGN_OR_RETURN(Value value, eval(*arg, scope));
      args.kwargs.emplace_back(key, std::move(value));
    }
    return args;
  }

  StatusOr<Value> callMacro(const Callable &macro, const CallArgs &call) {
    const Stmt &def = *macro.macro;
    const std::string where = "macro '" + def.name + "'";
    if (call.args.size() > def.params.size() && !def.catchVarargs)
      return invalidArgumentError(where + " takes not more than " +
                                  std::to_string(def.params.size()) + " argument(s)");
    ScopePtr scope = child(macro.closure, def.bodyUndefined);
    std::vector<bool> given(def.params.size(), false);
    for (size_t i = 0; i < call.args.size() && i < def.params.size(); ++i) {
      scope->set(def.params[i], call.args[i]);
      given[i] = true;
    }
    auto extraKwargs = std::make_shared<Dict>();
    for (const auto &[key, value] : call.kwargs) {
      size_t i = 0;
      while (i < def.params.size() && def.params[i] != key)
        ++i;
      if (i == def.params.size()) {
        if (!def.catchKwargs)
          return invalidArgumentError(where + " takes no keyword argument '" + key + "'");
        extraKwargs->set(Value::string(key), value);
        continue;
      }
      if (given[i])
        return invalidArgumentError(where + " got multiple values for argument '" + key + "'");
      scope->set(key, value);
      given[i] = true;
    }
    size_t firstDefault = def.params.size() - def.defaults.size();
    for (size_t i = 0; i < def.params.size(); ++i) {
      if (given[i])
        continue;
      if (i >= firstDefault) {
        ASSIGN_OR_RETURN(Value value, eval(*def.defaults[i - firstDefault], scope));
        scope->set(def.params[i], std::move(value));
      } else {
        scope->set(def.params[i], Value::undefined("'" + def.params[i] + "' is undefined"));
      }
    }
    if (def.catchVarargs) {
      std::vector<Value> extra;
      for (size_t i = def.params.size(); i < call.args.size(); ++i)
        extra.push_back(call.args[i]);
      scope->set("varargs", Value::tuple(std::move(extra)));
    }
    if (def.catchKwargs)
      scope->set("kwargs", Value::dict(std::move(extraKwargs)));
    if (depth_ >= kMaxMacroDepth)
      return invalidArgumentError(where + " recursed more than " + std::to_string(kMaxMacroDepth) +
                                  " levels");
    ++depth_;
    std::string out;
    Flow flow = Flow::kNormal;
    Status status = execBody(def.body, scope, out, flow);
    --depth_;
    RETURN_IF_ERROR(status);
    return Value::string(std::move(out));
  }

  StatusOr<Value> evalCall(const Expr &expr, const ScopePtr &scope) {
    const Expr &callee = *expr.a;
    Value function;
    if (callee.kind == ExprKind::kGetAttr) {
      ASSIGN_OR_RETURN(Value object, eval(*callee.a, scope));
      ASSIGN_OR_RETURN(function, getAttr(object, callee.name));
    } else {
      ASSIGN_OR_RETURN(function, eval(callee, scope));
    }
    ASSIGN_OR_RETURN(CallArgs args, evalArgs(expr, scope));
    if (function.isUndefined())
      return undefinedError(function);
    if (function.kind() != ValueKind::kCallable)
      return invalidArgumentError("'" + function.typeName() + "' object is not callable");
    const Callable &callable = function.callable();
    switch (callable.kind) {
    case CallableKind::kBuiltin: {
      ASSIGN_OR_RETURN(Value result, callGlobal(callable.name, args));
      if (result.kind() == ValueKind::kNamespace)
        namespaces_.push_back(result.nsPtr());
      return result;
    }
    case CallableKind::kBoundMethod:
      return callMethod(callable, args);
    case CallableKind::kMacro:
      return callMacro(callable, args);
    }
    return invalidArgumentError("not callable");
  }

  StatusOr<bool> compare(const std::string &op, const Value &a, const Value &b) {
    if (op == "==")
      return pyEquals(a, b);
    if (op == "!=")
      return !pyEquals(a, b);
    if (op == "in")
      return contains(b, a);
    if (op == "not in") {
      ASSIGN_OR_RETURN(bool in, contains(b, a));
      return !in;
    }
    CmpOp cmp = op == "<"    ? CmpOp::kLt
                : op == "<=" ? CmpOp::kLe
                : op == ">"  ? CmpOp::kGt
                             : CmpOp::kGe;
    return pyCompare(a, b, cmp);
  }

  StatusOr<Value> eval(const Expr &expr, const ScopePtr &scope) {
    StatusOr<Value> result = evalInner(expr, scope);
    if (!result.ok())
      return locate(result.status(), expr.line);
    return result;
  }

  StatusOr<Value> evalInner(const Expr &expr, const ScopePtr &scope) {
    switch (expr.kind) {
    case ExprKind::kConst:
      return expr.value;
    case ExprKind::kName:
      return lookup(expr.name, *scope);
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      for (const ExprPtr &item : expr.items) {
        ASSIGN_OR_RETURN(Value value, eval(*item, scope));
        items.push_back(std::move(value));
      }
      return expr.kind == ExprKind::kList ? Value::list(std::move(items))
                                          : Value::tuple(std::move(items));
    }
    case ExprKind::kDict: {
      auto dict = std::make_shared<Dict>();
      for (size_t i = 0; i + 1 < expr.items.size(); i += 2) {
        ASSIGN_OR_RETURN(Value key, eval(*expr.items[i], scope));
        ASSIGN_OR_RETURN(Value value, eval(*expr.items[i + 1], scope));
        if (!isHashable(key))
          return invalidArgumentError("unhashable type: '" + key.typeName() + "'");
        dict->set(std::move(key), std::move(value));
      }
      return Value::dict(std::move(dict));
    }
    case ExprKind::kGetAttr: {
      ASSIGN_OR_RETURN(Value object, eval(*expr.a, scope));
      return getAttr(object, expr.name);
    }
    case ExprKind::kGetItem: {
      ASSIGN_OR_RETURN(Value object, eval(*expr.a, scope));
      if (expr.b->kind == ExprKind::kSlice) {
        const Expr &slice = *expr.b;
        Value bounds[3] = {Value::none(), Value::none(), Value::none()};
        const ExprPtr *parts[3] = {&slice.a, &slice.b, &slice.c};
        for (int i = 0; i < 3; ++i)
          if (*parts[i]) {
            ASSIGN_OR_RETURN(bounds[i], eval(**parts[i], scope));
          }
        return getSlice(object, bounds[0], bounds[1], bounds[2]);
      }
      ASSIGN_OR_RETURN(Value key, eval(*expr.b, scope));
      return getItem(object, key);
    }
    case ExprKind::kSlice:
      return invalidArgumentError("a slice outside [] is not supported");
    case ExprKind::kCall:
      return evalCall(expr, scope);
    case ExprKind::kFilter: {
      ASSIGN_OR_RETURN(Value input, eval(*expr.a, scope));
      ASSIGN_OR_RETURN(CallArgs args, evalArgs(expr, scope));
      return applyFilter(expr.name, input, args);
    }
    case ExprKind::kTest: {
      ASSIGN_OR_RETURN(Value input, eval(*expr.a, scope));
      ASSIGN_OR_RETURN(CallArgs args, evalArgs(expr, scope));
      ASSIGN_OR_RETURN(bool passed, applyTest(expr.name, input, args));
      return Value::boolean(passed);
    }
    case ExprKind::kNeg:
    case ExprKind::kPos: {
      ASSIGN_OR_RETURN(Value operand, eval(*expr.a, scope));
      return unaryOp(operand, expr.kind == ExprKind::kNeg);
    }
    case ExprKind::kNot: {
      ASSIGN_OR_RETURN(Value operand, eval(*expr.a, scope));
      return Value::boolean(!operand.truthy());
    }
    case ExprKind::kBinary: {
      ASSIGN_OR_RETURN(Value left, eval(*expr.a, scope));
      ASSIGN_OR_RETURN(Value right, eval(*expr.b, scope));
      return binaryOp(expr.name, left, right);
    }
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      ASSIGN_OR_RETURN(Value left, eval(*expr.a, scope));
      if (left.truthy() == (expr.kind == ExprKind::kOr))
        return left;
      return eval(*expr.b, scope);
    }
    case ExprKind::kConcat: {
      std::string out;
      for (const ExprPtr &item : expr.items) {
        ASSIGN_OR_RETURN(Value value, eval(*item, scope));
        ASSIGN_OR_RETURN(std::string text, pyStr(value));
        out += text;
      }
      return Value::string(std::move(out));
    }
    case ExprKind::kCompare: {
      ASSIGN_OR_RETURN(Value left, eval(*expr.a, scope));
      for (size_t i = 0; i < expr.ops.size(); ++i) {
        ASSIGN_OR_RETURN(Value right, eval(*expr.items[i], scope));
        ASSIGN_OR_RETURN(bool holds, compare(expr.ops[i], left, right));
        if (!holds)
          return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case ExprKind::kCondExpr: {
      ASSIGN_OR_RETURN(Value cond, eval(*expr.b, scope));
      if (cond.truthy())
        return eval(*expr.a, scope);
      if (expr.c)
        return eval(*expr.c, scope);
      return Value::undefined("the inline if-expression evaluated to false and no else "
                              "section was defined.");
    }
    }
    return invalidArgumentError("unknown expression");
  }

  const Dict &context_;
  int depth_ = 0;
  std::vector<std::weak_ptr<Scope>> scopes_;
  std::vector<std::weak_ptr<Namespace>> namespaces_;
};

} // namespace

StatusOr<std::string> renderTemplate(const Template &tmpl, const Value &context) {
  if (!context.isDict())
    return invalidArgumentError("chat template context must be a JSON object");
  Interpreter interpreter(context.dict());
  return interpreter.run(tmpl);
}

} // namespace infer::chat::jinja
