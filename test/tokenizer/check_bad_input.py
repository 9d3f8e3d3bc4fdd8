#!/usr/bin/env python3
"""`infer-run tokenize` refuses bad input with one clear line on stderr and exit 1.

  input    a line that is not valid UTF-8, not JSON, not a string (encode) or not an array of
           integer ids (--decode), an id outside the vocabulary: the message names the line,
           and the answers to the lines before it were printed
  files    a tokenizer.json of a kind we do not implement (WordPiece, Unigram and WordLevel
           models built with the `tokenizers` library; a BPE with a Bert normalizer, a
           BertPreTokenizer, a WordPiece decoder, dropout, truncation), a missing path, a file
           that is not JSON: the message names what is unsupported

  check_bad_input.py --infer-run R --fixture DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

failures = []


def run(cmd, data):
    return subprocess.run([str(c) for c in cmd], input=data, capture_output=True)


def expect_error(name, cmd, data, words, good_lines=0):
    proc = run(cmd, data)
    lines = [x for x in proc.stderr.decode(errors="replace").splitlines() if x.strip()]
    out = proc.stdout.decode(errors="replace").split("\n")[:-1]
    problems = []
    if proc.returncode != 1:
        problems.append(f"exit {proc.returncode}, not 1")
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines, not 1: {lines[:3]}")
    elif not all(w.lower() in lines[0].lower() for w in words):
        problems.append(f"stderr {lines[0]!r} lacks {words}")
    if len(out) != good_lines:
        problems.append(f"{len(out)} answers before the error, not {good_lines}")
    if problems:
        failures.append(f"{name}: " + "; ".join(problems))
        print(f"FAIL {name}: " + "; ".join(problems))
    else:
        print(f"ok   {name}: {lines[0]}")


def tokenizer_file(folder, name, tokenizer=None, edit=None, base=None):
    """Writes FOLDER/NAME/tokenizer.json from a Tokenizer, optionally editing its JSON."""
    spec = json.loads(tokenizer.to_str() if tokenizer else open(base).read())
    if edit:
        edit(spec)
    path = os.path.join(folder, name)
    os.makedirs(path)
    with open(os.path.join(path, "tokenizer.json"), "w") as f:
        json.dump(spec, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--fixture", required=True)
    a = ap.parse_args()
    encode = [a.infer_run, "tokenize", "--tokenizer", a.fixture]
    decode = encode + ["--decode"]
    vocab = Tokenizer.from_file(os.path.join(a.fixture, "tokenizer.json")).get_vocab_size(True)

    good = b'"hello"\n"world"\n'
    expect_error("invalid UTF-8", encode, good + b'"caf\xc3"\n', ["line 3", "UTF-8"], 2)
    expect_error("invalid UTF-8 outside the string", encode, good + b'\xff"x"\n',
                 ["line 3", "UTF-8"], 2)
    expect_error("not JSON", encode, b"hello\n", ["line 1", "not a JSON string"])
    expect_error("a number", encode, good + b"42\n", ["line 3", "not a JSON string"], 2)
    expect_error("an empty line", encode, b'"a"\n\n"b"\n', ["line 2", "not a JSON string"], 1)
    expect_error("a lone surrogate", encode, b'"\\ud800"\n', ["line 1", "not a JSON string"])
    expect_error("an array to encode", encode, b"[1, 2]\n", ["line 1", "not a JSON string"])
    expect_error("decode: a string", decode, b"[1]\n\"text\"\n", ["line 2", "array"], 1)
    expect_error("decode: a non-integer", decode, b"[1, 2.5]\n", ["line 1", "array"])
    expect_error("decode: a string id", decode, b'[1, "2"]\n', ["line 1", "array"])
    expect_error("decode: a negative id", decode, b"[1]\n[1, -1]\n", ["line 2", "id -1"], 1)
    expect_error("decode: an id past the vocabulary", decode, f"[{vocab}]\n".encode(),
                 ["line 1", f"id {vocab}", "vocabulary"])
    expect_error("decode: invalid UTF-8", decode, b"[1]\n\xfe\n", ["line 2", "UTF-8"], 1)

    base = os.path.join(a.fixture, "tokenizer.json")
    with tempfile.TemporaryDirectory() as tmp:
        vocab_words = {"[UNK]": 0, "a": 1, "b": 2, "ab": 3}
        cases = [
            ("WordPiece model", tokenizer_file(tmp, "wordpiece", Tokenizer(models.WordPiece(
                vocab_words, unk_token="[UNK]"))), ["model", "WordPiece"]),
            ("Unigram model", tokenizer_file(tmp, "unigram", Tokenizer(models.Unigram(
                [("<unk>", 0.0), ("a", -1.0), ("b", -2.0)], 0, False))), ["model", "Unigram"]),
            ("WordLevel model", tokenizer_file(tmp, "wordlevel", Tokenizer(models.WordLevel(
                vocab_words, unk_token="[UNK]"))), ["model", "WordLevel"]),
        ]
        bpe = Tokenizer(models.BPE(vocab_words, [("a", "b")]))
        bpe.normalizer = normalizers.BertNormalizer()
        cases.append(("Bert normalizer", tokenizer_file(tmp, "bert-normalizer", bpe),
                      ["normalizer", "Bert"]))
        bpe = Tokenizer(models.BPE(vocab_words, [("a", "b")]))
        bpe.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        cases.append(("BertPreTokenizer", tokenizer_file(tmp, "bert-pre", bpe),
                      ["pre_tokenizer", "BertPreTokenizer"]))
        bpe = Tokenizer(models.BPE(vocab_words, [("a", "b")]))
        bpe.decoder = decoders.WordPiece()
        cases.append(("WordPiece decoder", tokenizer_file(tmp, "wp-decoder", bpe),
                      ["decoder", "WordPiece"]))

        def dropout(spec):
            spec["model"]["dropout"] = 0.1

        def truncation(spec):
            spec["truncation"] = {"direction": "Right", "max_length": 16, "strategy":
                                  "LongestFirst", "stride": 0}

        cases.append(("BPE dropout", tokenizer_file(tmp, "dropout", base=base, edit=dropout),
                      ["dropout"]))
        cases.append(("truncation", tokenizer_file(tmp, "truncation", base=base, edit=truncation),
                      ["truncation"]))
        not_json = os.path.join(tmp, "not-json.json")
        with open(not_json, "w") as f:
            f.write("{ this is not json")
        cases.append(("not JSON", not_json, ["not a JSON object"]))
        cases.append(("missing file", os.path.join(tmp, "missing"), ["missing"]))
        for name, path, words in cases:
            expect_error(f"tokenizer.json: {name}", [a.infer_run, "tokenize", "--tokenizer", path],
                         b'"hello"\n', words)
    if failures:
        print(f"FAIL bad input: {len(failures)} cases")
        return 1
    print("PASS bad input: every case one line on stderr, exit 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
