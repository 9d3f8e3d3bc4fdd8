//===- ChatTemplateTest.cpp - Jinja subset semantics and refusals ---------===//
//
// Each expected string is what jinja2 3.1, set up as transformers sets it up
// (check_chat_templates.py), renders for the same template and variables;
// they were produced with it and are kept literal here. The refusal tests
// check that constructs outside the subset fail at parse time, naming the
// construct and its line.

#include "runtime/chat/ChatTemplate.h"

#include <gtest/gtest.h>

#include <string>

namespace infer::chat {
namespace {

/// Renders `source` with `context` (JSON text, key order kept).
std::string render(const std::string &source, const std::string &context = "{}") {
  StatusOr<ChatTemplate> tmpl = ChatTemplate::parse(source);
  if (!tmpl.ok())
    return "PARSE ERROR: " + tmpl.status().message();
  StatusOr<std::string> text = tmpl->render(nlohmann::ordered_json::parse(context));
  if (!text.ok())
    return "RENDER ERROR: " + text.status().message();
  return *text;
}

/// The parse error of `source` ("" if it parses).
std::string parseError(const std::string &source) {
  StatusOr<ChatTemplate> tmpl = ChatTemplate::parse(source);
  return tmpl.ok() ? "" : tmpl.status().message();
}

TEST(ChatTemplateWhitespace, TrimAndLstripBlocks) {
  // trim_blocks eats the newline after a tag; lstrip_blocks the indent
  // before one; one trailing newline of the template is dropped.
  EXPECT_EQ(render("{% if true %}\n  yes\n{% endif %}\n"), "  yes\n");
  EXPECT_EQ(render("{% for x in xs %}\n    {{ x }}\n{% endfor %}", R"({"xs": [1, 2]})"),
            "    1\n    2\n");
  EXPECT_EQ(render("{{ 'x' }}\n"), "x");
}

TEST(ChatTemplateWhitespace, MinusAndPlus) {
  EXPECT_EQ(render("  {%- if true %} a {% endif -%}  \n b"), " a b");
  EXPECT_EQ(render("{%+ if true %}kept{% endif +%}\nnext"), "kept\nnext");
  EXPECT_EQ(render("a {# c #}\n  {#- c -#}  b"), "a b");
  EXPECT_EQ(render("{% raw %}{{ not }}{% endraw %}"), "{{ not }}");
}

TEST(ChatTemplateLoops, LoopVariables) {
  EXPECT_EQ(render("{% for m in ms %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                   "{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
                   R"({"ms": ["a", "b"]})"),
            "102TrueFalse2;211FalseTrue2;");
}

TEST(ChatTemplateLoops, FilterElseAndLoopControls) {
  EXPECT_EQ(render("{% for m in ms if m != 'b' %}{{ loop.index }}:{{ m }} {% else %}none"
                   "{% endfor %}",
                   R"({"ms": ["a", "b", "c"]})"),
            "1:a 2:c ");
  // jinja2 runs the else block unless an iteration reached the end of the
  // body: here the only iteration `continue`s.
  EXPECT_EQ(render("{% for m in [] %}x{% else %}empty{% endfor %}|{% for m in [1] %}"
                   "{% continue %}{% else %}else-after-continue{% endfor %}"),
            "empty|else-after-continue");
}

TEST(ChatTemplateScopes, LoopBodiesDoNotLeak) {
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}"
                   "{{ x }}"),
            "231");
  // A name the template sets later is undefined (not the context's) in a
  // loop before the set: jinja2 resolves names per frame.
  EXPECT_EQ(render("{% for i in [1] %}[{{ n }}]{% endfor %}{% set n = 2 %}{{ n }}", R"({"n": 7})"),
            "[]2");
}

TEST(ChatTemplateScopes, Namespace) {
  EXPECT_EQ(render("{% set ns = namespace(found=false, n=0) %}{% for m in ms %}"
                   "{% set ns.n = ns.n + 1 %}{% if m == 2 %}{% set ns.found = true %}{% endif %}"
                   "{% endfor %}{{ ns.found }} {{ ns.n }}",
                   R"({"ms": [1, 2, 3]})"),
            "True 3");
  EXPECT_NE(render("{% set x = 1 %}{% set x.a = 2 %}").find("non-namespace"), std::string::npos);
}

TEST(ChatTemplateExpressions, SlicingAndIndexing) {
  EXPECT_EQ(render("{{ ms[1:] }} {{ ms[::-1] }} {{ ms[-1] }} {{ 'héllo'[1:3] }} "
                   "{{ ms[10] is defined }}",
                   R"({"ms": [1, 2, 3]})"),
            "[2, 3] [3, 2, 1] 3 él False");
}

TEST(ChatTemplateExpressions, PythonPrinting) {
  EXPECT_EQ(render("{{ 1.0 }} {{ 1e16 }} {{ 0.1 + 0.2 }} {{ 7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} "
                   "{{ [1, 'a', none, true, 2.5] }} {{ {'k': (1,)} }}"),
            "1.0 1e+16 0.30000000000000004 3 2 3.5 [1, 'a', None, True, 2.5] {'k': (1,)}");
}

TEST(ChatTemplateExpressions, UndefinedValues) {
  EXPECT_EQ(render("{{ undefined_name }}|{{ undefined_name is defined }}|"
                   "{{ d.missing is defined }}|{{ d.missing|default('dflt') }}",
                   R"({"d": {}})"),
            "|False|False|dflt");
  // Using an Undefined beyond printing and testing is an error, as in jinja2.
  EXPECT_EQ(render("{{ nope.role }}"), "RENDER ERROR: chat template line 1: 'nope' is undefined");
}

TEST(ChatTemplateExpressions, FiltersAndMethods) {
  EXPECT_EQ(render("{{ '  a b  '|trim }}|{{ 'a-b-c'.split('-', 1) }}|{{ 'Hi'.startswith('H') }}|"
                   "{{ 'hello world'|title }}|{{ 'x,y'.replace(',', ';') }}"),
            "a b|['a', 'b-c']|True|Hello World|x;y");
  EXPECT_EQ(render("{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='content')|"
                   "join(',') }}",
                   R"({"ms": [{"role": "user", "content": "a"}, {"role": "assistant",
                       "content": "b"}, {"role": "user", "content": "c"}]})"),
            "a,c");
  EXPECT_EQ(render("{{ d.items()|list }} {{ d.get('b') }} {{ d.get('z', 0) }} {{ d.keys()|list }}",
                   R"({"d": {"b": 1, "a": 2}})"),
            "[('b', 1), ('a', 2)] 1 0 ['b', 'a']");
  // Markup (from |safe) escapes what is added to it; `~` makes plain str.
  EXPECT_EQ(render("{{ 'a'|safe + '<b>' }}|{{ 'a' ~ '<b>' }}"), "a&lt;b&gt;|a<b>");
}

TEST(ChatTemplateExpressions, ToJson) {
  const char *context = R"({"d": {"b": 1, "a": [1.5, null]}})";
  EXPECT_EQ(render("{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ 'é<'|tojson }}", context),
            "{\"b\": 1, \"a\": [1.5, null]}|{\n  \"b\": 1,\n  \"a\": [\n    1.5,\n    null\n  ]\n}"
            "|\"é<\"");
  // nlohmann::json (not ordered_json) sorts object keys.
  StatusOr<ChatTemplate> tmpl = ChatTemplate::parse("{{ d|tojson }}");
  ASSERT_TRUE(tmpl.ok());
  StatusOr<std::string> sorted = tmpl->render(nlohmann::json::parse(context));
  ASSERT_TRUE(sorted.ok());
  EXPECT_EQ(*sorted, "{\"a\": [1.5, null], \"b\": 1}");
}

TEST(ChatTemplateMacros, DefaultsAndKeywords) {
  EXPECT_EQ(render("{% macro greet(name, greeting='hi') %}{{ greeting }} {{ name }}{% endmacro %}"
                   "{{ greet('bob') }}|{{ greet('al', greeting='yo') }}"),
            "hi bob|yo al");
}

TEST(ChatTemplateErrors, RaiseExceptionCarriesTheMessage) {
  StatusOr<ChatTemplate> tmpl = ChatTemplate::parse(
      "{% if messages[0].role != 'user' %}{{ raise_exception('Roles must alternate') }}"
      "{% endif %}");
  ASSERT_TRUE(tmpl.ok());
  StatusOr<std::string> text =
      tmpl->render(nlohmann::json::parse(R"({"messages": [{"role": "assistant"}]})"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(), "chat template line 1: raise_exception: Roles must alternate");
}

TEST(ChatTemplateErrors, TypeErrorsNameTheProblem) {
  StatusOr<ChatTemplate> tmpl = ChatTemplate::parse("line one\n{{ 'a' + 1 }}");
  ASSERT_TRUE(tmpl.ok());
  StatusOr<std::string> text = tmpl->render(nlohmann::json::object());
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(),
            "chat template line 2: can only concatenate str (not \"int\") to str");
}

TEST(ChatTemplateRefusals, UnsupportedConstructsFailToParse) {
  const std::pair<const char *, const char *> cases[] = {
      {"{% include 'other.jinja' %}", "line 1: tag 'include' is not supported"},
      {"x\n{% extends 'base.jinja' %}", "line 2: tag 'extends' is not supported"},
      {"{% import 'm.jinja' as m %}", "line 1: tag 'import' is not supported"},
      {"{% call m() %}body{% endcall %}", "line 1: tag 'call' is not supported"},
      {"{% with x = 1 %}{% endwith %}", "line 1: tag 'with' is not supported"},
      {"{% do xs.append(1) %}", "line 1: tag 'do' is not supported"},
      {"\n\n{{ x|wordwrap(10) }}", "line 3: filter 'wordwrap' is not supported"},
      {"{{ xs|selectattr('a', 'matching', 'b') }}", "line 1: test 'matching' is not supported"},
      {"{% if x is escaped %}{% endif %}", "line 1: test 'escaped' is not supported"},
      {"{{ x.zfill(3) }}", "line 1: method 'zfill' is not supported"},
      {"{{ xs.append(1) }}", "line 1: method 'append' is not supported"},
      {"{{ lipsum(2) }}", "line 1: function 'lipsum' is not supported"},
      {"{{ f(*args) }}", "line 1: argument unpacking (*args, **kwargs) is not supported"},
      {"{% for x in xs recursive %}{% endfor %}", "line 1: recursive loops are not supported"},
      {"{% macro m() %}{{ caller() }}{% endmacro %}", "line 1: macros taking a caller are not "
                                                      "supported"},
      {"{{ x | map('wordcount') | list }}", "line 1: filter 'wordcount' is not supported"},
      {"{% break %}", "line 1: 'break' outside of a loop"},
  };
  for (const auto &[source, expected] : cases) {
    std::string error = parseError(source);
    EXPECT_NE(error.find(expected), std::string::npos)
        << "template: " << source << "\nerror: " << error;
    EXPECT_EQ(error.rfind("chat template line ", 0), 0u) << error;
  }
}

TEST(ChatTemplateRefusals, SyntaxErrors) {
  EXPECT_NE(parseError("{% if x %}no end").find("unexpected end of template"), std::string::npos);
  EXPECT_NE(parseError("{# open comment").find("missing end of comment tag"), std::string::npos);
  EXPECT_NE(parseError("{{ 'unterminated }}").find("unexpected char"), std::string::npos);
  EXPECT_NE(parseError("{{ (1 }}").find("expected ')'"), std::string::npos);
}

TEST(ApplyChatTemplate, LlamaThree) {
  // The Llama-3 template of shared/tokenizers/llama3/tokenizer_config.json.
  StatusOr<ChatTemplate> tmpl = ChatTemplate::parse(
      "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
      "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
      "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
      "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
      "'<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().message();
  nlohmann::json messages = nlohmann::json::parse(
      R"([{"role": "system", "content": " Be brief. "}, {"role": "user", "content": "Hi\n"}])");
  StatusOr<std::string> text = applyChatTemplate(*tmpl, messages, /*addGenerationPrompt=*/true,
                                                 "<|begin_of_text|>", "<|eot_id|>");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief."
                   "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                   "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ApplyChatTemplate, ToolsAndDocumentsAreNone) {
  StatusOr<ChatTemplate> tmpl =
      ChatTemplate::parse("{{ tools is none }} {{ documents is defined }}");
  ASSERT_TRUE(tmpl.ok());
  StatusOr<std::string> text = applyChatTemplate(*tmpl, nlohmann::json::array(), false, "", "");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "True True");
}

// A template is untrusted: nesting is bounded before the parser's recursion
// overflows the stack (chat-template-fuzzer found 300 nested '[' did).
TEST(ChatTemplateErrors, NestingIsBounded) {
  auto repeat = [](const std::string &text, int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
      out += text;
    return out;
  };
  EXPECT_EQ(render("{{ " + repeat("[", 40) + "1" + repeat("]", 40) + "|length }}"), "1");
  EXPECT_EQ(render("{{ " + repeat("not ", 41) + "true }}"), "False");
  EXPECT_EQ(render(repeat("{% if true %}", 40) + "x" + repeat("{% endif %}", 40)), "x");
  EXPECT_NE(parseError("{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}")
                .find("expressions nested more than 128 deep"),
            std::string::npos);
  EXPECT_NE(parseError("{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}")
                .find("expressions nested more than 128 deep"),
            std::string::npos);
  EXPECT_NE(parseError("{{ " + repeat("not ", 100000) + "x }}").find("nested more than 128 deep"),
            std::string::npos);
  EXPECT_NE(parseError("{{ " + repeat("-", 100000) + "1 }}").find("nested more than 128 deep"),
            std::string::npos);
  EXPECT_NE(parseError(repeat("{% if x %}", 100000)).find("tags nested more than 64 deep"),
            std::string::npos);
}

} // namespace
} // namespace infer::chat
