#!/usr/bin/env python3
"""Draws the throughput-latency curves of bench/serve-curve.sh (matplotlib).

  plot_serve_curve.py CURVE.jsonl [CURVE.jsonl ...] -o curves.png

One column a model (a curve.jsonl's artifact), rows TPOT p50 and TTFT p50 against output tok/s,
one line for HTTP (`infer-run serve` + serve_load.py) and one in-process (`infer-run bench
--rate`), each point labelled with its request rate. Also prints the HTTP overhead at
saturation (the `inf` points): 1 - HTTP output tok/s / in-process output tok/s.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("curves", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    models = {}
    for path in a.curves:
        with open(path) as f:
            for line in f:
                point = json.loads(line)
                if "output_tok_s" in point:
                    models.setdefault(point["artifact"], []).append(point)
    fig, axes = plt.subplots(2, len(models), figsize=(6.5 * len(models), 8), squeeze=False)
    for column, (name, points) in enumerate(sorted(models.items())):
        for mode, style, label in (("http", "o-", "HTTP (serve + serve_load.py)"),
                                   ("inproc", "s--", "in-process (bench --rate)")):
            ps = [p for p in points if p["mode"] == mode]
            x = [p["output_tok_s"] for p in ps]
            for row, metric in enumerate(("tpot_ms_p50", "ttft_ms_p50")):
                ax = axes[row][column]
                ax.plot(x, [p[metric] for p in ps], style, label=label)
                for p in ps:
                    ax.annotate(p["rate"], (p["output_tok_s"], p[metric]), fontsize=7,
                                textcoords="offset points", xytext=(3, 3))
        saturated = {p["mode"]: p["output_tok_s"] for p in points if p["rate"] == "inf"}
        if {"http", "inproc"} <= saturated.keys():
            overhead = 1 - saturated["http"] / saturated["inproc"]
            print(f"{name}: at saturation HTTP {saturated['http']:.0f} output tok/s, in-process "
                  f"{saturated['inproc']:.0f}: HTTP overhead {100 * overhead:.1f}%")
        p0 = points[0]
        axes[0][column].set_title(f"{name}: {p0['input_len']} in / {p0['output_len']} out, "
                                  f"max {p0['max_sequences']} sequences")
        axes[0][column].set_ylabel("TPOT p50 (ms)")
        axes[1][column].set_ylabel("TTFT p50 (ms)")
        axes[1][column].set_yscale("log")
        for row in range(2):
            axes[row][column].set_xlabel("output tok/s (labels: requests/s)")
            axes[row][column].grid(alpha=0.3)
            axes[row][column].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
