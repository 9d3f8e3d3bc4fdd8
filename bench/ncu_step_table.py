#!/usr/bin/env python3
"""Per-kernel table of one step from an Nsight Compute CSV (bench/ncu-step.sh).

Reads `ncu --csv --page raw` output with the metrics gpu__time_duration.sum and
dram__bytes_read.sum, takes the kernels from the last launch of the step's
first kernel (by default the embedding: the last step of the run) to the end,
and prints, per kernel, the launches, the total and per-launch time, the DRAM
read rate, and the step total beside the DRAM bytes at 4.3 TB/s. Each kernel
ran alone under ncu (serialized, no graph), so the times include no overlap
and a little ramp-up: compare kernels with each other, not with a CUDA-graph
step time.

  bench/ncu_step_table.py NCU_CSV [--first-kernel infer_embedding]
"""
import argparse
import collections
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--first-kernel", default="infer_embedding",
                    help="a kernel name (substring) that starts every step")
    a = ap.parse_args()
    with open(a.csv, newline="") as f:
        rows = list(csv.reader(f))
    header_at = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if header_at is None:
        sys.exit(f"{a.csv}: no ncu --csv --page raw header (is it ncu's --log-file output?)")
    header = rows[header_at]
    try:
        name_col = header.index("Kernel Name")
        time_col = header.index("gpu__time_duration.sum")
        bytes_col = header.index("dram__bytes_read.sum")
    except ValueError as e:
        sys.exit(f"{a.csv}: missing column ({e}); profile with --metrics "
                 "gpu__time_duration.sum,dram__bytes_read.sum")
    units = rows[header_at + 1]
    if units[time_col] != "ns" or units[bytes_col] != "byte":
        sys.exit(f"{a.csv}: expected ns and byte units, got {units[time_col]} and {units[bytes_col]}")
    kernels = [r for r in rows[header_at + 2:] if len(r) > max(name_col, time_col, bytes_col)]
    starts = [i for i, r in enumerate(kernels) if a.first_kernel in r[name_col]]
    if not starts:
        sys.exit(f"{a.csv}: no kernel named like {a.first_kernel!r}")
    step = kernels[starts[-1]:]
    by_kernel = collections.OrderedDict()
    total_ns = total_bytes = 0.0
    for r in step:
        name = r[name_col].split("(")[0].replace("void ", "").strip()
        ns = float(r[time_col].replace(",", ""))
        read = float(r[bytes_col].replace(",", ""))
        entry = by_kernel.setdefault(name, [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += ns
        entry[2] += read
        total_ns += ns
        total_bytes += read
    print(f"| kernel | launches | us | us per launch | DRAM read GB/s |")
    print(f"|---|---|---|---|---|")
    for name, (count, ns, read) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {ns / 1e3:.1f} | {ns / count / 1e3:.2f} | "
              f"{read / ns if ns else 0:.0f} |")
    print(f"\n{len(step)} kernels, {total_ns / 1e3:.1f} us alone; DRAM read {total_bytes / 1e9:.3f} GB "
          f"-> {total_bytes / 4.3e12 * 1e6:.1f} us at 4.3 TB/s")


if __name__ == "__main__":
    main()
