//===- JinjaAst.h - the parsed form of a chat template ----------*- C++ -*-===//
//
// One node type for expressions and one for statements, each tagged with its
// kind and source line; fields a kind does not use stay empty. The parser
// has already checked every filter, test, method and global against the
// supported subset, so the interpreter can look them up by name.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAAST_H
#define INFER_RUNTIME_CHAT_JINJAAST_H

#include "runtime/chat/JinjaValue.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace infer::chat::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : uint8_t {
  kConst,    ///< value
  kName,     ///< name
  kList,     ///< items
  kTuple,    ///< items
  kDict,     ///< items: key, value, key, value, ...
  kGetAttr,  ///< a.name
  kGetItem,  ///< a[b]
  kSlice,    ///< a, b, c: start, stop, step (each may be null)
  kCall,     ///< a(items, kwargs)
  kFilter,   ///< a | name(items, kwargs); a is null inside {% filter %}
  kTest,     ///< a is name(items, kwargs)
  kNeg,      ///< -a
  kPos,      ///< +a
  kNot,      ///< not a
  kBinary,   ///< a name b, name one of + - * / // % **
  kAnd,      ///< a and b
  kOr,       ///< a or b
  kConcat,   ///< items joined with ~
  kCompare,  ///< a ops[0] items[0] ops[1] items[1] ...
  kCondExpr, ///< a if b else c (c may be null)
};

struct Expr {
  ExprKind kind;
  int line = 0;
  Value value;
  std::string name;
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;
  std::vector<std::string> ops;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;

  Expr(ExprKind kind, int line) : kind(kind), line(line) {}
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind : uint8_t {
  kData,        ///< text
  kPrint,       ///< {{ expr }}
  kIf,          ///< branches (condition, body), elseBody
  kFor,         ///< for targets in expr [if filter]: body, elseBody
  kSet,         ///< set targets = expr, or set targets[0].attr = expr
  kSetBlock,    ///< set targets[0] [| filter] %}body{% endset
  kMacro,       ///< macro name(params=defaults): body
  kFilterBlock, ///< filter filter %}body{% endfilter
  kScope,       ///< a body with its own scope ({% generation %})
  kBreak,
  kContinue,
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  /// kFor's `if` clause; kSetBlock's and kFilterBlock's filter chain (its
  /// innermost kFilter has a null input).
  ExprPtr filter;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body elseBody;
  /// Names assigned: the loop or set targets (several when unpacking).
  std::vector<std::string> targets;
  bool unpack = false;
  /// `set ns.attr = ...`: the attribute (targets[0] is the namespace).
  std::string attr;
  /// kMacro: name, parameters and the defaults of the last ones.
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;
  /// kMacro: whether the body mentions `varargs` / `kwargs`, which lets
  /// callers pass extra positional / keyword arguments.
  bool catchVarargs = false;
  bool catchKwargs = false;
  /// Names that start out undefined in the scope of `body` (and of
  /// `elseBody` for kFor): see JinjaFrames.cpp.
  std::vector<std::string> bodyUndefined;
  std::vector<std::string> elseUndefined;

  Stmt(StmtKind kind, int line) : kind(kind), line(line) {}
};

/// A parsed template.
struct Template {
  Body body;
  std::vector<std::string> bodyUndefined;
};

/// Works out, as jinja2's compiler does, which names each scope declares
/// undefined on entry, filling the *Undefined fields.
void analyzeFrames(Template &tmpl);

/// "chat template line <line>: <message>", the form of every error the
/// lexer, parser and interpreter report.
Status templateError(int line, const std::string &message);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAAST_H
