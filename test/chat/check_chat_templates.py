#!/usr/bin/env python3
"""Renders every chat template in templates/ with jinja2 and with infer-chat-render.

The reference is jinja2 configured exactly as transformers' apply_chat_template
configures it (utils/chat_template_utils.py: _compile_jinja_template and
render_jinja_template): an ImmutableSandboxedEnvironment with trim_blocks,
lstrip_blocks and loop controls, a `generation` block tag, the globals
raise_exception and strftime_now, a json.dumps `tojson`, and `tools` and
`documents` passed as None when absent. When transformers is importable the
replica is checked against it too.

For each template, seeded random conversations (system message or not, 1..8
turns, alternating and not, tool calls and results, unicode, whitespace,
empty and None contents, tools lists, generation prompt on and off) are
rendered both ways. A conversation passes if the texts are identical, or if
both fail and, when jinja2 failed in raise_exception('msg'), the C++ error is
a raise carrying msg. Exit status 0 if all pass, 1 otherwise, 77 if jinja2 is
missing.
"""

import argparse
import datetime
import json
import os
import random
import string
import subprocess
import sys
import time

try:
    import jinja2
    import jinja2.ext
    from jinja2 import nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    print("jinja2 is not installed; skipping (scripts/setup.sh installs it)")
    sys.exit(77)


class RaisedException(jinja2.exceptions.TemplateError):
    """What the template's raise_exception() raised."""


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker without the tracking: {% generation %}
    renders its body through a call block, as there."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise RaisedException(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render_reference(template, context):
    """("text", str) or ("raised", msg) or ("error", (exception type, message))."""
    try:
        return "text", template.render(**context)
    except RaisedException as e:
        return "raised", str(e)
    except Exception as e:  # any other failure of the template
        return "error", (type(e).__name__, str(e))


def transformers_renderer():
    """transformers' own compile function, if installed (not required)."""
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except Exception:
        return None
    return _compile_jinja_template


# ---------------------------------------------------------------------------
# Conversation generator.

WORDS = ["hello", "world", "the", "model", "answer", "please", "why", "tokens", "weather",
         "Paris", "42", "3.14", "x", "résumé", "naïve", "Straße", "über", "ÉCOLE", "Ωμέγα",
         "привет", "中文", "日本語", "한국어", "😀", "🚀", "👍🏽", "café", "ﬁ", "İstanbul"]
SPECIALS = ["'", '"', "\\", "\\n", "{{ x }}", "{% if %}", "{#", "<|im_start|>", "</s>", "<s>",
            "[INST]", "\t", "\r\n", "\u00a0", "\u3000", "\u2028", "&", "<b>", "%s", "{}",
            "<think>", "</think>", "```json\n{\"a\": 1}\n```", "\x7f", "\x1b"]
EDGES = [" ", "  ", "\n", "\n\n", " \n ", "\t", "\u00a0", "\u3000"]


def random_text(rng, allow_empty=True):
    r = rng.random()
    if allow_empty and r < 0.05:
        return ""
    if r < 0.10:
        return rng.choice(EDGES) * rng.randint(1, 3)
    parts = []
    for _ in range(rng.randint(1, 12)):
        q = rng.random()
        if q < 0.70:
            parts.append(rng.choice(WORDS[:10]))
        elif q < 0.85:
            parts.append(rng.choice(WORDS))
        else:
            parts.append(rng.choice(SPECIALS))
    text = "".join(p + rng.choice([" ", " ", " ", "", "\n", ", "]) for p in parts).strip(" ")
    if rng.random() < 0.25:
        text = rng.choice(EDGES) + text
    if rng.random() < 0.25:
        text = text + rng.choice(EDGES)
    if rng.random() < 0.08:
        text = "<think>\n" + random_text(rng) + "\n</think>\n\n" + text
    return text


def call_id(rng):
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(9))


def random_json_value(rng, depth=0):
    r = rng.random()
    if depth > 1 or r < 0.3:
        return rng.choice([random_text(rng), rng.randint(-5, 1000), rng.choice([0.5, 1.0, 2.5e-7,
                           1e16, -3.25]), True, False, None])
    if r < 0.6:
        return [random_json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["b", "a", "location", "unit", "zeta", "ä"]) + str(i):
            random_json_value(rng, depth + 1) for i in range(rng.randint(0, 3))}


TOOL_NAMES = ["get_weather", "search", "calculator", "lookup_stock"]


def random_tool(rng, name):
    props = {}
    for key in rng.sample(["location", "unit", "query", "days", "amount", "zeta", "alpha"],
                          rng.randint(0, 3)):
        prop = {"type": rng.choice(["string", "integer", "number", "boolean"]),
                "description": random_text(rng, allow_empty=False)}
        if rng.random() < 0.3:
            prop["enum"] = [random_text(rng, allow_empty=False) for _ in range(2)]
        if rng.random() < 0.2:
            prop["default"] = rng.choice([1.0, 0.5, 3, "c"])
        props[key] = prop
    function = {"name": name, "description": random_text(rng, allow_empty=False),
                "parameters": {"type": "object", "properties": props,
                               "required": list(props)[:1]}}
    if rng.random() < 0.2:
        function["return"] = {"type": "string", "description": "the result"}
    if rng.random() < 0.05:
        del function["description"]
    return {"type": "function", "function": function}


def tool_call(rng):
    args = {k: random_json_value(rng) for k in rng.sample(["location", "unit", "query"],
                                                          rng.randint(0, 2))}
    return {"type": "function", "id": call_id(rng),
            "function": {"name": rng.choice(TOOL_NAMES),
                         "arguments": args if rng.random() < 0.5 else json.dumps(args)}}


def content_value(rng, features):
    if "multimodal" in features and rng.random() < 0.2:
        parts = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3:
                parts.append({"type": "image"})
            else:
                parts.append({"type": "text", "text": random_text(rng)})
        return parts
    return random_text(rng)


def random_messages(rng, features):
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": content_value(rng, features)})
    turns = rng.randint(1, 8)
    mode = rng.random()
    use_tools = "tools" in features and rng.random() < 0.4
    role = "user"
    for i in range(turns):
        if mode < 0.12:  # roles that do not alternate (or are unknown)
            role = rng.choice(["user", "assistant", "system", "tool", "user", "developer"])
        message = {"role": role, "content": content_value(rng, features)}
        if role == "assistant":
            if use_tools and rng.random() < 0.4:
                message["tool_calls"] = [tool_call(rng) for _ in range(rng.randint(1, 2))]
                r = rng.random()
                message["content"] = None if r < 0.3 else ("" if r < 0.6 else random_text(rng))
            if "thinking" in features and rng.random() < 0.3:
                message["reasoning_content"] = random_text(rng)
            messages.append(message)
            if "tool_calls" in message:
                for call in message["tool_calls"]:
                    result = random_text(rng) if rng.random() < 0.7 else json.dumps(
                        {"result": random_json_value(rng)}, ensure_ascii=False)
                    messages.append({"role": "tool", "content": result,
                                     "tool_call_id": call["id"],
                                     "name": call["function"]["name"]})
                role = "user" if rng.random() < 0.5 else "assistant"
                continue
        else:
            messages.append(message)
        if mode >= 0.12:
            role = "assistant" if role == "user" else "user"
    if mode >= 0.12 and rng.random() < 0.15 and messages:
        messages.pop()  # end on either role
    if rng.random() < 0.02:
        messages = []
    return messages


def random_context(rng, spec):
    """The variables transformers passes (messages, tools, documents,
    add_generation_prompt, the special tokens) plus the template's options:
    spec["options"] maps a variable to values to pick from ("__absent__"
    leaves it undefined) and spec["context"] fixes variables."""
    features = set(spec.get("features", []))
    context = {
        "messages": random_messages(rng, features),
        "tools": None,
        "documents": None,
        "add_generation_prompt": rng.random() < 0.6,
    }
    tool_chance = 0.9 if "always-tools" in features else 0.5 if "tools" in features else 0.1
    if rng.random() < tool_chance:
        names = rng.sample(TOOL_NAMES, rng.randint(1, 3))
        context["tools"] = [random_tool(rng, name) for name in names]
    for key in ("bos_token", "eos_token"):
        if key in spec:
            context[key] = spec[key]
    for key, choices in spec.get("options", {}).items():
        value = rng.choice(choices)
        if value != "__absent__":
            context[key] = value
    context.update(spec.get("context", {}))
    return context


# ---------------------------------------------------------------------------


def compare(expected, got):
    """None if `got` (the driver's reply) matches `expected`, else why not."""
    kind, value = expected
    if kind == "text":
        if got.get("text") == value:
            return None
        return "jinja2 rendered text, C++ " + ("rendered different text" if "text" in got
                                               else "failed: " + got.get("error", "?"))
    if "text" in got:
        return f"jinja2 failed ({value}), C++ rendered text"
    error = got.get("error", "")
    if kind == "raised":
        if got.get("raised") and error.endswith(": " + value):
            return None
        return f"jinja2 raised {value!r}, C++ error: {error!r}"
    # Both failed: for the same reason, i.e. with Python's message.
    if not got.get("raised") and error.endswith(": " + value[1]):
        return None
    return f"jinja2 failed with {value[0]}: {value[1]!r}, C++ with {error!r}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--render", required=True, help="the infer-chat-render binary")
    parser.add_argument("--templates", required=True, help="folder with templates.json")
    parser.add_argument("--count", type=int, default=300, help="conversations per template")
    parser.add_argument("--seed", type=int, default=20240917)
    parser.add_argument("--only", help="check only this template file")
    parser.add_argument("--show", type=int, default=3, help="mismatches shown per template")
    args = parser.parse_args()

    with open(os.path.join(args.templates, "templates.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    env = make_environment()
    hf_compile = transformers_renderer()
    started = time.time()

    jobs = []  # (template file, context, expected)
    for name, spec in sorted(manifest.items()):
        if args.only and name != args.only:
            continue
        path = os.path.join(args.templates, name)
        with open(path, encoding="utf-8") as f:
            source = f.read()
        template = env.from_string(source)
        hf_template = hf_compile(source) if hf_compile else None
        rng = random.Random(f"{args.seed}:{name}")
        for i in range(args.count):
            context = random_context(rng, spec)
            expected = render_reference(template, context)
            if hf_template is not None and i < 20:
                hf = render_reference(hf_template, context)
                if hf[0] == "text" and hf != expected:
                    print(f"{name}: this script's jinja2 setup differs from transformers'")
                    return 1
            jobs.append((name, path, context, expected))

    lines = "".join(json.dumps({"template": path, "context": context}, ensure_ascii=False) + "\n"
                    for _, path, context, _ in jobs)
    result = subprocess.run([args.render], input=lines.encode("utf-8"), capture_output=True)
    if result.returncode != 0:
        print(result.stderr.decode("utf-8", "replace"))
        print(f"{args.render} exited with {result.returncode}")
        return 1
    # Not splitlines(): replies hold raw U+2028 and friends.
    replies = [json.loads(line) for line in result.stdout.decode("utf-8").split("\n") if line]
    if len(replies) != len(jobs):
        print(f"expected {len(jobs)} replies, got {len(replies)}")
        return 1

    totals = {}
    failures = 0
    for (name, _, context, expected), got in zip(jobs, replies):
        t = totals.setdefault(name, {"text": 0, "raised": 0, "error": 0, "mismatch": 0})
        why = compare(expected, got)
        if why is None:
            t[expected[0]] += 1
            continue
        t["mismatch"] += 1
        failures += 1
        if t["mismatch"] <= args.show:
            print(f"MISMATCH {name}: {why}")
            print("  context:", json.dumps(context, ensure_ascii=False)[:2000])
            if expected[0] == "text" and "text" in got:
                a, b = expected[1], got["text"]
                at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]),
                          min(len(a), len(b)))
                print(f"  first difference at {at}:")
                print("    jinja2:", repr(a[max(0, at - 60):at + 60]))
                print("    C++:   ", repr(b[max(0, at - 60):at + 60]))

    width = max((len(n) for n in totals), default=10)
    print(f"{'template':<{width}}  same-text  same-raise  both-fail  mismatch")
    for name, t in totals.items():
        print(f"{name:<{width}}  {t['text']:9d}  {t['raised']:10d}  {t['error']:9d}  "
              f"{t['mismatch']:8d}")
    print(f"{len(totals)} templates, {len(jobs)} conversations, {failures} mismatches, "
          f"{time.time() - started:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
