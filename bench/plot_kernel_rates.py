#!/usr/bin/env python3
"""Each kernel's achieved rate against the GPU's limits, before and after, as a roofline PNG.

Reads the logs a device run leaves (bench/device/tune-check.sh):
  * `infer-compile --tune` logs: one line per cuBLASLt GEMM shape and token bucket,
    `bf16 k4096 n4096 T128 nk bias0 residual1: 12.23 us (heuristic 15.51 us, 8 timed)`;
    before = the heuristic's first algorithm, after = the tuned record;
  * `kv_attention_test` logs: the bf16 paged decode attention timings, `timing bf16 decode
    64 seqs x context 1024, heads 32/8 x 128: 107.49 us, 2497.2 GB/s of K/V ... plain grid
    107.53 us, 2496.4 GB/s`; before = the plain (tokens, kv heads) grid, after = split-KV.
Each point is a launch at its arithmetic intensity (FLOPs / bytes it must move: a GEMM's
weights, inputs and outputs once; the attention's K/V once) and its achieved FLOP rate; the
lines are bandwidth x intensity and the FLOP peak (--hbm-tbs, --peak-tflops).

  plot_kernel_rates.py --tune-log A.log [--tune-log B.log] --kv-log kv.log --gpu "H100 80GB HBM3" \
      --hbm-tbs 3.35 --peak-tflops 790 -o chart.png
"""
import argparse
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GEMM = re.compile(r"^\s*(\w+) k(\d+) n(\d+) T(\d+) \w+ bias\d residual\d: ([\d.]+) us "
                  r"\(heuristic ([\d.]+) us")
DECODE = re.compile(r"timing bf16 decode\s+(\d+) seqs x context\s+(\d+), heads (\d+)/(\d+) x\s+(\d+):"
                    r"\s+([\d.]+) us,\s+([\d.]+) GB/s.*plain grid\s+([\d.]+) us")
BYTES = {"bf16": 2, "f16": 2, "f32": 4}


def rates(path, pattern, measure):
    """(intensity, before TFLOP/s, after TFLOP/s) of each line of `path` that `pattern`
    matches; `measure(match)` gives its FLOPs, bytes moved and before / after microseconds."""
    out = []
    for line in open(path):
        m = pattern.search(line)
        if m:
            flops, moved, before_us, after_us = measure(m)
            out.append((flops / moved, flops / before_us / 1e6, flops / after_us / 1e6))
    return out


def gemm(m):
    """A --tune line: before = the heuristic's first algorithm, after = the record."""
    dtype, k, n, t = m.group(1), *map(int, m.group(2, 3, 4))
    return (2.0 * t * k * n, BYTES.get(dtype, 2) * (k * n + t * k + t * n),
            float(m.group(6)), float(m.group(5)))


def decode(m):
    """A kv_attention_test decode line: before = the plain grid, after = split-KV."""
    seqs, context, heads, kv_heads, dim = map(int, m.group(1, 2, 3, 4, 5))
    flops = 4.0 * seqs * context * heads * dim  # q.k and p.v
    moved = 2.0 * 2 * seqs * context * kv_heads * dim  # K and V, bf16
    return flops, moved, float(m.group(8)), float(m.group(6))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tune-log", action="append", default=[], help="infer-compile --tune log")
    ap.add_argument("--kv-log", help="kv_attention_test log")
    ap.add_argument("--gpu", required=True, help="the GPU's name, for the title")
    ap.add_argument("--hbm-tbs", type=float, required=True, help="HBM bandwidth limit, TB/s")
    ap.add_argument("--peak-tflops", type=float, required=True, help="dense 16-bit FLOP limit")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    gemms = [p for path in a.tune_log for p in rates(path, GEMM, gemm)]
    decodes = rates(a.kv_log, DECODE, decode) if a.kv_log else []
    if not gemms and not decodes:
        raise SystemExit("plot_kernel_rates.py: no GEMM or decode-attention timings in the logs given")
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [p[0] for p in gemms + decodes]
    lo, hi = min(xs) / 2, max(xs) * 2
    ridge = a.peak_tflops / a.hbm_tbs
    ax.plot([lo, ridge, hi], [lo * a.hbm_tbs, a.peak_tflops, a.peak_tflops], "k-", lw=1,
            label=f"limit: {a.hbm_tbs} TB/s x intensity, {a.peak_tflops:g} TFLOP/s")
    for points, name, colour in ((gemms, "cuBLASLt GEMM", "tab:blue"),
                                 (decodes, "paged decode attention", "tab:red")):
        if not points:
            continue
        ax.scatter([p[0] for p in points], [p[1] for p in points], s=14, facecolors="none",
                   edgecolors=colour, label=f"{name}, before")
        ax.scatter([p[0] for p in points], [p[2] for p in points], s=14, color=colour,
                   label=f"{name}, after")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOPs per byte moved)")
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title(f"{a.gpu}: each launch against the limits\n"
                 "GEMM: heuristic's first (before) vs --tune's record (after); "
                 "attention: plain grid vs split-KV", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"plot_kernel_rates.py: {len(gemms)} GEMM and {len(decodes)} attention points -> {a.output}")


if __name__ == "__main__":
    main()
