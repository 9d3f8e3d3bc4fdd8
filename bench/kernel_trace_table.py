#!/usr/bin/env python3
"""The decode step's timeline from a kernel trace (bench/kernel-trace.sh).

Reads the CSV that bench/kernel_trace/KernelTrace.cpp writes, takes the CUDA
graph replays of the most common kernel sequence (the decode step; from every
graph that runs it, in time order), and prints, as
medians over those replays: the step's span (first kernel start to last
kernel end) and the gap before the next replay; per kernel name, how often it
runs in a step, its summed duration and its summed *critical increment*
(end - the latest end of any kernel before it in the step: the time the step
got longer because of it; under programmatic launch a kernel starts while
its predecessor runs, so durations overlap and only increments add up to the
span); the copies outside graphs that run in the gaps between replays (the
step's upload, the sampled tokens' copy back, a step ahead's token feed);
and the kernels of one layer in the middle of the step, in order.

    bench/kernel_trace_table.py TRACE.csv [--skip N]
"""
import argparse
import collections
import csv
import re
import statistics

COLUMNS = {"start_ns", "end_ns", "graph_id", "correlation_id", "name"}


def short_name(name):
    name = re.sub(r"^void ", "", name)
    name = name.replace("infer::kernels::", "").replace("__nv_bfloat16", "bf16")
    return re.sub(r"\(.*\)$", "", name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--skip", type=int, default=3, help="first replays to leave out")
    args = parser.parse_args()
    replays = collections.defaultdict(list)
    graph_of = {}
    copies = []  # (start, end, name) of copies outside graphs
    with open(args.trace) as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not COLUMNS <= set(reader.fieldnames):
            raise SystemExit(f"kernel-trace: {args.trace} has no header with "
                             + ",".join(sorted(COLUMNS)))
        for row in reader:
            if row["graph_id"] == "0":
                if row["name"].startswith("memcpy"):
                    copies.append((int(row["start_ns"]), int(row["end_ns"]), row["name"]))
                continue
            key = int(row["correlation_id"])
            replays[key].append((int(row["start_ns"]), int(row["end_ns"]), short_name(row["name"])))
            graph_of[key] = row["graph_id"]
    if not replays:
        raise SystemExit("kernel-trace: no kernel ran inside a CUDA graph")
    # The decode step: the most common kernel sequence, from any graph (the
    # runtime captures one graph per staging area, and they alternate).
    signature = {k: tuple(name for _, _, name in sorted(v)) for k, v in replays.items()}
    common = collections.Counter(signature.values()).most_common(1)[0][0]
    keys = sorted((k for k in replays if signature[k] == common), key=lambda k: min(replays[k]))
    graphs = sorted({graph_of[k] for k in keys}, key=int)
    graph = ", ".join(graphs)
    steps = [sorted(replays[k]) for k in keys]
    steps = steps[args.skip:] if len(steps) > args.skip + 1 else steps
    sizes = collections.Counter(len(s) for s in steps)
    size = sizes.most_common(1)[0][0]
    steps = [s for s in steps if len(s) == size]
    spans, gaps = [], []
    between = collections.defaultdict(list)  # copies in the gaps, by position
    for a, b in zip(steps, steps[1:]):
        end = max(e for _, e, _ in a)
        gaps.append((b[0][0] - end) / 1e3)
        inside = sorted(c for c in copies if end <= c[0] < b[0][0])
        for i, (start, stop, name) in enumerate(inside):
            between[(i, name)].append(((start - end) / 1e3, (stop - start) / 1e3))
    per_position = [[] for _ in range(size)]
    for s in steps:
        t0 = s[0][0]
        spans.append((max(e for _, e, _ in s) - t0) / 1e3)
        latest = t0
        for i, (start, end, name) in enumerate(s):
            per_position[i].append(((start - t0) / 1e3, (end - t0) / 1e3, (end - start) / 1e3,
                                    max(end - latest, 0) / 1e3, name))
            latest = max(latest, end)
    med = lambda xs: statistics.median(xs)
    print(f"graph{'s' if len(graphs) > 1 else ''} {graph}: {len(steps)} replays of {size} kernels; step span p50 "
          f"{med(spans):.1f} us, gap to the next replay p50 {med(gaps) if gaps else 0:.1f} us")
    if between:
        print(f"\ncopies between replays (medians over the gaps that have them; us after the "
              f"last kernel's end):\n")
        for (i, name), times in sorted(between.items()):
            print(f"  {name:24s} in {len(times):4d} gaps: starts {med([t[0] for t in times]):6.2f}, "
                  f"takes {med([t[1] for t in times]):5.2f}")
    by_name = collections.OrderedDict()
    for position in per_position:
        name = position[0][4]
        entry = by_name.setdefault(name, [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += med([p[2] for p in position])
        entry[2] += med([p[3] for p in position])
    print("\n| kernel | per step | duration us (sum) | critical increment us (sum) |")
    print("|---|---|---|---|")
    for name, (n, duration, increment) in sorted(by_name.items(), key=lambda kv: -kv[1][2]):
        print(f"| {name} | {n} | {duration:.1f} | {increment:.1f} |")
    # One layer in the middle: from the GEMV before a paged attention in the
    # middle of the step to the one before the next attention.
    names = [p[0][4] for p in per_position]
    attentions = [i for i, n in enumerate(names) if "kv_" in n]
    if len(attentions) >= 2:
        k = len(attentions) // 2 - 1
        middle, period = max(attentions[k] - 1, 0), attentions[k + 1] - attentions[k]
    else:
        middle, period = size // 2, min(size - size // 2, 8)
    print(f"\nkernels {middle} .. {middle + period - 1} (one layer), medians:\n")
    print("| # | kernel | start us | end us | duration us | critical increment us |")
    print("|---|---|---|---|---|---|")
    for i in range(middle, min(middle + period, size)):
        p = per_position[i]
        print(f"| {i} | {p[0][4]} | {med([x[0] for x in p]):.2f} | {med([x[1] for x in p]):.2f} | "
              f"{med([x[2] for x in p]):.2f} | {med([x[3] for x in p]):.2f} |")
    print("\nfirst and last kernels of the step:\n")
    for i in list(range(0, min(4, size))) + list(range(max(size - 5, 4), size)):
        p = per_position[i]
        print(f"  {i:4d} {p[0][4]:60s} start {med([x[0] for x in p]):8.2f} end "
              f"{med([x[1] for x in p]):8.2f} inc {med([x[3] for x in p]):6.2f}")


if __name__ == "__main__":
    main()
