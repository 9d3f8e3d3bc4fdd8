#!/usr/bin/env python3
"""Writes stream_cases.json, the oracle's answers for the DecodeStream gtest.

For every fixture: id sequences whose tokens split multi-byte characters (CJK, emoji, accents
through byte fallback or byte-level tokens), sequences with special tokens inside, and sequences
of bytes that never complete a character. Each case records the ids and the `tokenizers`
library's decode of them with and without skip_special_tokens. `--check` regenerates the cases
and fails if the committed file differs (so the gtest's references stay the oracle's).

  make_stream_cases.py [--check] FIXTURES_DIR OUT_JSON
"""
import argparse
import json
import os
import sys

from tokenizers import Tokenizer

FIXTURES = ["llama2", "llama3", "gpt2", "mistral", "qwen2", "gemma", "misc", "suffix",
            "metaspace"]
TEXTS = ["中文分词", "🙂", "a🙂b", "👩‍💻 writes code", "naïve café", "日本語のテキスト", "𠀋𡈽",
         "Hello world", "  leading spaces", "Ångström ₿ ∑ ✓", "한국어", "🇫🇷🇯🇵",
         "x\u0301y\u0308", "tab\tand\nnewline", "z̴̢̛͎a̸̧͚l̶̰̈́g̷̱̈o̵̤͝"]


def byte_token_ids(tokenizer, data):
    """Ids spelling `data` byte by byte: <0xXX> tokens, or byte-level characters."""
    ids = []
    for b in data:
        id_ = tokenizer.token_to_id(f"<0x{b:02X}>")
        if id_ is None:
            # GPT-2's bytes_to_unicode: printable Latin-1 maps to itself.
            printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
            n = 0
            table = {}
            for c in range(256):
                if c in printable:
                    table[c] = chr(c)
                else:
                    table[c] = chr(256 + n)
                    n += 1
            id_ = tokenizer.token_to_id(table[b])
        if id_ is None:
            return None
        ids.append(id_)
    return ids


def cases_for(tokenizer):
    cases = []

    def add(name, ids, incomplete=False):
        cases.append({"name": name, "ids": ids, "incomplete": incomplete,
                      "decode": tokenizer.decode(ids, skip_special_tokens=False),
                      "decode_skip": tokenizer.decode(ids, skip_special_tokens=True)})

    for i, text in enumerate(TEXTS):
        add(f"text{i}", tokenizer.encode(text, add_special_tokens=False).ids)
    specials = sorted(id_ for id_, t in tokenizer.get_added_tokens_decoder().items() if t.special)
    if specials:
        body = tokenizer.encode("中文 and 🙂", add_special_tokens=False).ids
        add("specials", [specials[0]] + body + [specials[-1]] + body + [specials[0]])
        add("special_first", [specials[-1], specials[-1]] + body)
    # "h" then a stray continuation byte: under ByteFallback the whole run, "h" included,
    # decodes to U+FFFDs, so the "h" must not be shown before the run ends.
    for name, data in [("cjk_bytes", "中文".encode()), ("emoji_bytes", "🙂!".encode()),
                       ("accent_bytes", "é".encode()), ("ascii_then_bad_byte", b"h\x97")]:
        ids = byte_token_ids(tokenizer, data)
        if ids:
            add(name, ids)
    # Bytes that never complete a character: the stream holds them until finish().
    for name, data in [("truncated", "中".encode()[:2]), ("lone_continuation", b"\x80"),
                       ("invalid_lead", b"\xff"), ("truncated_emoji", "🙂".encode()[:3])]:
        ids = byte_token_ids(tokenizer, data)
        if ids:
            add(name, ids, incomplete=True)
    return cases


def build(fixtures_dir):
    out = {}
    for name in FIXTURES:
        tokenizer = Tokenizer.from_file(os.path.join(fixtures_dir, name, "tokenizer.json"))
        out[name] = cases_for(tokenizer)
    return json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("fixtures")
    ap.add_argument("out")
    a = ap.parse_args()
    text = build(a.fixtures)
    if a.check:
        with open(a.out, encoding="utf-8") as f:
            if f.read() != text:
                print(f"FAIL: {a.out} differs from what the tokenizers library gives now; "
                      f"rerun make_stream_cases.py", file=sys.stderr)
                return 1
        print(f"stream cases: {a.out} matches the tokenizers library")
        return 0
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
