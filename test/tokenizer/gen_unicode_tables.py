#!/usr/bin/env python3
"""Generates runtime/tokenizer/UnicodeTables.cpp from the `tokenizers` library itself.

HF's character classes come from several Unicode versions at once: Oniguruma's (the regex
\\p{..}, \\s, \\w, \\d), Rust std's (is_numeric, to_lowercase), the regex crate's (\\w), and older
crates' (unicode_categories for Punctuation, unicode-normalization-alignments for the NFx forms
and StripAccents). PCRE2 10.42 and utf8proc 2.8 know other versions. So this script asks the
library what every code point is, and writes:

  * for each general category and common script: how PCRE2 should spell Oniguruma's class,
    \\p{..} plus the code points PCRE2 lacks, or the whole list where PCRE2 has some that
    Oniguruma does not (a category changed since); and Oniguruma's whole \\w
  * whole range tables for Rust's is_numeric and \\w, HF's punctuation and combining marks
  * Rust's lowercase mapping
  * the characters HF's normalization crate does not know (no decomposition, combining class 0)
    while utf8proc does: our NFx forms pass them through unchanged

PCRE2 and utf8proc are read through ctypes, so the output depends on the installed versions of
them too (Debian 12: PCRE2 10.42, utf8proc 2.8); check_unicode.py (ctest tokenizer.unicode)
fails if they change underneath.

  gen_unicode_tables.py OUT.cpp
"""
import ctypes
import ctypes.util
import sys

from pieces import component_tokenizer

POINTS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
# For the per-character normalizer probes, which put U+0001 between characters (U+0001 itself
# is a control character every table leaves alone).
SEPARABLE = [c for c in POINTS if c != 1]
CATEGORIES = ["L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No",
              "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So", "Z",
              "Zs", "Zl", "Zp"]
SCRIPTS = ["Han", "Hiragana", "Katakana", "Hangul", "Latin", "Greek", "Cyrillic", "Arabic",
           "Hebrew", "Thai", "Devanagari", "Bengali", "Tamil", "Georgian", "Armenian"]
CHUNK = 4096


# --- the oracle -------------------------------------------------------------------------------

def removed_by(pre_tokenizer):
    """Code points a Removed-behaviour split drops: its class, exactly."""
    t = component_tokenizer(pre_tokenizer=pre_tokenizer).pre_tokenizer
    members = set()
    for i in range(0, len(POINTS), CHUNK):
        chunk = POINTS[i:i + CHUNK]
        covered = bytearray(len(chunk))
        for _, (a, b) in t.pre_tokenize_str("".join(map(chr, chunk))):
            covered[a:b] = b"\x01" * (b - a)
        members.update(c for k, c in enumerate(chunk) if not covered[k])
    return members


def regex_class(pattern):
    return removed_by({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Removed",
                       "invert": False})


def alone_between_a(pre_tokenizer):
    """Code points that end up a piece of their own in "a c a c a ..." ('a' is a letter)."""
    t = component_tokenizer(pre_tokenizer=pre_tokenizer).pre_tokenizer
    members = set()
    for i in range(0, len(POINTS), CHUNK):
        chunk = POINTS[i:i + CHUNK]
        text = "a" + "".join(chr(c) + "a" for c in chunk)
        for piece, (a, b) in t.pre_tokenize_str(text):
            if b - a == 1 and a % 2 == 1:
                members.add(chunk[a // 2])
    return members


def rust_word():
    """Whitespace splits \\w+ and [^\\w\\s]+ runs: c is \\w iff it shares a piece with an 'a'."""
    t = component_tokenizer(pre_tokenizer={"type": "Whitespace"}).pre_tokenizer
    members = set()
    for i in range(0, len(POINTS), CHUNK):
        chunk = POINTS[i:i + CHUNK]
        text = "a" + "".join(chr(c) + "a" for c in chunk)
        for piece, (a, b) in t.pre_tokenize_str(text):
            if b - a > 1 and piece[0] == "a":
                members.update(chunk[k // 2] for k in range(a, b) if k % 2 == 1)
    return members


def per_char(normalizer, texts):
    """The normalizer's output for each text, run as one string with \\x01 between them."""
    n = component_tokenizer(normalizer={"type": normalizer}).normalizer
    out = []
    for i in range(0, len(texts), CHUNK):
        out += n.normalize_str("\x01".join(texts[i:i + CHUNK])).split("\x01")
    return out


# --- PCRE2 and utf8proc through ctypes --------------------------------------------------------

pcre2 = ctypes.CDLL(ctypes.util.find_library("pcre2-8") or "libpcre2-8.so.0")
pcre2.pcre2_compile_8.restype = ctypes.c_void_p
pcre2.pcre2_compile_8.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
                                  ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t),
                                  ctypes.c_void_p]
pcre2.pcre2_match_data_create_from_pattern_8.restype = ctypes.c_void_p
pcre2.pcre2_match_data_create_from_pattern_8.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
pcre2.pcre2_match_8.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t,
                                ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
pcre2.pcre2_get_ovector_pointer_8.restype = ctypes.POINTER(ctypes.c_size_t)
pcre2.pcre2_get_ovector_pointer_8.argtypes = [ctypes.c_void_p]
SUBJECT = "".join(map(chr, POINTS)).encode()
OFFSET_TO_POINT = {}
_at = 0
for _c in POINTS:
    OFFSET_TO_POINT[_at] = _c
    _at += len(chr(_c).encode())


def pcre2_class(pattern):
    error, offset = ctypes.c_int(), ctypes.c_size_t()
    raw = pattern.encode()
    code = pcre2.pcre2_compile_8(raw, len(raw), 0x00080000 | 0x00020000,  # UTF | UCP
                                 ctypes.byref(error), ctypes.byref(offset), None)
    assert code, pattern
    data = pcre2.pcre2_match_data_create_from_pattern_8(code, None)
    members, start = set(), 0
    no_utf_check = 0x40000000  # checked once below; PCRE2 would recheck 4 MB per call
    assert SUBJECT.decode()
    while pcre2.pcre2_match_8(code, SUBJECT, len(SUBJECT), start, no_utf_check, data, None) >= 0:
        ovector = pcre2.pcre2_get_ovector_pointer_8(data)
        members.add(OFFSET_TO_POINT[ovector[0]])
        start = ovector[1]
    return members


utf8proc = ctypes.CDLL(ctypes.util.find_library("utf8proc") or "libutf8proc.so.2")
utf8proc.utf8proc_map.argtypes = [ctypes.c_char_p, ctypes.c_ssize_t,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
utf8proc.utf8proc_map.restype = ctypes.c_ssize_t
libc = ctypes.CDLL(None)
libc.free.argtypes = [ctypes.c_void_p]
FORMS = {"NFC": (1 << 1) | (1 << 3), "NFD": (1 << 1) | (1 << 4),
         "NFKC": (1 << 1) | (1 << 3) | (1 << 2), "NFKD": (1 << 1) | (1 << 4) | (1 << 2)}


def utf8proc_form(form, text):
    raw = text.encode()
    out = ctypes.c_void_p()
    n = utf8proc.utf8proc_map(raw, len(raw), ctypes.byref(out), FORMS[form])
    assert n >= 0
    result = ctypes.string_at(out, n).decode()
    libc.free(out)
    return result


def utf8proc_per_char(form, texts):
    out = []
    for i in range(0, len(texts), CHUNK):
        out += utf8proc_form(form, "\x01".join(texts[i:i + CHUNK])).split("\x01")
    return out


# --- the tables -------------------------------------------------------------------------------

def ranges(points):
    out = []
    for c in sorted(points):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def pcre2_members(points):
    """A PCRE2 class body listing `points`, as C++ string pieces."""
    parts = []
    for a, b in ranges(points):
        parts.append(f"\\\\x{{{a:X}}}" if a == b else f"\\\\x{{{a:X}}}-\\\\x{{{b:X}}}")
    return parts


def cpp_string(parts, indent="        "):
    """Adjacent C++ string literals, about 90 columns a line."""
    lines, line = [], ""
    for part in parts:
        if len(line) + len(part) > 84:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return ("\n" + indent).join(f'"{x}"' for x in lines)


def frozen_for_normalization():
    texts = [chr(c) for c in SEPARABLE]
    frozen = set()
    for form in ("NFD", "NFKD"):  # decompositions HF's crate lacks
        hf = per_char(form, texts)
        ours = utf8proc_per_char(form, texts)
        for c, a, b in zip(SEPARABLE, hf, ours):
            if a != b:
                assert a == chr(c), f"HF decomposes U+{c:04X} where utf8proc does not"
                frozen.add(c)
    for prefix, suffix in (("a", "\u0334"), ("a\u0301", "")):  # combining classes it lacks
        probes = [prefix + chr(c) + suffix for c in SEPARABLE]
        for c, a, b in zip(SEPARABLE, per_char("NFD", probes), utf8proc_per_char("NFD", probes)):
            if a != b:
                frozen.add(c)
    # Canonical compositions it lacks: freeze the character that would complete one.
    decomposed = [(c, utf8proc_form("NFD", chr(c))) for c in SEPARABLE]
    decomposed = [(c, d) for c, d in decomposed if d != chr(c)]
    hf = per_char("NFC", [d for _, d in decomposed])
    for (c, d), a in zip(decomposed, hf):
        if a != utf8proc_form("NFC", d):
            frozen.add(ord(d[-1]))
    return frozen


def lowercase_runs():
    """(first, last, delta, stride) runs of Rust's single-character lowercase mapping."""
    texts = [chr(c) for c in SEPARABLE]
    pairs = []
    for c, low in zip(SEPARABLE, per_char("Lowercase", texts)):
        if low == chr(c):
            continue
        if len(low) != 1:
            assert c == 0x130, f"U+{c:04X} lowercases to {len(low)} characters"
            continue
        pairs.append((c, ord(low) - c))
    runs = []
    for c, delta in pairs:
        if runs and runs[-1][2] == delta and (
                (runs[-1][3] == 0 and c - runs[-1][1] in (1, 2)) or c - runs[-1][1] == runs[-1][3]):
            if runs[-1][3] == 0:
                runs[-1][3] = c - runs[-1][1]
            runs[-1][1] = c
        else:
            runs.append([c, c, delta, 0])
    return [(a, b, d, s or 1) for a, b, d, s in runs]


def emit_ranges(name, points, out):
    rs = ranges(points)
    out.append(f"const Range {name}[] = {{")
    for i in range(0, len(rs), 5):
        out.append("    " + " ".join(f"{{0x{a:X}, 0x{b:X}}}," for a, b in rs[i:i + 5]))
    out.append("};")
    out.append(f"const size_t {name}Size = {len(rs)};")
    out.append("")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out = ["//===- UnicodeTables.cpp - HF's character classes (generated) -------------===//",
           "//",
           "// Generated by test/tokenizer/gen_unicode_tables.py from the `tokenizers` library,",
           "// PCRE2 10.42 and utf8proc 2.8; do not edit. UnicodeTables.h says what each is.",
           "//",
           "//===----------------------------------------------------------------------===//",
           '#include "runtime/tokenizer/UnicodeTables.h"', "",
           "namespace infer::tokenizer::unicode {", ""]

    # Oniguruma's class as PCRE2 should spell it: \p{..} plus what PCRE2 lacks, or, when PCRE2
    # has characters Oniguruma does not (a category changed since), the whole list.
    classes = []
    for name, pcre2_name in [(c, c) for c in CATEGORIES] + [(s, "sc:" + s) for s in SCRIPTS]:
        onig, ours = regex_class(f"\\p{{{name}}}"), pcre2_class(f"\\p{{{pcre2_name}}}")
        if ours - onig:
            classes.append((name, pcre2_members(onig)))
        else:
            classes.append((name, [f"\\\\p{{{pcre2_name}}}"] + pcre2_members(onig - ours)))
    out.append("const PropertyClass kRegexClasses[] = {")
    for name, members in classes:
        out.append(f'    {{"{name}",\n        {cpp_string(members)}}},')
    out.append("};")
    out.append(f"const size_t kRegexClassesSize = {len(classes)};")
    out.append("")
    space = regex_class(r"\s")
    assert space == {0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F,
                     0x205F, 0x3000} | set(range(0x2000, 0x200B)), "Oniguruma's \\s changed"
    out.append("const char kOnigWordClass[] =\n    " +
               cpp_string(pcre2_members(regex_class(chr(92) + "w")), "    ") + ";")
    out.append("")

    emit_ranges("kRustNumeric", alone_between_a({"type": "Digits", "individual_digits": True}),
                out)
    emit_ranges("kHfPunctuation", removed_by({"type": "Punctuation", "behavior": "Removed"}), out)
    emit_ranges("kRustWord", rust_word(), out)
    texts = [chr(c) for c in SEPARABLE]
    marks = {c for c, s in zip(SEPARABLE, per_char("StripAccents", texts)) if s == ""}
    emit_ranges("kHfCombiningMark", marks, out)
    emit_ranges("kNormalizationFrozen", frozen_for_normalization(), out)
    runs = lowercase_runs()
    out.append("const CaseRun kRustLowercase[] = {")
    for i in range(0, len(runs), 3):
        out.append("    " + " ".join(f"{{0x{a:X}, 0x{b:X}, {d}, {s}}}," for a, b, d, s in
                                     runs[i:i + 3]))
    out.append("};")
    out.append(f"const size_t kRustLowercaseSize = {len(runs)};")
    out.append("")
    out.append("} // namespace infer::tokenizer::unicode")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
