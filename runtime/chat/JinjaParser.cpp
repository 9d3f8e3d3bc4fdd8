//===- JinjaParser.cpp - tokens to a checked template AST -----------------===//
//
// The statement half of the parser (tags, as in jinja2/parser.py) and the
// entry point; expressions are in JinjaExpressions.cpp. Tags outside the
// subset (include, extends, import, call, with, do, ...) are refused here.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/JinjaParser.h"

#include "runtime/chat/JinjaParserImpl.h"

namespace infer::chat::jinja {

StatusOr<Template> Parser::parse() {
  Template result;
  ASSIGN_OR_RETURN(result.body, subparse({}));
  for (const auto &[name, line] : calledNames_)
    if (!macroNames_.count(name))
      return templateError(line, "function '" + name + "' is not supported");
  return result;
}

std::string Parser::describe(const Token &token) const {
  switch (token.kind) {
  case TokenKind::kEof:
    return "end of template";
  case TokenKind::kBlockEnd:
    return "end of statement block";
  case TokenKind::kVariableEnd:
    return "end of print statement";
  case TokenKind::kBlockBegin:
    return "begin of statement block";
  case TokenKind::kVariableBegin:
    return "begin of print statement";
  case TokenKind::kData:
    return "template data";
  default:
    return "'" + token.text + "'";
  }
}

Status Parser::unexpected(const std::string &wanted) const {
  return templateError(cur().line, "expected " + wanted + ", got " + describe(cur()));
}

Status Parser::expectOp(const char *op) {
  if (!skipOp(op))
    return unexpected(std::string("'") + op + "'");
  return okStatus();
}

Status Parser::expectKind(TokenKind kind, const char *what) {
  if (cur().kind != kind)
    return unexpected(what);
  next();
  return okStatus();
}

StatusOr<std::string> Parser::expectName() {
  if (cur().kind != TokenKind::kName)
    return unexpected("a name");
  std::string name = cur().text;
  next();
  return name;
}

StatusOr<Body> Parser::subparse(const std::vector<std::string> &endTokens) {
  Body body;
  while (cur().kind != TokenKind::kEof) {
    const Token &token = cur();
    if (token.kind == TokenKind::kData) {
      auto stmt = std::make_unique<Stmt>(StmtKind::kData, token.line);
      stmt->text = token.text;
      body.push_back(std::move(stmt));
      next();
    } else if (token.kind == TokenKind::kVariableBegin) {
      next();
      auto stmt = std::make_unique<Stmt>(StmtKind::kPrint, token.line);
      ASSIGN_OR_RETURN(stmt->expr, parseTuple(/*withCondexpr=*/true, {}, false));
      RETURN_IF_ERROR(expectKind(TokenKind::kVariableEnd, "end of print statement"));
      body.push_back(std::move(stmt));
    } else if (token.kind == TokenKind::kBlockBegin) {
      next();
      if (cur().kind == TokenKind::kName)
        for (const std::string &end : endTokens)
          if (cur().text == end)
            return body;
      ASSIGN_OR_RETURN(StmtPtr stmt, parseStatement());
      if (stmt)
        body.push_back(std::move(stmt));
      RETURN_IF_ERROR(expectKind(TokenKind::kBlockEnd, "end of statement block"));
    } else {
      return unexpected("template data or a tag");
    }
  }
  return body;
}

/// jinja2's parse_statements: `%}`, the body, and the end tag's name.
StatusOr<Body> Parser::parseStatements(const std::vector<std::string> &endTokens, bool dropNeedle) {
  skipOp(":");
  RETURN_IF_ERROR(expectKind(TokenKind::kBlockEnd, "end of statement block"));
  ASSIGN_OR_RETURN(Body body, subparse(endTokens));
  if (cur().kind == TokenKind::kEof) {
    std::string wanted;
    for (const std::string &end : endTokens)
      wanted += (wanted.empty() ? "'" : " or '") + end + "'";
    return templateError(cur().line, "unexpected end of template, expected " + wanted);
  }
  if (dropNeedle)
    next();
  return body;
}

StatusOr<StmtPtr> Parser::parseStatement() {
  NestingLevel level(blockNesting_, kMaxBlockNesting);
  if (level.exceeded)
    return tooDeep("tags", kMaxBlockNesting);
  if (cur().kind != TokenKind::kName)
    return templateError(cur().line, "tag name expected");
  std::string tag = cur().text;
  int line = cur().line;
  if (tag == "for")
    return parseFor();
  if (tag == "if")
    return parseIf();
  if (tag == "set")
    return parseSet();
  if (tag == "macro")
    return parseMacro();
  if (tag == "filter")
    return parseFilterBlock();
  if (tag == "print") {
    next();
    auto stmt = std::make_unique<Stmt>(StmtKind::kPrint, line);
    ASSIGN_OR_RETURN(stmt->expr, parseTuple(true, {}, false));
    return stmt;
  }
  if (tag == "generation") {
    // transformers' AssistantTracker: marks assistant text, renders as is.
    next();
    auto stmt = std::make_unique<Stmt>(StmtKind::kScope, line);
    ASSIGN_OR_RETURN(stmt->body, parseStatements({"endgeneration"}, true));
    return stmt;
  }
  if (tag == "break" || tag == "continue") {
    if (loopDepth_ == 0)
      return templateError(line, "'" + tag + "' outside of a loop");
    next();
    return std::make_unique<Stmt>(tag == "break" ? StmtKind::kBreak : StmtKind::kContinue, line);
  }
  if (tag.rfind("end", 0) == 0 || tag == "else" || tag == "elif")
    return templateError(line, "unexpected '" + tag + "'");
  return templateError(line, "tag '" + tag + "' is not supported");
}

StatusOr<StmtPtr> Parser::parseFor() {
  auto stmt = std::make_unique<Stmt>(StmtKind::kFor, cur().line);
  next();
  RETURN_IF_ERROR(parseAssignTargets(*stmt, "in"));
  if (!skipName("in"))
    return unexpected("'in'");
  ASSIGN_OR_RETURN(stmt->expr, parseTuple(/*withCondexpr=*/false, {"recursive"}, false));
  if (skipName("if")) {
    ASSIGN_OR_RETURN(stmt->filter, parseExpression(true));
  }
  if (isName("recursive"))
    return templateError(cur().line, "recursive loops are not supported");
  ++loopDepth_;
  ASSIGN_OR_RETURN(stmt->body, parseStatements({"endfor", "else"}, false));
  --loopDepth_;
  bool isElse = cur().text == "else";
  next();
  if (isElse) {
    ASSIGN_OR_RETURN(stmt->elseBody, parseStatements({"endfor"}, true));
  }
  return stmt;
}

StatusOr<StmtPtr> Parser::parseIf() {
  auto stmt = std::make_unique<Stmt>(StmtKind::kIf, cur().line);
  next();
  while (true) {
    ASSIGN_OR_RETURN(ExprPtr test, parseTuple(/*withCondexpr=*/false, {}, false));
    ASSIGN_OR_RETURN(Body body, parseStatements({"elif", "else", "endif"}, false));
    stmt->branches.emplace_back(std::move(test), std::move(body));
    std::string token = cur().text;
    next();
    if (token == "elif")
      continue;
    if (token == "else") {
      ASSIGN_OR_RETURN(stmt->elseBody, parseStatements({"endif"}, true));
    }
    break;
  }
  return stmt;
}

/// Names separated by commas (a tuple target), up to `endName`.
Status Parser::parseAssignTargets(Stmt &stmt, const char *endName) {
  while (true) {
    if (skipOp("(")) {
      return templateError(cur().line, "nested unpacking targets are not supported");
    }
    if (cur().kind != TokenKind::kName)
      return templateError(cur().line, "can't assign to " + describe(cur()));
    stmt.targets.push_back(cur().text);
    next();
    if (!skipOp(","))
      break;
    stmt.unpack = true;
    if (cur().kind == TokenKind::kBlockEnd || isOp("=") || (endName && isName(endName)))
      break;
  }
  return okStatus();
}

StatusOr<StmtPtr> Parser::parseSet() {
  auto stmt = std::make_unique<Stmt>(StmtKind::kSet, cur().line);
  next();
  if (cur().kind == TokenKind::kName && look().kind == TokenKind::kOperator && look().text == ".") {
    stmt->targets.push_back(cur().text);
    next();
    next();
    ASSIGN_OR_RETURN(stmt->attr, expectName());
  } else {
    RETURN_IF_ERROR(parseAssignTargets(*stmt, nullptr));
  }
  if (skipOp("=")) {
    ASSIGN_OR_RETURN(stmt->expr, parseTuple(true, {}, false));
    return stmt;
  }
  if (!stmt->attr.empty() || stmt->unpack)
    return unexpected("'='");
  stmt->kind = StmtKind::kSetBlock;
  if (isOp("|")) {
    ASSIGN_OR_RETURN(stmt->filter, parseFilters(nullptr, /*startInline=*/false));
  }
  ASSIGN_OR_RETURN(stmt->body, parseStatements({"endset"}, true));
  return stmt;
}

StatusOr<StmtPtr> Parser::parseFilterBlock() {
  auto stmt = std::make_unique<Stmt>(StmtKind::kFilterBlock, cur().line);
  next();
  ASSIGN_OR_RETURN(stmt->filter, parseFilters(nullptr, /*startInline=*/true));
  ASSIGN_OR_RETURN(stmt->body, parseStatements({"endfilter"}, true));
  return stmt;
}

StatusOr<StmtPtr> Parser::parseMacro() {
  auto stmt = std::make_unique<Stmt>(StmtKind::kMacro, cur().line);
  next();
  ASSIGN_OR_RETURN(stmt->name, expectName());
  RETURN_IF_ERROR(expectOp("("));
  while (!isOp(")")) {
    if (!stmt->params.empty())
      RETURN_IF_ERROR(expectOp(","));
    ASSIGN_OR_RETURN(std::string param, expectName());
    stmt->params.push_back(param);
    if (skipOp("=")) {
      ASSIGN_OR_RETURN(ExprPtr value, parseExpression(true));
      stmt->defaults.push_back(std::move(value));
    } else if (!stmt->defaults.empty()) {
      return templateError(cur().line, "non-default argument follows default argument");
    }
  }
  next();
  // break/continue inside a macro do not reach a loop around its definition.
  int savedDepth = loopDepth_;
  loopDepth_ = 0;
  size_t firstName = namesSeen_.size();
  ASSIGN_OR_RETURN(stmt->body, parseStatements({"endmacro"}, true));
  loopDepth_ = savedDepth;
  for (size_t i = firstName; i < namesSeen_.size(); ++i) {
    if (namesSeen_[i] == "varargs")
      stmt->catchVarargs = true;
    else if (namesSeen_[i] == "kwargs")
      stmt->catchKwargs = true;
    else if (namesSeen_[i] == "caller")
      return templateError(stmt->line, "macros taking a caller are not supported");
  }
  macroNames_.insert(stmt->name);
  return stmt;
}

StatusOr<Template> parseTemplate(std::string_view source) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source));
  Parser parser(std::move(tokens));
  ASSIGN_OR_RETURN(Template tmpl, parser.parse());
  analyzeFrames(tmpl);
  return tmpl;
}

} // namespace infer::chat::jinja
