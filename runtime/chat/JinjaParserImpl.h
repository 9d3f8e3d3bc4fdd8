//===- JinjaParserImpl.h - the parser's class, shared by its two files -*- C++ -*-===//
//
// Internal to runtime/chat: JinjaParser.cpp parses statements, and
// JinjaExpressions.cpp expressions, with jinja2's grammar (parser.py).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAPARSERIMPL_H
#define INFER_RUNTIME_CHAT_JINJAPARSERIMPL_H

#include "runtime/chat/JinjaAst.h"
#include "runtime/chat/JinjaLexer.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace infer::chat::jinja {

/// Recursive descent over the lexer's tokens; each parse* method mirrors
/// the jinja2 Parser method of the same name.
class Parser {
public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  /// The whole template; then checks that every called name is a macro.
  StatusOr<Template> parse();

private:
  /// The parser (and the interpreter after it) recurses once per nested
  /// bracket, unary operator or block, and a template is untrusted input (it
  /// comes from an artifact or a model's directory): a few hundred nested
  /// '[' overflowed the stack (chat-template-fuzzer). Real templates nest a
  /// few levels.
  static constexpr int kMaxExpressionNesting = 128; ///< parseNot/parseUnary levels
  static constexpr int kMaxBlockNesting = 64;       ///< tags inside tags
  /// Counts one level while alive; `exceeded` when past `limit`.
  struct NestingLevel {
    NestingLevel(int &depth, int limit) : depth(depth), exceeded(++depth > limit) {}
    ~NestingLevel() { --depth; }
    int &depth;
    bool exceeded;
  };
  Status tooDeep(const char *what, int limit) const {
    return templateError(cur().line, std::string(what) + " nested more than " +
                                         std::to_string(limit) + " deep");
  }
  int expressionNesting_ = 0;
  int blockNesting_ = 0;

  //===--- Token stream (JinjaParser.cpp) ---------------------------------===//
  const Token &cur() const { return tokens_[pos_]; }
  const Token &look() const { return tokens_[std::min(pos_ + 1, tokens_.size() - 1)]; }
  void next() {
    if (pos_ + 1 < tokens_.size())
      ++pos_;
  }
  bool isName(const char *name) const {
    return cur().kind == TokenKind::kName && cur().text == name;
  }
  bool isOp(const char *op) const { return cur().kind == TokenKind::kOperator && cur().text == op; }
  bool skipName(const char *name) {
    if (!isName(name))
      return false;
    next();
    return true;
  }
  bool skipOp(const char *op) {
    if (!isOp(op))
      return false;
    next();
    return true;
  }
  std::string describe(const Token &token) const;
  Status unexpected(const std::string &wanted) const;
  Status expectOp(const char *op);
  Status expectKind(TokenKind kind, const char *what);
  StatusOr<std::string> expectName();

  //===--- Statements (JinjaParser.cpp) -----------------------------------===//
  /// Data, {{ }} and tags up to one of `endTokens` (left as the current
  /// token after its "{%").
  StatusOr<Body> subparse(const std::vector<std::string> &endTokens);
  /// jinja2's parse_statements: `%}`, the body, and the end tag's name.
  StatusOr<Body> parseStatements(const std::vector<std::string> &endTokens, bool dropNeedle);
  StatusOr<StmtPtr> parseStatement();
  StatusOr<StmtPtr> parseFor();
  StatusOr<StmtPtr> parseIf();
  /// Names separated by commas (a tuple target), up to `endName`.
  Status parseAssignTargets(Stmt &stmt, const char *endName);
  StatusOr<StmtPtr> parseSet();
  StatusOr<StmtPtr> parseFilterBlock();
  StatusOr<StmtPtr> parseMacro();

  //===--- Expressions (JinjaExpressions.cpp) -----------------------------===//
  ExprPtr make(ExprKind kind, int line) { return std::make_unique<Expr>(kind, line); }
  bool isTupleEnd(const std::vector<std::string> &extraEnd) const;
  StatusOr<ExprPtr> parseTuple(bool withCondexpr, const std::vector<std::string> &extraEnd,
                               bool explicitParentheses);
  StatusOr<ExprPtr> parseExpression(bool withCondexpr);
  StatusOr<ExprPtr> parseOr();
  StatusOr<ExprPtr> parseAnd();
  StatusOr<ExprPtr> parseNot();
  StatusOr<ExprPtr> parseCompare();
  StatusOr<ExprPtr> binary(ExprPtr left, const std::string &op, ExprPtr right, int line);
  StatusOr<ExprPtr> parseMath1();
  StatusOr<ExprPtr> parseConcat();
  StatusOr<ExprPtr> parseMath2();
  StatusOr<ExprPtr> parsePow();
  StatusOr<ExprPtr> parseUnary(bool withFilter);
  StatusOr<ExprPtr> parsePrimary();
  StatusOr<ExprPtr> parsePostfix(ExprPtr node);
  StatusOr<ExprPtr> parseSubscribed();
  /// `(args, key=value)` into node->items / node->kwargs.
  Status parseCallArgs(Expr &node);
  StatusOr<ExprPtr> parseCall(ExprPtr callee);
  /// Checks a test or filter named by a string argument (selectattr's
  /// 'equalto', map's 'upper').
  Status checkNamedArg(const Expr &node, size_t index, bool isTest);
  StatusOr<ExprPtr> parseFilters(ExprPtr node, bool startInline);
  StatusOr<ExprPtr> parseTest(ExprPtr node);
  StatusOr<ExprPtr> parseFilterExpr(ExprPtr node);

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  /// Loops around the current statement (break/continue need one); macros
  /// start again from zero.
  int loopDepth_ = 0;
  std::set<std::string> macroNames_;
  /// Calls of names that are not globals, each must be a macro.
  std::vector<std::pair<std::string, int>> calledNames_;
  /// Every name loaded so far, to find the varargs/kwargs a macro uses.
  std::vector<std::string> namesSeen_;
};

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAPARSERIMPL_H
