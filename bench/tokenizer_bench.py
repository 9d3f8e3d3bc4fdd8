#!/usr/bin/env python3
"""Encode speed of infer's tokenizer beside the Python `tokenizers` library, one core each.

The text is English: the King James Bible from Debian's bible-kjv-text (`bible -f
gen1:1-rev22:21`, 4.4 MB, needs `apt-get install bible-kjv-text`), or --text FILE. Both sides
encode the same documents (whole lines, ~4 KiB each) with add_special_tokens=False on one CPU
(taskset -c CPU; the library with TOKENIZERS_PARALLELISM=false and RAYON_NUM_THREADS=1): one
cold pass (empty word caches), then --repeat timed passes, reported as MB/s of UTF-8 input.
infer is timed inside infer-tokenizer-tool around the encode calls only (no JSON, no I/O); the
library around `Tokenizer.encode` from Python. The token counts must agree.

  tokenizer_bench.py --tool BUILD/bin/infer-tokenizer-tool [--fixtures DIR] [--text FILE]
                     [--repeat 3] [--cpu 0] [--tokenizers llama3,gpt2,llama2]

Prints a table, then one JSON line.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def documents(text):
    """Whole lines, about 4 KiB of UTF-8 each (as infer-tokenizer-tool bench cuts them)."""
    out, current, size = [], [], 0
    for line in text.split("\n"):
        current.append(line + "\n")
        size += len(line.encode()) + 1
        if size >= 4096:
            out.append("".join(current))
            current, size = [], 0
    if text.endswith("\n"):
        current = current[:-1]  # split() gave an empty last "line"
    if current:
        out.append("".join(current))
    return out


def hf_worker(fixture, text_file, repeat):
    """Runs in a child pinned to one CPU; prints one JSON line."""
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(os.path.join(fixture, "tokenizer.json"))
    with open(text_file, encoding="utf-8", newline="") as f:
        docs = documents(f.read())
    size = sum(len(d.encode()) for d in docs)
    times, tokens = [], 0
    for _ in range(repeat + 1):
        start = time.perf_counter()
        tokens = sum(len(tokenizer.encode(d, add_special_tokens=False).ids) for d in docs)
        times.append(time.perf_counter() - start)
    warm = sum(times[1:]) / repeat
    print(json.dumps({"bytes": size, "documents": len(docs), "tokens": tokens, "seconds": warm,
                      "mb_per_s": size / warm / 1e6, "cold_mb_per_s": size / times[0] / 1e6}))


def pinned(cpu, cmd, env=None):
    proc = subprocess.run(["taskset", "-c", str(cpu)] + [str(c) for c in cmd],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(map(str, cmd))}: {proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", help="infer-tokenizer-tool")
    ap.add_argument("--fixtures", default=os.path.join(HERE, "..", "test", "tokenizer", "fixtures"))
    ap.add_argument("--text")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--tokenizers", default="llama3,gpt2,llama2")
    ap.add_argument("--hf-worker", nargs=2, metavar=("FIXTURE", "TEXT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.hf_worker:
        return hf_worker(a.hf_worker[0], a.hf_worker[1], a.repeat)
    if not a.tool:
        ap.error("--tool is required")

    with tempfile.TemporaryDirectory() as tmp:
        text_file = a.text
        source = a.text
        if not text_file:
            text_file = os.path.join(tmp, "kjv.txt")
            with open(text_file, "w") as f:
                subprocess.run(["bible", "-f", "gen1:1-rev22:21"], stdout=f, check=True)
            source = "bible-kjv-text (bible -f gen1:1-rev22:21)"
        env = dict(os.environ, TOKENIZERS_PARALLELISM="false", RAYON_NUM_THREADS="1")
        rows = []
        for name in a.tokenizers.split(","):
            fixture = os.path.join(a.fixtures, name)
            ours = pinned(a.cpu, [a.tool, "bench", fixture, text_file, "--repeat", a.repeat])
            hf = pinned(a.cpu, [sys.executable, os.path.abspath(__file__), "--repeat", a.repeat,
                                "--hf-worker", fixture, text_file], env)
            if ours["tokens"] != hf["tokens"] or ours["bytes"] != hf["bytes"]:
                raise SystemExit(f"FAIL {name}: infer {ours['tokens']} tokens of {ours['bytes']} "
                                 f"bytes, tokenizers {hf['tokens']} of {hf['bytes']}")
            rows.append({"tokenizer": name, "bytes": ours["bytes"], "documents": ours["documents"],
                         "tokens": ours["tokens"], "infer_mb_s": round(ours["mb_per_s"], 2),
                         "infer_cold_mb_s": round(ours["cold_mb_per_s"], 2),
                         "hf_mb_s": round(hf["mb_per_s"], 2),
                         "hf_cold_mb_s": round(hf["cold_mb_per_s"], 2),
                         "speedup": round(ours["mb_per_s"] / hf["mb_per_s"], 2)})

    import tokenizers
    print(f"text: {source}, {rows[0]['bytes']:,} bytes in {rows[0]['documents']} documents; "
          f"one CPU ({a.cpu}), {a.repeat} timed passes after a cold one; tokenizers "
          f"{tokenizers.__version__}, Python {platform.python_version()}")
    print(f"{'tokenizer':<10} {'tokens':>10} {'infer MB/s':>11} {'(cold)':>8} "
          f"{'tokenizers MB/s':>16} {'(cold)':>8} {'speedup':>8}")
    for r in rows:
        print(f"{r['tokenizer']:<10} {r['tokens']:>10,} {r['infer_mb_s']:>11.2f} "
              f"{r['infer_cold_mb_s']:>8.2f} {r['hf_mb_s']:>16.2f} {r['hf_cold_mb_s']:>8.2f} "
              f"{r['speedup']:>7.2f}x")
    print(json.dumps({"bench": "tokenizer-encode", "text": source, "cpu": a.cpu,
                      "repeat": a.repeat, "tokenizers_version": tokenizers.__version__,
                      "rows": rows}))


if __name__ == "__main__":
    sys.exit(main())
