#!/usr/bin/env python3
"""Every code point through every Unicode-dependent component, against `tokenizers`.

The components that classify or map characters (normalization forms, Lowercase, StripAccents,
Nmt, Punctuation, Digits, Whitespace, WhitespaceSplit, and Split patterns with general
categories, scripts, \\s, \\w, \\d, their negations and a case-insensitive class) run over all
of U+0000..U+10FFFF (surrogates excluded), 512 code points a line, in `infer-tokenizer-tool
pieces` and in the library; the pieces must be identical. This pins our tables
(runtime/tokenizer/UnicodeTables.cpp over PCRE2 and utf8proc) to the ones HF's crates and
Oniguruma use, and fails if a library upgrade moves them.

  check_unicode.py --tool T
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pieces import infer_pieces, oracle_pieces  # noqa: E402

PROBES = {
    "NFC": {"normalizer": {"type": "NFC"}},
    "NFD": {"normalizer": {"type": "NFD"}},
    "NFKC": {"normalizer": {"type": "NFKC"}},
    "NFKD": {"normalizer": {"type": "NFKD"}},
    "Lowercase": {"normalizer": {"type": "Lowercase"}},
    "StripAccents": {"normalizer": {"type": "StripAccents"}},
    "Nmt": {"normalizer": {"type": "Nmt"}},
    "Punctuation": {"pre_tokenizer": {"type": "Punctuation", "behavior": "Isolated"}},
    "Digits": {"pre_tokenizer": {"type": "Digits", "individual_digits": True}},
    "Whitespace": {"pre_tokenizer": {"type": "Whitespace"}},
    "WhitespaceSplit": {"pre_tokenizer": {"type": "WhitespaceSplit"}},
}
for pattern in [r"\p{L}", r"\p{N}", r"\s", r"\w", r"\d", r"\p{P}", r"\p{S}", r"\p{M}",
                r"\p{Lu}", r"(?i:[a-zß])", r"[^\s\p{L}\p{N}]", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
                r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", r"\p{Han}", r"[\p{Hiragana}\p{Katakana}]",
                r"\p{Hangul}", r"\p{Latin}", r"\P{L}", r"\p{Zs}", r"\D", r"\W", r"\S",
                r"\p{Letter}", r"\pN", r"\p{Mn}"]:
    PROBES[f"Split {pattern}"] = {"pre_tokenizer": {
        "type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}}


def lines_of_all_code_points(width=512):
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    return ["".join(chr(c) for c in points[i:i + width]) for i in range(0, len(points), width)]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--only", help="run the probes whose name contains this")
    a = ap.parse_args()
    lines = lines_of_all_code_points()
    failures = 0
    for name, spec in PROBES.items():
        if a.only and a.only not in name:
            continue
        ours, error = infer_pieces(a.tool, spec, lines)
        if error is not None:
            print(f"FAIL {name}: {error}")
            failures += 1
            continue
        want = oracle_pieces(spec, lines)
        bad = [i for i in range(len(lines)) if ours[i] != want[i]]
        if not bad:
            print(f"ok   {name}: {len(lines)} lines, 0 mismatches")
            continue
        failures += 1
        # Name the code points whose pieces differ (first differing piece of each line).
        points = []
        for i in bad:
            w, o = want[i], ours[i]
            for k in range(min(len(w), len(o))):
                if w[k] != o[k]:
                    points.append(f"U+{ord(lines[i][0]) + 0:04X}..: want {w[k][:6]!r} got "
                                  f"{o[k][:6]!r}")
                    break
            else:
                points.append(f"line {i}: {len(w)} vs {len(o)} pieces")
        print(f"FAIL {name}: {len(bad)} of {len(lines)} lines differ; {points[:6]}")
    print(f"unicode: {len(PROBES)} probes over every code point, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
