#!/usr/bin/env python3
"""Normalizers and pre-tokenizers one at a time, against `tokenizers`, on the corpus.

Each spec (a normalizer and/or a pre-tokenizer in tokenizer.json syntax) runs over the first
3,000 strings of corpus.py in `infer-tokenizer-tool pieces` and in the library
(normalize_str, then pre_tokenize_str); the pieces must be identical. The specs reach what the
fixtures leave out: every Split behaviour with and without invert, patterns that match the empty
string (where Oniguruma's iteration decides the cuts), literal patterns with regex characters,
Ruby's line anchors and word boundaries, Replace with empty content, Strip on either side,
Metaspace's three prepend schemes, CharDelimiterSplit, and chains of them. (Like
pre_tokenize_str, each text starts at offset 0; what a normalizer does to Metaspace's "first"
inside encode is checked by the metaspace-first variant.)

  check_pieces.py --tool T
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
from pieces import infer_pieces, oracle_pieces  # noqa: E402

BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]


def split(pattern, behavior, invert=False, literal=False):
    return {"type": "Split", "pattern": {"String" if literal else "Regex": pattern},
            "behavior": behavior, "invert": invert}


def specs():
    out = {}
    for behavior in BEHAVIORS:
        for invert in (False, True):
            out[f"Split \\s+ {behavior} invert={invert}"] = {
                "pre_tokenizer": split(r"\s+", behavior, invert)}
            out[f"Split [aeiou] {behavior} invert={invert}"] = {
                "pre_tokenizer": split("[aeiou]", behavior, invert)}
        out[f"Split literal ' ' {behavior}"] = {"pre_tokenizer": split(" ", behavior, literal=True)}
        out[f"Punctuation {behavior}"] = {"pre_tokenizer": {"type": "Punctuation",
                                                            "behavior": behavior}}
    for pattern in ["a*", "x??", "$", "^", r"\b", "(?=e)", r"(?<=\s)", r"\s*$", r"^\s+", "e|",
                    r"\p{N}{1,3}", r"(?i)the", r"[\r\n]+", r"\s+(?!\S)"]:
        out[f"Split {pattern} Isolated"] = {"pre_tokenizer": split(pattern, "Isolated")}
        out[f"Split {pattern} Removed"] = {"pre_tokenizer": split(pattern, "Removed")}
    for literal in [".", "a.b", "(", "[x]", "\\", "<s>", "▁", "--"]:
        out[f"Split literal {literal!r}"] = {"pre_tokenizer": split(literal, "Isolated",
                                                                    literal=True)}
    for scheme in ["always", "first", "never"]:
        for split_ in (True, False):
            out[f"Metaspace {scheme} split={split_}"] = {"pre_tokenizer": {
                "type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme,
                "split": split_}}
    for left, right in [(True, False), (False, True), (True, True)]:
        out[f"Strip left={left} right={right}"] = {
            "normalizer": {"type": "Strip", "strip_left": left, "strip_right": right}}
    out["Replace to nothing"] = {"normalizer": {"type": "Replace", "pattern": {"Regex": r"\s+"},
                                                "content": ""}}
    out["Replace literal"] = {"normalizer": {"type": "Replace", "pattern": {"String": "."},
                                             "content": "[dot]"}}
    out["Prepend + Replace"] = {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}}
    out["CharDelimiterSplit"] = {"pre_tokenizer": {"type": "CharDelimiterSplit", "delimiter": "e"}}
    out["Digits contiguous"] = {"pre_tokenizer": {"type": "Digits", "individual_digits": False}}
    out["ByteLevel no prefix"] = {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                                                    "trim_offsets": True, "use_regex": True}}
    out["ByteLevel prefix, no regex"] = {"pre_tokenizer": {
        "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}}
    out["Sequence of splits"] = {
        "normalizer": {"type": "Sequence",
                       "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "MergedWithNext"},
            {"type": "Digits", "individual_digits": True}]}}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--count", type=int, default=3000)
    a = ap.parse_args()
    strings = corpus.generate(a.count)
    failures = 0
    all_specs = specs()
    for name, spec in all_specs.items():
        ours, error = infer_pieces(a.tool, spec, strings)
        if error is not None:
            failures += 1
            print(f"FAIL {name}: {error}")
            continue
        want = oracle_pieces(spec, strings)
        bad = [i for i in range(len(strings)) if ours[i] != want[i]]
        if bad:
            failures += 1
            i = bad[0]
            print(f"FAIL {name}: {len(bad)} strings differ, e.g. {strings[i][:60]!r}:\n"
                  f"      oracle {want[i][:10]}\n      infer  {ours[i][:10]}")
    print(f"pieces: {len(all_specs)} specs x {len(strings)} strings, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
