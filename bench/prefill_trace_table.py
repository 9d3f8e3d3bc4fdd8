#!/usr/bin/env python3
"""The replayed prefill graph's kernels from a kernel trace (bench/kernel-trace.sh).

Reads the CSV that bench/kernel_trace/KernelTrace.cpp writes, takes every
CUDA graph that runs a paged prefill attention (`infer_kv_prefill_attention`:
a prefill step's graph, captured at its shape's second step and replayed
after), takes each replay by its graph launch's correlation id, and prints
per replay the span (first start to last end) and, as medians over the
replays, each kernel's summed duration. Kernels not named infer_* (the
cuBLASLt GEMMs) and infer_gemm_small are GEMMs, labelled in launch order as a
Llama layer's four: qkv, o, gate/up, down (session 40: cuBLASLt's choices
inside the graph are not the times its tuner measures back to back).

    bench/prefill_trace_table.py TRACE.csv [TRACE.csv ...]
"""
import argparse
import collections
import csv
import statistics

from kernel_trace_table import COLUMNS, short_name

LAYER_GEMMS = ["qkv", "o", "gate/up", "down"]


def prefill_replays(path):
    """Each replay of a prefill graph (its kernels share the graph launch's
    correlation id): its kernels in start order."""
    replays = collections.defaultdict(list)
    with open(path) as trace:
        reader = csv.DictReader(trace)
        if not COLUMNS <= set(reader.fieldnames or []):
            raise SystemExit(f"prefill-trace: {path} has no header with {','.join(sorted(COLUMNS))}")
        for row in reader:
            if row["graph_id"] != "0" and not row["name"].startswith("memcpy"):
                replays[row["correlation_id"]].append(row)
    prefills = [kernels for kernels in replays.values()
                if any("kv_prefill_attention" in k["name"] for k in kernels)]
    for kernels in prefills:
        kernels.sort(key=lambda k: int(k["start_ns"]))
    return sorted(prefills, key=lambda kernels: int(kernels[0]["start_ns"]))


def label(name, gemm_index):
    """A GEMM's layer role (cuBLASLt's kernels are not ours; infer_gemm_small
    is), else the kernel's short name without template arguments."""
    if not name.removeprefix("void ").startswith("infer::") or "infer_gemm_small" in name:
        return LAYER_GEMMS[gemm_index % len(LAYER_GEMMS)] + " GEMM", True
    return short_name(name).split("<")[0], False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    for path in args.traces:
        replays = prefill_replays(path)
        if not replays:
            print(f"{path}: no replayed prefill graph")
            continue
        spans, durations, counts = [], collections.defaultdict(list), collections.Counter()
        for replay in replays:
            start = int(replay[0]["start_ns"])
            spans.append((max(int(k["end_ns"]) for k in replay) - start) / 1e3)
            summed, gemms = collections.Counter(), 0
            for kernel in replay:
                name, is_gemm = label(kernel["name"], gemms)
                gemms += is_gemm
                summed[name] += (int(kernel["end_ns"]) - int(kernel["start_ns"])) / 1e3
                counts[name] += 1
            for name, us in summed.items():
                durations[name].append(us)
        print(f"{path}: {len(replays)} replays, span median {statistics.median(spans):.1f} us "
              f"({', '.join(f'{s:.1f}' for s in spans)})")
        for name in sorted(durations, key=lambda n: -statistics.median(durations[n])):
            us = statistics.median(durations[name])
            per = counts[name] / len(replays)
            print(f"  {name:36s} {us:8.1f} us  ({per:g} launches, {us / per:.2f} us each)")


if __name__ == "__main__":
    main()
