#!/usr/bin/env python3
"""A deterministic corpus of strings that exercise tokenizers (seeded; same list every run).

Covers ASCII prose, accents (composed and decomposed), CJK, emoji with ZWJ sequences, skin tones,
flags and keycaps, combining marks (Devanagari, Thai, Arabic, Hebrew), code, whitespace runs
(spaces, tabs, \\n, \\r\\n, NBSP, U+0085, U+2028, ideographic space), digit runs (ASCII and
others), contractions in any case, the text of special and added tokens of every fixture (whole,
partial, glued to words), leading/trailing spaces, very long words, control characters, random
assigned code points, and the empty string. Characters are limited to ones assigned in Unicode 14
so that every library's tables agree on them.

  corpus.py [--count N] [--out FILE]   writes one JSON string per line (default: 12000 strings)
"""
import argparse
import json
import random
import unicodedata

from common_words import COMMON_WORDS

WORDS = COMMON_WORDS + """tokenizer merge vocabulary encoding Hugging Face byte-level attention
transformer inference kernel latency throughput London Paris Tokyo Berlin Rome Alice Bob""".split()

ACCENTED = ["café", "naïve", "résumé", "Ångström", "façade", "jalapeño", "Zürich", "São Paulo",
            "Dvořák", "Łódź", "Øresund", "smörgåsbord", "crème brûlée", "İstanbul", "straße",
            "Ελληνικά", "Русский язык", "Tiếng Việt", "Hà Nội", "ǅemal", "ﬁnance", "Ⅻ", "①②③",
            "ｆｕｌｌｗｉｄｔｈ", "ＡＢＣ１２３", "ſtraße", "Kelvin K", "ẞ", "µ", "ΣΑΣ"]
DECOMPOSED = ["e\u0301", "cafe\u0301", "n\u0303", "A\u030a", "o\u0308\u0304", "i\u0307",
              "\u1100\u1161\u11a8", "a\u0328\u0301"]
CJK = ["中文分词测试", "今天天气很好。", "我爱北京天安门", "日本語のテキストです", "ひらがなとカタカナ",
       "한국어 문장입니다", "東京タワー", "漢字と仮名", "繁體中文測試", "𠀋𡈽𡌛", "龘靐齉", "〇一二三"]
EMOJI = ["🙂", "😀😃😄", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇯🇵🇺🇸", "1️⃣#️⃣", "❤️", "🤷🏾‍♀️",
         "🧑🏻‍🤝‍🧑🏿", "☕", "⌚", "🫠", "🏴󠁧󠁢󠁳󠁣󠁴󠁿"]
MARKS = ["नमस्ते दुनिया", "हिन्दी", "ภาษาไทย", "สวัสดีครับ", "مرحبا بالعالم", "العربية", "שָׁלוֹם",
         "עברית", "ক্ষ", "தமிழ்", "ཀ྄ཀ", "z̴̢̛͎a̸̧͚l̶̰̈́g̷̱̈o̵̤͝"]
CODE = ["def f(x):\n    return x**2\n", "int main() {\n\tprintf(\"%d\\n\", 42);\n}",
        "for (int i = 0; i < n; ++i) { a[i] += b[i]; }", "    if x == 1:\n        pass\n",
        "<div class=\"x\">&nbsp;</div>", "SELECT * FROM t WHERE id = 7;", "x=>x*2 // arrow",
        "fn main() { println!(\"hi\"); }", "#include <stdio.h>", "a && b || !c", "{{ '{{' }}",
        "https://example.com/path?q=1&r=%20#frag", "user@example.org", "C:\\Users\\me\\file.txt",
        "$ ls -la | grep '.py'", "@@ -1,3 +1,4 @@", "/* comment */", "0x7fff_ffff", "1e-9f"]
SPACES = [" ", "  ", "   ", "    ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n", "\r", " \n ",
          "\u00a0", "\u0085", "\u2028", "\u2029", "\u3000", "\u200b", "\u2003", "\u202f",
          "\u1680", "\x0b", "\x0c", " \t \n", "\n   \n"]
DIGITS = ["0", "7", "42", "123", "1234", "12345", "3.14159", "1,000,000", "2024-12-05",
          "+1 (555) 123-4567", "99999999999999999999", "٣٤٥", "１２３", "१२३", "½", "²³", "Ⅳ"]
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'M",
                "'LL", "'D", "'Ll", "n't", "'sa", "’s", "'ſ"]
SPECIAL_TEXT = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                "<|eot_id|>", "<|reserved_special_token_3|>", "<s>", "</s>", "<unk>",
                "<|endoftext|>", "<|im_start|>", "<|im_end|>", "[INST]", "[/INST]", "<mask>",
                "<|end|>", "[WORD]", "hello world", "Hello World", "<bos>", "<eos>", "<pad>",
                "<start_of_turn>", "<end_of_turn>", "new line", "<|begin_of", "<s", "</", "<|",
                "|>", "<0x41>", "<0xE4>", "▁", "▁▁", "Ġ", "Ċ", "##", "</w>", "<sep>", "<cls>",
                "<tool_call>", " lstrip", "lstrip", "[UNK]", "[CLS]", "[SEP]", "--", "th", "TH"]
CONTROL = ["\x00", "\x01", "\x07", "\x1b[0m", "\x7f", "\u0080", "\u009f", "\ufeff", "\ufffd",
           "\u00ad", "\u200d", "\u200e", "\ue000", "\U000f0000"]

# Blocks assigned long ago; random draws skip unassigned code points.
BLOCKS = [(0x20, 0x7e), (0xa0, 0x24f), (0x370, 0x3ff), (0x400, 0x4ff), (0x530, 0x58f),
          (0x590, 0x5ff), (0x600, 0x6ff), (0x900, 0x97f), (0xe00, 0xe7f), (0x10a0, 0x10ff),
          (0x1100, 0x11ff), (0x1e00, 0x1eff), (0x2000, 0x206f), (0x20a0, 0x20bf), (0x2100, 0x214f),
          (0x2190, 0x21ff), (0x2200, 0x22ff), (0x2500, 0x257f), (0x3000, 0x303f), (0x3040, 0x30ff),
          (0x4e00, 0x9fa5), (0xac00, 0xd7a3), (0xff00, 0xffef), (0x1f300, 0x1f5ff),
          (0x1f600, 0x1f64f), (0x1d400, 0x1d7ff), (0x20000, 0x2a6d6)]


def random_char(rng):
    while True:
        lo, hi = rng.choice(BLOCKS)
        ch = chr(rng.randint(lo, hi))
        if unicodedata.category(ch) not in ("Cn", "Cs"):
            return ch


def sentence(rng, n=None):
    words = [rng.choice(WORDS) for _ in range(n or rng.randint(3, 16))]
    words[0] = words[0].capitalize()
    out = []
    for w in words:
        out.append(w)
        if rng.random() < 0.12:
            out[-1] += rng.choice([",", ";", ":", " -", "'s", "'ll", "n't"])
    return " ".join(out) + rng.choice([".", "!", "?", "...", ""])


def fragment(rng):
    kind = rng.randrange(13)
    if kind == 0:
        return sentence(rng)
    if kind == 1:
        return rng.choice(ACCENTED)
    if kind == 2:
        return rng.choice(DECOMPOSED)
    if kind == 3:
        return rng.choice(CJK)
    if kind == 4:
        return rng.choice(EMOJI)
    if kind == 5:
        return rng.choice(MARKS)
    if kind == 6:
        return rng.choice(CODE)
    if kind == 7:
        return rng.choice(SPACES)
    if kind == 8:
        return rng.choice(DIGITS)
    if kind == 9:
        return rng.choice(WORDS) + rng.choice(CONTRACTIONS)
    if kind == 10:
        return rng.choice(SPECIAL_TEXT)
    if kind == 11:
        return rng.choice(CONTROL)
    return "".join(random_char(rng) for _ in range(rng.randint(1, 8)))


def generate(count=12000, seed=20261205):
    """The corpus: fixed edge cases first, then `count` seeded random strings in all."""
    rng = random.Random(seed)
    fixed = ["", " ", "  ", "a", " a", "a ", "\n", "\r\n", "\t", "Hello", " Hello", "Hello ",
             "  Hello  world  ", "Hello\nworld", "Hello\r\nworld\r\n", "Hello world!",
             "<s>", " <s> ", "<s>Hello</s>", "Hello<s>world", "<|begin_of_text|>Hello",
             "<|endoftext|><|endoftext|>", "<|im_start|>user\nhi<|im_end|>\n",
             "[INST] hi [/INST]", "a <mask> b", "x<mask>y", "a  <mask>  b", "<|end|>  \n next",
             "[WORD]", "a [WORD] b", "a[WORD]b", "hello world", "say hello world!",
             "new line", "a new line here", "1234567890", "3.14", "I'm", "YOU'LL", "don't",
             "a" * 5000, "ab" * 3000, "lorem" * 700, "🙂" * 500, "中" * 2000, " " * 300,
             "\n" * 100, "\t" * 50, "a\u0085b", "a\u2028b", "x" * 255 + "y",
             "▁hello▁world", "Ġhello", "<0xE4><0xB8><0xAD>", "ſ's 'ſ", "İi", "ΣΑΣ σας"]
    strings = list(fixed)
    for _ in range(max(0, count - len(fixed))):
        shape = rng.random()
        if shape < 0.3:
            s = sentence(rng)
        elif shape < 0.85:
            parts = [fragment(rng) for _ in range(rng.randint(1, 8))]
            s = "".join(p + rng.choice(["", "", " ", "  ", "\n"]) for p in parts)
        elif shape < 0.95:
            s = " ".join(sentence(rng) for _ in range(rng.randint(2, 10)))
            s = rng.choice(["", " ", "\n", "  "]) + s + rng.choice(["", " ", "\n", "   "])
        else:
            c = rng.choice(WORDS + ACCENTED + CJK + EMOJI)
            s = c * rng.randint(20, 400)
        strings.append(s)
    return strings


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=12000)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    lines = "".join(json.dumps(s) + "\n" for s in generate(a.count))
    if a.out == "-":
        print(lines, end="")
    else:
        with open(a.out, "w") as f:
            f.write(lines)


if __name__ == "__main__":
    main()
