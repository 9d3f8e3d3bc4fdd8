//===- JinjaFrames.cpp - which names a scope starts without ---------------===//
//
// jinja2 resolves names statically per frame (jinja2/idtracking.py). A frame
// (the template, a loop body, a for-else, a macro, a set or filter block)
// whose first mention of a name is an unconditional `set`, when no
// enclosing frame mentions the name, starts with that name *undefined*: it
// shadows the render context from the frame's start, so a nested loop that
// reads it before the `set` sees Undefined, not the context's value:
//
//   {% for m in messages %}{{ n }}{% endfor %}{% set n = 1 %}  -> prints ""
//
// Every other name behaves as a dynamic lookup through the enclosing scopes
// and then the context, which is what the interpreter does; so this pass
// only computes those "undefined on entry" names. The analysis mirrors
// Symbols.load/store/branch_update: a name first set inside an `if` branch
// is looked up instead.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/JinjaAst.h"

#include <map>
#include <set>

namespace infer::chat::jinja {
namespace {

enum class Load { kParameter, kResolve, kAlias, kUndefined };

struct Symbols {
  const Symbols *parent = nullptr;
  std::map<std::string, Load> refs; // name -> how the frame initializes it
  std::set<std::string> stores;

  bool findRef(const std::string &name) const {
    for (const Symbols *s = this; s; s = s->parent)
      if (s->refs.count(name))
        return true;
    return false;
  }
  void load(const std::string &name) {
    if (!findRef(name))
      refs[name] = Load::kResolve;
  }
  void store(const std::string &name) {
    stores.insert(name);
    if (refs.count(name))
      return;
    refs[name] = parent && parent->findRef(name) ? Load::kAlias : Load::kUndefined;
  }
  void parameter(const std::string &name) {
    stores.insert(name);
    refs[name] = Load::kParameter;
  }
  void branchUpdate(const std::vector<Symbols> &branches) {
    std::set<std::string> branchStores;
    for (const Symbols &b : branches)
      for (const std::string &name : b.stores)
        if (!stores.count(name))
          branchStores.insert(name);
    for (const Symbols &b : branches) {
      for (const auto &[name, load] : b.refs)
        refs[name] = load;
      stores.insert(b.stores.begin(), b.stores.end());
    }
    for (const std::string &name : branchStores)
      refs[name] = parent && parent->findRef(name) ? Load::kAlias : Load::kResolve;
  }
};

/// A nested frame met while visiting its parent, analyzed once the parent's
/// symbols are complete (as jinja2 compiles children after the parent).
struct PendingFrame {
  Stmt *stmt;
  bool isElse;
};

void visitExpr(const Expr *expr, Symbols &syms) {
  if (!expr)
    return;
  if (expr->kind == ExprKind::kName)
    syms.load(expr->name);
  visitExpr(expr->a.get(), syms);
  visitExpr(expr->b.get(), syms);
  visitExpr(expr->c.get(), syms);
  for (const ExprPtr &item : expr->items)
    visitExpr(item.get(), syms);
  for (const auto &kwarg : expr->kwargs)
    visitExpr(kwarg.second.get(), syms);
}

void visitBody(Body &body, Symbols &syms, std::vector<PendingFrame> &pending);

/// jinja2's FrameSymbolVisitor.visit_If on branches[index...]: the first
/// branch's test in the frame, then body, the elif chain and else each in
/// a copy, merged by branch_update.
void visitIf(Stmt &stmt, size_t index, Body *elseBody, Symbols &syms,
             std::vector<PendingFrame> &pending) {
  visitExpr(stmt.branches[index].first.get(), syms);
  Symbols body = syms, elifs = syms, orElse = syms;
  visitBody(stmt.branches[index].second, body, pending);
  if (index == 0)
    for (size_t i = 1; i < stmt.branches.size(); ++i)
      visitIf(stmt, i, nullptr, elifs, pending);
  if (elseBody)
    visitBody(*elseBody, orElse, pending);
  syms.branchUpdate({body, elifs, orElse});
}

void visitStmt(Stmt &stmt, Symbols &syms, std::vector<PendingFrame> &pending) {
  switch (stmt.kind) {
  case StmtKind::kPrint:
    visitExpr(stmt.expr.get(), syms);
    break;
  case StmtKind::kIf:
    visitIf(stmt, 0, &stmt.elseBody, syms, pending);
    break;
  case StmtKind::kFor:
    visitExpr(stmt.expr.get(), syms);
    pending.push_back({&stmt, false});
    if (!stmt.elseBody.empty())
      pending.push_back({&stmt, true});
    break;
  case StmtKind::kSet:
    visitExpr(stmt.expr.get(), syms);
    if (!stmt.attr.empty()) {
      syms.load(stmt.targets[0]);
    } else {
      for (const std::string &target : stmt.targets)
        syms.store(target);
    }
    break;
  case StmtKind::kSetBlock:
    for (const std::string &target : stmt.targets)
      syms.store(target);
    pending.push_back({&stmt, false});
    break;
  case StmtKind::kMacro:
    syms.store(stmt.name);
    pending.push_back({&stmt, false});
    break;
  case StmtKind::kFilterBlock:
    visitExpr(stmt.filter.get(), syms);
    pending.push_back({&stmt, false});
    break;
  case StmtKind::kScope:
    pending.push_back({&stmt, false});
    break;
  case StmtKind::kData:
  case StmtKind::kBreak:
  case StmtKind::kContinue:
    break;
  }
}

void visitBody(Body &body, Symbols &syms, std::vector<PendingFrame> &pending) {
  for (StmtPtr &stmt : body)
    visitStmt(*stmt, syms, pending);
}

std::vector<std::string> undefinedOnEntry(const Symbols &syms) {
  std::vector<std::string> names;
  for (const auto &[name, load] : syms.refs)
    if (load == Load::kUndefined)
      names.push_back(name);
  return names;
}

void analyzeChildren(const Symbols &parent, std::vector<PendingFrame> &pending);

/// Analyzes one frame: its parameters, then its statements.
Symbols analyzeFrame(const Symbols *parent, Stmt &owner, bool isElse,
                     std::vector<PendingFrame> &pending) {
  Symbols syms;
  syms.parent = parent;
  switch (owner.kind) {
  case StmtKind::kFor:
    if (isElse) {
      visitBody(owner.elseBody, syms, pending);
    } else {
      syms.parameter("loop");
      for (const std::string &target : owner.targets)
        syms.parameter(target);
      visitBody(owner.body, syms, pending);
    }
    break;
  case StmtKind::kMacro:
    for (const std::string &param : owner.params)
      syms.parameter(param);
    for (const ExprPtr &value : owner.defaults)
      visitExpr(value.get(), syms);
    visitBody(owner.body, syms, pending);
    break;
  case StmtKind::kFilterBlock:
    visitBody(owner.body, syms, pending);
    visitExpr(owner.filter.get(), syms);
    break;
  default: // kSetBlock, kScope
    visitBody(owner.body, syms, pending);
    break;
  }
  return syms;
}

void analyzeChildren(const Symbols &parent, std::vector<PendingFrame> &pending) {
  for (const PendingFrame &frame : pending) {
    std::vector<PendingFrame> nested;
    Symbols syms = analyzeFrame(&parent, *frame.stmt, frame.isElse, nested);
    (frame.isElse ? frame.stmt->elseUndefined : frame.stmt->bodyUndefined) = undefinedOnEntry(syms);
    analyzeChildren(syms, nested);
  }
}

} // namespace

void analyzeFrames(Template &tmpl) {
  Symbols root;
  std::vector<PendingFrame> pending;
  visitBody(tmpl.body, root, pending);
  tmpl.bodyUndefined = undefinedOnEntry(root);
  analyzeChildren(root, pending);
}

} // namespace infer::chat::jinja
