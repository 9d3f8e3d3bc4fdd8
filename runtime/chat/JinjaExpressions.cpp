//===- JinjaExpressions.cpp - the expression half of the parser -----------===//
//
// Expressions, loosest binding first (jinja2/parser.py):
//   a if b else c   or   and   not   comparisons (== != < <= > >= in, not in)
//   + -   ~   * / // %   **   unary - +   primary with .attr [item] (call)
// Filters (|f) and tests (is t) bind to the unary operand, so
// `not x is defined` is `not (x is defined)` and `-x|abs` is `(-x)|abs`.
// Filter, test, method and function names are checked against the subset
// here.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/JinjaParser.h"
#include "runtime/chat/JinjaParserImpl.h"

namespace infer::chat::jinja {
namespace {

const std::set<std::string> &supportedFilters() {
  static const std::set<std::string> names = {
      "abs",     "capitalize", "count",  "d",          "default",    "dictsort",
      "e",       "escape",     "first",  "float",      "indent",     "int",
      "items",   "join",       "last",   "length",     "list",       "lower",
      "map",     "max",        "min",    "reject",     "rejectattr", "replace",
      "reverse", "safe",       "select", "selectattr", "sort",       "string",
      "sum",     "title",      "tojson", "trim",       "unique",     "upper",
  };
  return names;
}

const std::set<std::string> &supportedTests() {
  static const std::set<std::string> names = {
      "boolean", "callable", "defined",  "divisibleby", "eq",          "equalto",
      "even",    "false",    "float",    "ge",          "greaterthan", "gt",
      "in",      "integer",  "iterable", "le",          "lessthan",    "lower",
      "lt",      "mapping",  "ne",       "none",        "number",      "odd",
      "sameas",  "sequence", "string",   "true",        "undefined",   "upper",
      "==",      "!=",       "<",        "<=",          ">",           ">=",
  };
  return names;
}

const std::set<std::string> &supportedStrMethods() {
  static const std::set<std::string> names = {
      "capitalize",   "count",        "endswith", "find",  "join",   "lower",  "lstrip",
      "removeprefix", "removesuffix", "replace",  "rfind", "rsplit", "rstrip", "split",
      "splitlines",   "startswith",   "strip",    "title", "upper",
  };
  return names;
}

const std::set<std::string> &supportedMethods() {
  static const std::set<std::string> names = [] {
    std::set<std::string> all = supportedStrMethods();
    all.insert({
        // dict
        "get",
        "items",
        "keys",
        "values",
        // list and tuple: count, index
        "index",
        // loop
        "cycle",
    });
    return all;
  }();
  return names;
}

const std::set<std::string> &supportedGlobals() {
  static const std::set<std::string> names = {"raise_exception", "strftime_now", "namespace",
                                              "range", "dict"};
  return names;
}

} // namespace

bool isSupportedFilter(const std::string &name) { return supportedFilters().count(name) > 0; }
bool isSupportedTest(const std::string &name) { return supportedTests().count(name) > 0; }
bool isSupportedMethod(const std::string &name) { return supportedMethods().count(name) > 0; }
bool isSupportedStrMethod(const std::string &name) { return supportedStrMethods().count(name) > 0; }
bool isSupportedGlobal(const std::string &name) { return supportedGlobals().count(name) > 0; }

bool Parser::isTupleEnd(const std::vector<std::string> &extraEnd) const {
  TokenKind k = cur().kind;
  if (k == TokenKind::kVariableEnd || k == TokenKind::kBlockEnd || isOp(")"))
    return true;
  for (const std::string &end : extraEnd)
    if (cur().kind == TokenKind::kName && cur().text == end)
      return true;
  return false;
}

StatusOr<ExprPtr> Parser::parseTuple(bool withCondexpr, const std::vector<std::string> &extraEnd,
                                     bool explicitParentheses) {
  int line = cur().line;
  std::vector<ExprPtr> items;
  bool isTuple = false;
  while (true) {
    if (!items.empty())
      RETURN_IF_ERROR(expectOp(","));
    if (isTupleEnd(extraEnd))
      break;
    ASSIGN_OR_RETURN(ExprPtr item, parseExpression(withCondexpr));
    items.push_back(std::move(item));
    if (isOp(","))
      isTuple = true;
    else
      break;
  }
  if (!isTuple) {
    if (!items.empty())
      return std::move(items[0]);
    if (!explicitParentheses)
      return unexpected("an expression");
  }
  ExprPtr tuple = make(ExprKind::kTuple, line);
  tuple->items = std::move(items);
  return tuple;
}

StatusOr<ExprPtr> Parser::parseExpression(bool withCondexpr) {
  if (!withCondexpr)
    return parseOr();
  int line = cur().line;
  ASSIGN_OR_RETURN(ExprPtr expr, parseOr());
  while (skipName("if")) {
    ExprPtr cond = make(ExprKind::kCondExpr, line);
    cond->a = std::move(expr);
    ASSIGN_OR_RETURN(cond->b, parseOr());
    if (skipName("else")) {
      ASSIGN_OR_RETURN(cond->c, parseExpression(true));
    }
    expr = std::move(cond);
    line = cur().line;
  }
  return expr;
}

StatusOr<ExprPtr> Parser::parseOr() {
  ASSIGN_OR_RETURN(ExprPtr left, parseAnd());
  while (isName("or")) {
    ExprPtr node = make(ExprKind::kOr, cur().line);
    next();
    node->a = std::move(left);
    ASSIGN_OR_RETURN(node->b, parseAnd());
    left = std::move(node);
  }
  return left;
}

StatusOr<ExprPtr> Parser::parseAnd() {
  ASSIGN_OR_RETURN(ExprPtr left, parseNot());
  while (isName("and")) {
    ExprPtr node = make(ExprKind::kAnd, cur().line);
    next();
    node->a = std::move(left);
    ASSIGN_OR_RETURN(node->b, parseNot());
    left = std::move(node);
  }
  return left;
}

StatusOr<ExprPtr> Parser::parseNot() {
  NestingLevel level(expressionNesting_, kMaxExpressionNesting);
  if (level.exceeded)
    return tooDeep("expressions", kMaxExpressionNesting);
  if (isName("not")) {
    ExprPtr node = make(ExprKind::kNot, cur().line);
    next();
    ASSIGN_OR_RETURN(node->a, parseNot());
    return node;
  }
  return parseCompare();
}

StatusOr<ExprPtr> Parser::parseCompare() {
  int line = cur().line;
  ASSIGN_OR_RETURN(ExprPtr expr, parseMath1());
  ExprPtr node;
  while (true) {
    std::string op;
    if (cur().kind == TokenKind::kOperator &&
        (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
         cur().text == ">" || cur().text == ">=")) {
      op = cur().text;
      next();
    } else if (isName("in")) {
      op = "in";
      next();
    } else if (isName("not") && look().kind == TokenKind::kName && look().text == "in") {
      op = "not in";
      next();
      next();
    } else {
      break;
    }
    if (!node) {
      node = make(ExprKind::kCompare, line);
      node->a = std::move(expr);
    }
    node->ops.push_back(op);
    ASSIGN_OR_RETURN(ExprPtr operand, parseMath1());
    node->items.push_back(std::move(operand));
  }
  return node ? std::move(node) : std::move(expr);
}

StatusOr<ExprPtr> Parser::binary(ExprPtr left, const std::string &op, ExprPtr right, int line) {
  ExprPtr node = make(ExprKind::kBinary, line);
  node->name = op;
  node->a = std::move(left);
  node->b = std::move(right);
  return node;
}

StatusOr<ExprPtr> Parser::parseMath1() {
  ASSIGN_OR_RETURN(ExprPtr left, parseConcat());
  while (isOp("+") || isOp("-")) {
    std::string op = cur().text;
    int line = cur().line;
    next();
    ASSIGN_OR_RETURN(ExprPtr right, parseConcat());
    ASSIGN_OR_RETURN(left, binary(std::move(left), op, std::move(right), line));
  }
  return left;
}

StatusOr<ExprPtr> Parser::parseConcat() {
  int line = cur().line;
  ASSIGN_OR_RETURN(ExprPtr first, parseMath2());
  if (!isOp("~"))
    return first;
  ExprPtr node = make(ExprKind::kConcat, line);
  node->items.push_back(std::move(first));
  while (skipOp("~")) {
    ASSIGN_OR_RETURN(ExprPtr item, parseMath2());
    node->items.push_back(std::move(item));
  }
  return node;
}

StatusOr<ExprPtr> Parser::parseMath2() {
  ASSIGN_OR_RETURN(ExprPtr left, parsePow());
  while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
    std::string op = cur().text;
    int line = cur().line;
    next();
    ASSIGN_OR_RETURN(ExprPtr right, parsePow());
    ASSIGN_OR_RETURN(left, binary(std::move(left), op, std::move(right), line));
  }
  return left;
}

StatusOr<ExprPtr> Parser::parsePow() {
  ASSIGN_OR_RETURN(ExprPtr left, parseUnary(true));
  while (isOp("**")) {
    int line = cur().line;
    next();
    ASSIGN_OR_RETURN(ExprPtr right, parseUnary(true));
    ASSIGN_OR_RETURN(left, binary(std::move(left), "**", std::move(right), line));
  }
  return left;
}

StatusOr<ExprPtr> Parser::parseUnary(bool withFilter) {
  NestingLevel level(expressionNesting_, kMaxExpressionNesting);
  if (level.exceeded)
    return tooDeep("expressions", kMaxExpressionNesting);
  ExprPtr node;
  if (isOp("-") || isOp("+")) {
    node = make(isOp("-") ? ExprKind::kNeg : ExprKind::kPos, cur().line);
    next();
    ASSIGN_OR_RETURN(node->a, parseUnary(false));
  } else {
    ASSIGN_OR_RETURN(node, parsePrimary());
  }
  ASSIGN_OR_RETURN(node, parsePostfix(std::move(node)));
  if (withFilter) {
    ASSIGN_OR_RETURN(node, parseFilterExpr(std::move(node)));
  }
  return node;
}

StatusOr<ExprPtr> Parser::parsePrimary() {
  const Token &token = cur();
  int line = token.line;
  if (token.kind == TokenKind::kName) {
    ExprPtr node;
    if (token.text == "true" || token.text == "True" || token.text == "false" ||
        token.text == "False") {
      node = make(ExprKind::kConst, line);
      node->value = Value::boolean(token.text == "true" || token.text == "True");
    } else if (token.text == "none" || token.text == "None") {
      node = make(ExprKind::kConst, line);
      node->value = Value::none();
    } else {
      node = make(ExprKind::kName, line);
      node->name = token.text;
      namesSeen_.push_back(token.text);
    }
    next();
    return node;
  }
  if (token.kind == TokenKind::kString) {
    std::string text;
    while (cur().kind == TokenKind::kString) { // adjacent literals concatenate
      text += cur().text;
      next();
    }
    ExprPtr node = make(ExprKind::kConst, line);
    node->value = Value::string(std::move(text));
    return node;
  }
  if (token.kind == TokenKind::kInteger || token.kind == TokenKind::kFloat) {
    ExprPtr node = make(ExprKind::kConst, line);
    node->value = token.kind == TokenKind::kInteger ? Value::integer(token.intValue)
                                                    : Value::floating(token.floatValue);
    next();
    return node;
  }
  if (isOp("(")) {
    next();
    ASSIGN_OR_RETURN(ExprPtr node, parseTuple(true, {}, /*explicitParentheses=*/true));
    RETURN_IF_ERROR(expectOp(")"));
    return node;
  }
  if (isOp("[")) {
    next();
    ExprPtr node = make(ExprKind::kList, line);
    while (!isOp("]")) {
      if (!node->items.empty())
        RETURN_IF_ERROR(expectOp(","));
      if (isOp("]"))
        break;
      ASSIGN_OR_RETURN(ExprPtr item, parseExpression(true));
      node->items.push_back(std::move(item));
    }
    next();
    return node;
  }
  if (isOp("{")) {
    next();
    ExprPtr node = make(ExprKind::kDict, line);
    while (!isOp("}")) {
      if (!node->items.empty())
        RETURN_IF_ERROR(expectOp(","));
      if (isOp("}"))
        break;
      ASSIGN_OR_RETURN(ExprPtr key, parseExpression(true));
      RETURN_IF_ERROR(expectOp(":"));
      ASSIGN_OR_RETURN(ExprPtr value, parseExpression(true));
      node->items.push_back(std::move(key));
      node->items.push_back(std::move(value));
    }
    next();
    return node;
  }
  return templateError(line, "unexpected " + describe(token));
}

StatusOr<ExprPtr> Parser::parsePostfix(ExprPtr node) {
  while (true) {
    if (isOp(".")) {
      int line = cur().line;
      next();
      if (cur().kind == TokenKind::kName) {
        ExprPtr attr = make(ExprKind::kGetAttr, line);
        attr->a = std::move(node);
        attr->name = cur().text;
        next();
        node = std::move(attr);
      } else if (cur().kind == TokenKind::kInteger) {
        ExprPtr item = make(ExprKind::kGetItem, line);
        item->a = std::move(node);
        item->b = make(ExprKind::kConst, line);
        item->b->value = Value::integer(cur().intValue);
        next();
        node = std::move(item);
      } else {
        return unexpected("name or number");
      }
    } else if (isOp("[")) {
      int line = cur().line;
      next();
      std::vector<ExprPtr> args;
      while (!isOp("]")) {
        if (!args.empty())
          RETURN_IF_ERROR(expectOp(","));
        ASSIGN_OR_RETURN(ExprPtr arg, parseSubscribed());
        args.push_back(std::move(arg));
      }
      next();
      ExprPtr item = make(ExprKind::kGetItem, line);
      item->a = std::move(node);
      if (args.size() == 1) {
        item->b = std::move(args[0]);
      } else {
        item->b = make(ExprKind::kTuple, line);
        item->b->items = std::move(args);
      }
      node = std::move(item);
    } else if (isOp("(")) {
      ASSIGN_OR_RETURN(node, parseCall(std::move(node)));
    } else {
      return node;
    }
  }
}

StatusOr<ExprPtr> Parser::parseSubscribed() {
  int line = cur().line;
  ExprPtr start;
  if (!skipOp(":")) {
    ASSIGN_OR_RETURN(ExprPtr expr, parseExpression(true));
    if (!skipOp(":"))
      return expr;
    start = std::move(expr);
  }
  ExprPtr slice = make(ExprKind::kSlice, line);
  slice->a = std::move(start);
  if (!isOp(":") && !isOp("]") && !isOp(",")) {
    ASSIGN_OR_RETURN(slice->b, parseExpression(true));
  }
  if (skipOp(":") && !isOp("]") && !isOp(",")) {
    ASSIGN_OR_RETURN(slice->c, parseExpression(true));
  }
  return slice;
}

/// `(args, key=value)` into node->items / node->kwargs.
Status Parser::parseCallArgs(Expr &node) {
  RETURN_IF_ERROR(expectOp("("));
  bool requireComma = false;
  while (!isOp(")")) {
    if (requireComma) {
      RETURN_IF_ERROR(expectOp(","));
      if (isOp(")"))
        break;
    }
    if (isOp("*") || isOp("**"))
      return templateError(cur().line, "argument unpacking (*args, **kwargs) is not supported");
    if (cur().kind == TokenKind::kName && look().kind == TokenKind::kOperator &&
        look().text == "=") {
      std::string key = cur().text;
      next();
      next();
      ASSIGN_OR_RETURN(ExprPtr value, parseExpression(true));
      node.kwargs.emplace_back(key, std::move(value));
    } else {
      if (!node.kwargs.empty())
        return templateError(cur().line, "positional argument follows keyword argument");
      ASSIGN_OR_RETURN(ExprPtr arg, parseExpression(true));
      node.items.push_back(std::move(arg));
    }
    requireComma = true;
  }
  next();
  return okStatus();
}

StatusOr<ExprPtr> Parser::parseCall(ExprPtr callee) {
  ExprPtr call = make(ExprKind::kCall, cur().line);
  RETURN_IF_ERROR(parseCallArgs(*call));
  if (callee->kind == ExprKind::kGetAttr) {
    if (!supportedMethods().count(callee->name))
      return templateError(call->line, "method '" + callee->name + "' is not supported");
  } else if (callee->kind == ExprKind::kName) {
    if (!supportedGlobals().count(callee->name))
      calledNames_.emplace_back(callee->name, call->line); // must be a macro
  } else {
    return templateError(call->line, "calling the result of an expression is not supported");
  }
  call->a = std::move(callee);
  return call;
}

/// Checks a test or filter named by a string argument (selectattr's
/// 'equalto', map's 'upper').
Status Parser::checkNamedArg(const Expr &node, size_t index, bool isTest) {
  if (index >= node.items.size() || node.items[index]->kind != ExprKind::kConst ||
      !node.items[index]->value.isString())
    return okStatus();
  const std::string &name = node.items[index]->value.str();
  if (isTest ? supportedTests().count(name) : supportedFilters().count(name))
    return okStatus();
  return templateError(node.line,
                       std::string(isTest ? "test '" : "filter '") + name + "' is not supported");
}

StatusOr<ExprPtr> Parser::parseFilters(ExprPtr node, bool startInline) {
  while (isOp("|") || startInline) {
    if (!startInline)
      next();
    startInline = false;
    int line = cur().line;
    ASSIGN_OR_RETURN(std::string name, expectName());
    if (isOp("."))
      return templateError(line, "filter '" + name + ".' is not supported");
    if (!supportedFilters().count(name))
      return templateError(line, "filter '" + name + "' is not supported");
    ExprPtr filter = make(ExprKind::kFilter, line);
    filter->name = name;
    filter->a = std::move(node);
    if (isOp("("))
      RETURN_IF_ERROR(parseCallArgs(*filter));
    if (name == "select" || name == "reject")
      RETURN_IF_ERROR(checkNamedArg(*filter, 0, true));
    if (name == "selectattr" || name == "rejectattr")
      RETURN_IF_ERROR(checkNamedArg(*filter, 1, true));
    if (name == "map")
      RETURN_IF_ERROR(checkNamedArg(*filter, 0, false));
    node = std::move(filter);
  }
  return node;
}

StatusOr<ExprPtr> Parser::parseTest(ExprPtr node) {
  int line = cur().line;
  next(); // is
  bool negated = skipName("not");
  ASSIGN_OR_RETURN(std::string name, expectName());
  if (isOp("."))
    return templateError(line, "test '" + name + ".' is not supported");
  if (!supportedTests().count(name))
    return templateError(line, "test '" + name + "' is not supported");
  ExprPtr test = make(ExprKind::kTest, line);
  test->name = name;
  test->a = std::move(node);
  if (isOp("(")) {
    RETURN_IF_ERROR(parseCallArgs(*test));
  } else if ((cur().kind == TokenKind::kName || cur().kind == TokenKind::kString ||
              cur().kind == TokenKind::kInteger || cur().kind == TokenKind::kFloat || isOp("[") ||
              isOp("{")) &&
             !isName("else") && !isName("or") && !isName("and")) {
    if (isName("is"))
      return templateError(cur().line, "You cannot chain multiple tests with is");
    ASSIGN_OR_RETURN(ExprPtr arg, parsePrimary());
    ASSIGN_OR_RETURN(arg, parsePostfix(std::move(arg)));
    test->items.push_back(std::move(arg));
  }
  if (!negated)
    return test;
  ExprPtr notNode = make(ExprKind::kNot, line);
  notNode->a = std::move(test);
  return notNode;
}

StatusOr<ExprPtr> Parser::parseFilterExpr(ExprPtr node) {
  while (true) {
    if (isOp("|")) {
      ASSIGN_OR_RETURN(node, parseFilters(std::move(node), false));
    } else if (isName("is")) {
      ASSIGN_OR_RETURN(node, parseTest(std::move(node)));
    } else if (isOp("(")) {
      ASSIGN_OR_RETURN(node, parseCall(std::move(node)));
    } else {
      return node;
    }
  }
}

} // namespace infer::chat::jinja
