#!/usr/bin/env python3
"""Checks `infer-compile --quantize int4 --method awq`: the scales AWQ chose (read from
`--emit=optimized`: each graph.quantize_weight's input_scale constant and the ONNX initializers
its weight is packed from) applied by an independent reference, a QDQ model of W[:, k] * f[k]
quantized to int4 with its MatMul's input divided by f (quantize_reference.py) run by ONNX
Runtime (with the groups clamped to the clip ratios AWQ chose, `clip`), against `infer-run forward` on the AWQ artifact (--device cpu, or cuda compiled for it;
1e-4, cuda 1e-3). Also requires that
AWQ scaled some linear and lowered the --calibration report's mean KL below RTN's.

  check_awq.py --infer-compile C --infer-run R --model M.onnx --input IN.npy --group-size G
               --calibration FILE [--device cuda]
"""
import argparse, os, re, subprocess, sys, tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_reference as qr  # noqa: E402
from check_quantized import SKIP, gpu_present  # noqa: E402

KL = re.compile(r"mean KL ([0-9.e+-]+) nats")


def constant(m):
    """A graph.constant's f32 values from its dense<[...]> or hex dense<"0x..."> match."""
    if m.group("list") is not None:
        return np.array([float(v) for v in m.group("list").replace("[", "").replace("]", "").split(",")],
                        np.float32)
    return np.frombuffer(bytes.fromhex(m.group("hex")), "<f4").copy()  # MLIR's hex form


CONSTANT = re.compile(r'\s*(%\S+) = graph\.constant dense<(?:\[(?P<list>[^>]+)\]|"0x(?P<hex>[0-9A-F]+)")> '
                      r": tensor<(?P<shape>[0-9x]+)xf32>")


def awq_scales(ir, model, group_size):
    """(ONNX initializer name -> f, name -> clip ratios [N, K / group]) from the optimized IR;
    a packed weight's clip rows are split among its initializers by their N."""
    names, packs, consts, scales, clips = {}, {}, {}, {}, {}
    todo, _ = qr.plan(model, "int4", group_size)
    dims = {i.name: list(i.dims) for i in model.graph.initializer}
    rows_of = {b: dims[b][1 - k_axis] for _, b, k_axis in todo}  # N of each quantized weight
    for line in ir.splitlines():
        if m := re.match(r"\s*(%\S+) = graph\.weight <([^>]+)>", line):
            names[m[1]] = [m[2].strip('"')]
        elif m := re.match(r"\s*(%\S+) = graph\.pack_weights ([^{]+) \{", line):
            packs[m[1]] = [v.strip() for v in m[2].split(",")]
        elif m := CONSTANT.match(line):
            consts[m[1]] = constant(m).reshape([int(d) for d in m.group("shape").split("x")])
        elif m := re.search(r"= graph\.quantize_weight (%\S+)(?: input_scale\((%\S+)\))?"
                            r"(?: clip\((%\S+)\))?", line):
            weights = sum((names[v] for v in packs.get(m[1], [m[1]])), [])
            row = 0
            for w in weights:
                if m[2]:
                    scales[w] = consts[m[2]]
                if m[3]:
                    clips[w] = consts[m[3]][row:row + rows_of[w]]
                    row += rows_of[w]
    return scales, clips


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag in ("--infer-compile", "--infer-run", "--model", "--input", "--calibration"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--group-size", type=int, required=True)
    ap.add_argument("--atol", type=float)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    a = ap.parse_args()
    if a.atol is None:
        a.atol = 1e-4 if a.device == "cpu" else 1e-3
    if a.device == "cuda" and not gpu_present():
        print("SKIP: no usable NVIDIA GPU")
        return SKIP
    name = f"{os.path.basename(a.model)} int4 G={a.group_size} awq"
    base = [a.infer_compile, a.model, "--quantize", "int4", "--group-size", str(a.group_size),
            "--calibration", a.calibration]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for method in ("rtn", "awq"):
            proc = subprocess.run(base + ["--method", method, "--emit=optimized"], capture_output=True, text=True)
            kl = KL.search(proc.stderr)
            if proc.returncode != 0 or not kl:
                print(f"FAIL: {name}: --method {method} --emit=optimized exited {proc.returncode}: {proc.stderr.strip()}")
                return 1
            runs[method] = (proc.stdout, float(kl[1]))
        import onnx
        scales, clips = awq_scales(runs["awq"][0], onnx.load(a.model), a.group_size)
        if not scales and not clips:
            print(f"FAIL: {name}: AWQ scaled or clipped no linear")
            return 1
        if not runs["awq"][1] < runs["rtn"][1]:
            print(f"FAIL: {name}: AWQ's mean KL {runs['awq'][1]:.4g} is not below RTN's {runs['rtn'][1]:.4g}")
            return 1
        out = os.path.join(tmp, "q.infer")
        cmd = base + ["--method", "awq", "--target", a.device, "-o", out]
        qr.run_tool(cmd)
        logits = os.path.join(tmp, "out.npy")
        cmd = [a.infer_run, out, "forward", "--input", f"input_ids={a.input}", "--output",
               f"logits={logits}", "--device", a.device]
        qr.run_tool(cmd)
        model, _, _ = qr.quantize_model(onnx.load(a.model), "int4", a.group_size, input_scales=scales,
                                        clips=clips)
        ref = qr.run_model(model, {"input_ids": np.load(a.input)})
        dev = float(np.abs(np.load(logits).astype(np.float64) - ref).max())
    ok = dev <= a.atol
    print(f"{'PASS' if ok else 'FAIL'}: {name}: {len(scales)} weights AWQ-scaled, {len(clips)} clipped; infer-run --device {a.device} vs ORT on "
          f"the same scales: max abs error {dev:.3g} (tolerance {a.atol:g}); calibration mean KL "
          f"{runs['awq'][1]:.4g} (RTN {runs['rtn'][1]:.4g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
