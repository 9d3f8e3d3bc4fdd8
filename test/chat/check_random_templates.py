#!/usr/bin/env python3
"""Renders seeded random templates with jinja2 and with infer-chat-render.

Real chat templates (check_chat_templates.py) use a few idioms heavily; this
covers the rest of the subset: random nestings of if/elif/else, for (with
filters, else, loop variables, break/continue), set, set blocks, namespace
attributes, macros (defaults, varargs, kwargs), filter blocks, raw blocks and
comments, each tag with random whitespace control (-, + or none) around
random text with newlines, \\r\\n, tabs and Unicode spaces, and expressions
drawn from a list of filters, tests, methods and operators. jinja2 is set up
exactly as for the real templates. A template passes if both render the same
text, both fail to parse, or both fail with the same message.
"""

import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_chat_templates as common  # noqa: E402  (exits 77 without jinja2)

TEXT = ["", " ", "  ", "\n", "\n\n", " \n", "\n  ", "\t", "\n\t ", "x", "ab\n", " y ", "\r\n",
        "\n \n", "\u00a0", "\n\u3000", "é", "\r", "\x0b", "\x0c\n", "\u2028", "}}", "%}", "#}",
        "{ not a tag }"]

EXPRESSIONS = [
    "x", "y", "s", "n", "f", "l", "d", "none", "true", "'q'", "1", "2.5", "-3", "uni",
    "l[0]", "l[-1]", "l[1:]", "l[::-1]", "l[1:-1]", "l[::2]", "l[-2:]", "l[5]", "s[1:3]",
    "s[::-1]", "s[-3:-1]", "s[:100]", "d.a", "d['b']", "d.zz", "d['a'][1]['x']", "d.a.1.x",
    "ld[0].r", "ld[5].r is defined",
    "x ~ y", "u ~ s", "x + 1", "n * 2", "n // 3", "n % 3", "n / 4", "2 ** n", "-n", "+f",
    "n - 10", "f // 0.4", "-7 // 2", "-7 % 3", "7.5 % -2", "2 ** -1", "10 / 4", "f*3",
    "[1,2] + [3]", "(1, 2) + (3,)", "'ab' * 2", "'%s-%d' % (s, n)", "'%r' % l",
    "n > 2", "x == y", "not x", "x and y", "x or y", "x if n else y", "'a' in s",
    "'zz' not in d", "1 < 2 < 3", "1 < n <= 4", "'b' > 'a'",
    "s is string", "n is number", "l is iterable", "d is mapping", "x is defined",
    "u is defined", "u is undefined", "none is none", "x is not none", "n is divisibleby 3",
    "n is odd", "l[0] is even", "x is sameas none", "s is lower", "'ABC' is upper",
    "d is sequence", "l is sequence",
    "u", "u|default('D')", "l|first", "l|last", "l|first|string", "l|length", "s|length",
    "s|upper", "s|trim", "s|trim('a ')", "s|title", "s|capitalize", "s|list", "s|list|length",
    "s|replace(' ','_')", "s|replace('a','X',1)", "s|indent(2)", "s|indent(2, true)",
    "s|indent(2, blank=true)", "(s ~ '\\n' ~ s)|indent(3, first=true)", "n|string",
    "none|string", "f|int", "'x'|int", "'12'|int + 1", "'3.5'|float", "n|float", "n|abs",
    "-f|abs", "l|join(',')", "l|map('string')|join('-')", "(l|map('string'))|first",
    "l|tojson", "d|tojson", "d|tojson(indent=2)", "l|tojson(separators=(',',':'))",
    "d|tojson(sort_keys=true)", "{'é': 'ü'}|tojson", "{'é': 'ü'}|tojson(ensure_ascii=true)",
    "l|select('odd')|list", "l|reject('even')|list", "l|select('>', 2)|list",
    "l|select('in', [1, 3])|list", "[x, y, n]|select|list", "[x, y, n]|reject|list",
    "ld|selectattr('r','equalto','u')|list", "ld|rejectattr('r')|list",
    "ld|selectattr('c', 'defined')|list|length", "ld|rejectattr('c', 'undefined')|list|length",
    "ld|map(attribute='r')|list", "ld|map(attribute='c', default='-')|join",
    "ld|join(',', attribute='r')", "ld|sort(attribute='r')|map(attribute='r')|join",
    "l|sort|list", "l|reverse|list", "l|reverse|join", "'abc'|reverse", "l|unique|list",
    "['b','A','a']|sort", "['b','A','a']|sort(case_sensitive=true)", "['b','A','a']|unique|list",
    "['b','A','a']|max", "l|min", "l|max", "l|sum", "l|sum(start=10)", "[[1], [2]]|sum(start=[])",
    "d|dictsort", "d|dictsort(by='value', reverse=true)", "d|items|list", "d|list", "d|length",
    "d.items()|list", "d.items()|list|length", "d.keys()|list", "d.values()|list", "d.get('a')",
    "d.get('q', 5)", "s.strip()", "s.lstrip()", "s.rstrip('c ')", "s.split()", "s.split('b')",
    "s.split(' ', 1)", "s.rsplit(None, 1)", "s.splitlines()", "s.splitlines(true)",
    "s.replace('a','b')", "s.startswith('a')", "s.endswith(('a ', 'c'))", "s.count('a')",
    "s.find('b')", "s.find('zz')", "s.title()", "s.lower()", "s.capitalize()",
    "\"they're bill's\".title()", "'hello-world foo(bar'|title", "'A B'|lower", "'ß'.upper()",
    "'Straße'|lower", "'ÉCOLE'|capitalize", "'中文'|upper", "'😀'|title", "uni|trim",
    "uni.split()", "[uni]", "uni|tojson", "l.count(2)", "l.index(3)",
    "[1,'a',none]", "{'k': s}", "(1,)", "range(n)|list", "range(1, 10, 3)|list", "range(5)[2]",
    "dict(a=1, b=x)", "namespace(a=1).a", "namespace(z=l).z", "loop is defined",
    "'a\\nb\\t\\x41\\u00e9\\'q'", "\"dq'\\\"\"", "'\\d'", "'%s'|length",
]

LOOP_EXTRAS = ["", "{{ loop.index }}", "{{ loop.first }}{{ loop.last }}",
               "{{ loop.revindex }}/{{ loop.length }}", "{{ loop.previtem }}|{{ loop.nextitem }}",
               "{{ loop.cycle(1, 2) }}", "{{ loop.index0 }}{{ loop.revindex0 }}{{ loop.depth }}",
               "{% if loop.index > 1 %}{% break %}{% endif %}", "{% continue %}"]

CONTEXT = {"uni": "é中😀\u00a0x\u2028", "x": "X", "y": "", "s": "  abc Bca  ", "n": 3, "f": 1.5,
           "l": [1, 2, 3, 4], "d": {"b": 1, "a": [1, {"x": None}]},
           "ld": [{"r": "u", "c": "1"}, {"r": "a"}, {"r": "u", "c": "2"}]}


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def text(self):
        return "".join(self.rng.choice(TEXT) for _ in range(self.rng.randint(0, 3)))

    def sign(self):
        return self.rng.choice(["", "", "-", "+"])

    def tag(self, body):
        return "{%" + self.sign() + " " + body + " " + self.sign() + "%}"

    def expr(self):
        return self.rng.choice(EXPRESSIONS)

    def block(self, depth=0):
        rng, out = self.rng, []
        for _ in range(rng.randint(1, 4 if depth < 2 else 2)):
            out.append(self.text())
            r = rng.random()
            if r < 0.3:
                out.append("{{" + rng.choice(["", "", "-", "+"]) + " " + self.expr() + " " +
                           rng.choice(["", "", "-"]) + "}}")
            elif r < 0.45 and depth < 3:
                out.append(self.tag("if " + self.expr()) + self.block(depth + 1))
                if rng.random() < 0.4:
                    out.append(self.tag("elif " + self.expr()) + self.block(depth + 1))
                if rng.random() < 0.4:
                    out.append(self.tag("else") + self.block(depth + 1))
                out.append(self.tag("endif"))
            elif r < 0.6 and depth < 3:
                iterable = rng.choice(["l", "ld", "s", "d", "range(3)", "[]", "d.items()"])
                target = "k, v" if iterable == "d.items()" else "i"
                test = " if i" if target == "i" and rng.random() < 0.2 else ""
                out.append(self.tag(f"for {target} in {iterable}{test}") + self.block(depth + 1) +
                           rng.choice(LOOP_EXTRAS))
                if rng.random() < 0.3:
                    out.append(self.tag("else") + self.block(depth + 1))
                out.append(self.tag("endfor"))
            elif r < 0.7:
                out.append(self.tag(f"set {rng.choice(['x', 'y', 'n', 'i'])} = {self.expr()}"))
            elif r < 0.75:
                out.append("{#" + self.sign() + " comment " + self.text() + self.sign() + "#}")
            elif r < 0.78:
                out.append(self.tag("raw") + self.text() + "{{ raw }}" + self.text() +
                           self.tag("endraw"))
            elif r < 0.82:
                out.append(self.tag("set ns.v = " + self.expr()) + "{{ ns.v }}")
            elif r < 0.86:
                name = f"m{depth}"
                body = rng.choice(["[{{ a }}|{{ b }}]", "{{ varargs }}", "{{ kwargs }}",
                                   "{{ a }}{{ varargs|length }}{{ kwargs|tojson }}",
                                   "{% for q in [a] %}{{ q }}{% endfor %}"])
                call = rng.choice([f"({self.expr()})", "()", "(1, 2, 3)", "(a=1)", "(1, b=3)",
                                   "(c=4)", "(b=2, a=1)"])
                out.append(self.tag(f"macro {name}(a, b=2)") + self.text() + body + self.text() +
                           self.tag("endmacro") + "{{ " + name + call + " }}")
            elif r < 0.89:
                out.append(self.tag("filter upper") + self.block(depth + 1) +
                           self.tag("endfilter"))
            elif r < 0.92:
                out.append(self.tag("set blk") + self.block(depth + 1) + self.tag("endset") +
                           "{{ blk|length }}")
            else:
                out.append(rng.choice(["text", "a b", "c\n"]))
            out.append(self.text())
        return "".join(out)

    def template(self):
        return "{% set ns = namespace(v=0) %}" + self.block()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--render", required=True, help="the infer-chat-render binary")
    parser.add_argument("--count", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=5, help="mismatches shown")
    args = parser.parse_args()

    env = common.make_environment()
    generator = Generator(args.seed)
    jobs = []
    for _ in range(args.count):
        source = generator.template()
        try:
            expected = common.render_reference(env.from_string(source), CONTEXT)
        except Exception as e:  # a syntax error
            expected = ("syntax", str(e))
        jobs.append((source, expected))
    lines = "".join(json.dumps({"template": source, "context": CONTEXT}, ensure_ascii=False) + "\n"
                    for source, _ in jobs)
    result = subprocess.run([args.render], input=lines.encode("utf-8"), capture_output=True)
    if result.returncode != 0:
        print(f"{args.render} exited with {result.returncode}")
        return 1
    replies = [json.loads(line) for line in result.stdout.decode("utf-8").split("\n") if line]

    counts = {"text": 0, "raised": 0, "error": 0, "syntax": 0}
    failures = 0
    for (source, expected), got in zip(jobs, replies):
        if expected[0] == "syntax":
            why = None if "error" in got else f"jinja2 syntax error ({expected[1]}), C++ rendered"
        else:
            why = common.compare(expected, got)
        if why is None:
            counts[expected[0]] += 1
            continue
        failures += 1
        if failures <= args.show:
            print(f"MISMATCH: {why}\n  template: {source!r}")
            if expected[0] == "text" and "text" in got:
                print(f"  jinja2: {expected[1]!r}\n  C++:    {got['text']!r}")
    print(f"{len(jobs)} random templates: {counts['text']} same text, {counts['error']} same "
          f"error, {counts['syntax']} both syntax errors, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
