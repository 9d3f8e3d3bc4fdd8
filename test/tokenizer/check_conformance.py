#!/usr/bin/env python3
"""Conformance of infer's tokenizer with the Python `tokenizers` library on one fixture.

Over the seeded corpus (corpus.py, 12,000 strings) and the fixture's tokenizer.json:

  encode     `infer-run tokenize` ids == Tokenizer.encode(s, add_special_tokens=False).ids,
             and with --add-special-tokens == encode(s, add_special_tokens=True) (first 2,000)
  decode     `infer-run tokenize --decode [--skip-special-tokens]` of the oracle's ids, and of
             3,000 random id sequences (any token, then byte-sized tokens only), == decode(ids)
  round trip decode(encode(s)) == s wherever the oracle's round-trips
  stream     DecodeStream (infer-tokenizer-tool stream) over the same id sequences: every step
             valid UTF-8, steps + finish == the oracle's decode, both skip settings
  vocab      vocabSize and the special ids == get_vocab_size(True) and the special added tokens

Every comparison must be exact: prints a summary, and on a mismatch the first few with ids.

--fixture is a folder holding tokenizer.json, or a variant (fixtures/variants/NAME.json): a real
fixture with some components replaced ("set") or added tokens appended ("append_added_tokens"),
e.g. DeepSeek's pre-tokenizer over the gpt2 vocabulary; it is assembled in a temporary folder.

  check_conformance.py --infer-run R --tool T --fixture DIR|VARIANT.json [--count N] [--seed S]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
from tokenizers import Tokenizer  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

SHOW = 5


def run_lines(cmd, lines):
    """Runs cmd with one line per input item; returns its output lines (exit 0 required)."""
    data = "".join(line + "\n" for line in lines).encode()
    proc = subprocess.run([str(c) for c in cmd], input=data, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(map(str, cmd))} exited {proc.returncode}: "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    out = proc.stdout.decode().split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(lines):
        raise SystemExit(f"FAIL: {cmd[0]} answered {len(out)} lines for {len(lines)}")
    return out


def random_sequences(oracle, rng, count):
    """Id sequences of any tokens, then of short (often partial-character) tokens only."""
    ids = sorted(set(oracle.get_vocab(with_added_tokens=True).values()))
    short = [i for i in ids if len(oracle.id_to_token(i)) <= 1 or
             (oracle.id_to_token(i).startswith("<0x") and len(oracle.id_to_token(i)) == 6)]
    out = [[rng.choice(ids) for _ in range(rng.randint(1, 24))] for _ in range(count // 2)]
    out += [[rng.choice(short) for _ in range(rng.randint(1, 12))]
            for _ in range(count - count // 2)]
    return out


def assemble_variant(path, folder):
    """Writes the tokenizer.json a variant describes into `folder`."""
    with open(path, encoding="utf-8") as f:
        variant = json.load(f)
    base = os.path.join(os.path.dirname(os.path.abspath(path)), "..", variant["base"],
                        "tokenizer.json")
    with open(base, encoding="utf-8") as f:
        spec = json.load(f)
    spec.update(variant.get("set", {}))
    next_id = max(list(spec["model"]["vocab"].values()) +
                  [t["id"] for t in spec["added_tokens"]]) + 1
    for i, token in enumerate(variant.get("append_added_tokens", [])):
        spec["added_tokens"].append(dict(token, id=next_id + i))
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--tool", required=True, help="infer-tokenizer-tool")
    ap.add_argument("--fixture", required=True, help="a folder holding tokenizer.json")
    ap.add_argument("--count", type=int, default=12000)
    ap.add_argument("--seed", type=int, default=20261205, help="the corpus seed")
    a = ap.parse_args()
    name = os.path.basename(os.path.normpath(a.fixture))
    if a.fixture.endswith(".json"):
        name = name[:-len(".json")]
        with tempfile.TemporaryDirectory() as tmp:
            assemble_variant(a.fixture, tmp)
            a.fixture = tmp
            return check(a, name)
    return check(a, name)


def check(a, name):
    oracle = Tokenizer.from_file(os.path.join(a.fixture, "tokenizer.json"))
    strings = corpus.generate(a.count, a.seed)
    failures = []

    def report(what, bad, show):
        if bad:
            failures.append(f"{what}: {len(bad)} mismatches")
            print(f"FAIL {name} {what}: {len(bad)} mismatches; the first {min(SHOW, len(bad))}:")
            for item in bad[:SHOW]:
                print("   ", show(item))

    # encode, with and without the post-processor
    tokenize = [a.infer_run, "tokenize", "--tokenizer", a.fixture]
    lines = [json.dumps(s, ensure_ascii=(i % 2 == 0)) for i, s in enumerate(strings)]
    expected = [e.ids for e in oracle.encode_batch(strings, add_special_tokens=False)]
    ours = [json.loads(x) for x in run_lines(tokenize, lines)]
    bad = [i for i in range(len(strings)) if ours[i] != expected[i]]
    report("encode", bad, lambda i: f"{strings[i][:120]!r}\n      oracle {expected[i][:32]}"
                                    f"\n      infer  {ours[i][:32]}")
    special_count = min(2000, len(strings))
    expected_special = [e.ids for e in
                        oracle.encode_batch(strings[:special_count], add_special_tokens=True)]
    ours_special = [json.loads(x) for x in
                    run_lines(tokenize + ["--add-special-tokens"], lines[:special_count])]
    bad = [i for i in range(special_count) if ours_special[i] != expected_special[i]]
    report("encode add_special_tokens", bad,
           lambda i: f"{strings[i][:120]!r}: oracle {expected_special[i][:16]} "
                     f"infer {ours_special[i][:16]}")

    # decode and stream, of the oracle's ids and of random ones
    rng = random.Random(7)
    sequences = expected + random_sequences(oracle, rng, 3000)
    id_lines = [json.dumps(ids) for ids in sequences]
    round_trips = round_trip_ok = 0
    stream_checked = 0
    for skip in (False, True):
        flag = ["--skip-special-tokens"] if skip else []
        want = oracle.decode_batch(sequences, skip_special_tokens=skip)
        got = [json.loads(x) for x in run_lines(tokenize + ["--decode"] + flag, id_lines)]
        bad = [i for i in range(len(sequences)) if got[i] != want[i]]
        report(f"decode skip={skip}", bad,
               lambda i: f"{sequences[i][:24]}\n      oracle {want[i][:80]!r}"
                         f"\n      infer  {got[i][:80]!r}")
        if not skip:
            for i, s in enumerate(strings):
                if want[i] == s:
                    round_trips += 1
                    round_trip_ok += got[i] == s
        streamed = [json.loads(x) for x in run_lines([a.tool, "stream", a.fixture] + flag,
                                                     id_lines)]
        bad = [i for i in range(len(sequences))
               if not streamed[i]["valid"] or
               "".join(streamed[i]["chunks"]) + streamed[i]["finish"] != want[i]]
        stream_checked += len(sequences)
        report(f"stream skip={skip}", bad,
               lambda i: f"{sequences[i][:24]}\n      oracle {want[i][:80]!r}"
                         f"\n      chunks {streamed[i]['chunks'][:12]} finish "
                         f"{streamed[i]['finish']!r} valid {streamed[i]['valid']}")
    if round_trip_ok != round_trips:
        failures.append(f"round trip: {round_trips - round_trip_ok} of {round_trips}")

    # vocabulary size and special ids
    info = json.loads(subprocess.run([a.tool, "info", a.fixture], capture_output=True,
                                     text=True, check=True).stdout)
    want_specials = sorted(i for i, t in oracle.get_added_tokens_decoder().items() if t.special)
    if info["vocab_size"] != oracle.get_vocab_size(with_added_tokens=True):
        failures.append(f"vocab size {info['vocab_size']} != "
                        f"{oracle.get_vocab_size(with_added_tokens=True)}")
    if info["specials"] != want_specials:
        failures.append(f"special ids {info['specials'][:8]} != {want_specials[:8]}")

    # what the corpus exercised
    added = set(oracle.get_added_tokens_decoder())
    byte_ids = {oracle.token_to_id(f"<0x{b:02X}>") for b in range(256)} - {None}
    with_added = sum(1 for ids in expected if added & set(ids))
    with_bytes = sum(1 for ids in expected if byte_ids & set(ids))
    tokens = sum(len(ids) for ids in expected)
    print(f"{name}: {len(strings)} strings ({tokens} tokens; {with_added} with added tokens, "
          f"{with_bytes} with byte-fallback tokens), encode mismatches "
          f"{sum(1 for i in range(len(strings)) if ours[i] != expected[i])}; "
          f"{len(sequences)} id sequences decoded x2 and streamed x2 ({stream_checked} streams); "
          f"round trips {round_trip_ok}/{round_trips}; vocab {info['vocab_size']}")
    if failures:
        print(f"FAIL {name}: " + "; ".join(failures))
        return 1
    print(f"PASS {name}: 0 mismatches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
