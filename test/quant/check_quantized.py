#!/usr/bin/env python3
"""Quantized-model check: compiles MODEL.onnx with `--quantize SCHEME` (--target cpu, or cuda with
--device cuda), runs `infer-run forward` on an input and compares the logits with an independent
reference: the same quantization written as an ONNX QDQ model (quantize_reference.py, next to
this script) run by ONNX Runtime's CPU provider. PASS when max |ours - reference| <= --atol
(fp32), or max |ours - reference| / max |reference| <= --rtol (--dtype bf16 / fp16 on cuda: the
activations rounded to 16 bits, as test/gpu/check_gpu.py judges unquantized bf16 runs).

It also reports how far the reference lies from the unquantized logits (--golden, else ONNX
Runtime on the unquantized model): that quantization error must be much larger than our deviation
from the reference. When it exceeds 100 * atol, our deviation must also be at least 10x smaller
than it, so the check cannot pass with quantization silently off.

  check_quantized.py --infer-compile C --infer-run R --model M.onnx --input M.in0.npy
                     --scheme int4 --group-size 32 [--atol 1e-4] [--golden M.out0.npy]
                     [--input-name input_ids] [--compile-arg=...] [--device cuda --dtype bf16]
                     [--lm-head]
"""
import argparse, os, sys, tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_reference as qr  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from check_gpu import SKIP, gpu_present  # noqa: E402,F401  (--device cuda without a GPU: SKIP)


def max_abs(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b))) if b.size else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--scheme", required=True, choices=["int4", "fp8"])
    ap.add_argument("--group-size", type=int)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--rtol", type=float, default=3e-2, help="16-bit --dtype: max error relative to max |reference|")
    ap.add_argument("--golden", help="the unquantized model's logits on --input (default: ONNX Runtime's)")
    ap.add_argument("--input-name", default="input_ids")
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("--lm-head", action="store_true",
                    help="quantize the LM head too (infer-compile --quantize-lm-head; the reference likewise)")
    ap.add_argument("--rounding-flips", action="store_true",
                    help="fp8: an activation within an fp32 rounding of an E4M3 tie rounds either way "
                         "(ORT's sums and ours differ in their last bits), and a flipped row moves the "
                         "rows after it through attention; then PASS needs at least half of the token "
                         "rows within --atol, the mean deviation below 1/5 of the mean quantization "
                         "error and the same top token at 98%% of the positions")
    a = ap.parse_args()
    if a.scheme == "int4" and not a.group_size:
        ap.error("--scheme int4 needs --group-size")
    if a.scheme == "fp8" and a.group_size:
        ap.error("--group-size applies to int4 only")
    if a.dtype != "fp32" and a.device != "cuda":
        ap.error("--dtype bf16 / fp16 runs on --device cuda")
    if a.device == "cuda" and not gpu_present():
        print("SKIP: no usable NVIDIA GPU")
        return SKIP
    name = f"{os.path.basename(a.model)} on {os.path.basename(a.input)}"
    what = (f"{a.scheme}" + (f" G={a.group_size}" if a.group_size else "") +
            (" with the LM head" if a.lm_head else "") + f", {a.dtype}")
    ids = np.load(a.input)

    # 1. The reference: QDQ model run by ONNX Runtime.
    try:
        model = onnx.load(a.model)
        model, summary, form = qr.quantize_model(model, a.scheme, a.group_size, lm_head=a.lm_head)
        ref = qr.run_model(model, {a.input_name: ids})
    except qr.QuantError as e:
        print(f"FAIL: quantize_reference: {e}")
        return 1
    except Exception as e:  # ONNX Runtime refusing the reference model
        print(f"FAIL: ONNX Runtime on the quantized reference: {type(e).__name__}: {e}")
        return 1
    print(f"reference: {summary[0]}; {summary[1].rstrip(':')}")

    # 2. Ours.
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "q.infer")
        cmd = [a.infer_compile, a.model, "-o", artifact, "--target", a.device, "--dtype", a.dtype,
               "--quantize", a.scheme]
        if a.scheme == "int4":
            cmd += ["--group-size", str(a.group_size)]
        if a.lm_head:
            cmd += ["--quantize-lm-head"]
        qr.run_tool(cmd + a.compile_arg)
        out = os.path.join(tmp, "out.npy")
        qr.run_tool([a.infer_run, artifact, "forward", "--input", f"{a.input_name}={a.input}",
                     "--output", f"logits={out}", "--device", a.device])
        got = np.load(out).astype(np.float32)

    # 3. Compare.
    if got.shape != ref.shape:
        print(f"FAIL: {name} ({what}): logits shape {got.shape} != reference {ref.shape}")
        return 1
    if a.golden:
        unq, unq_what = np.load(a.golden), "golden"
    else:
        unq, unq_what = qr.run_model(a.model, {a.input_name: ids}), "ORT unquantized"
    if unq.shape != ref.shape:
        print(f"FAIL: {name}: {unq_what} shape {unq.shape} != reference {ref.shape}")
        return 1
    if a.dtype != "fp32":
        err = max_abs(got, ref) / max(float(np.max(np.abs(ref))), 1e-30)
        top1 = float((got.argmax(-1) == ref.argmax(-1)).mean())
        ok = err <= a.rtol and bool(np.isfinite(got).all())
        print(f"{'PASS' if ok else 'FAIL'}: {name} ({what}, infer-run --device {a.device} vs ORT QDQ "
              f"reference): max relative error {err:.3g} (tolerance {a.rtol:g}); quantization error "
              f"(reference vs {unq_what}) {max_abs(ref, unq) / float(np.max(np.abs(unq))):.3g} relative, "
              f"top token agreement {top1:.3f}, logits {tuple(got.shape)}")
        return 0 if ok else 1
    qerr = max_abs(ref, unq)
    ours_vs_unq = max_abs(got, unq)
    diff = np.abs(got.astype(np.float64) - ref)
    row_dev = diff.reshape(-1, got.shape[-1]).max(-1)
    flipped = row_dev > a.atol
    dev = float(row_dev[~flipped].max()) if (~flipped).any() else 0.0
    ok, why = True, ""
    if flipped.any() and not a.rounding_flips:
        ok, why = False, (f"; {int(flipped.sum())} of {flipped.size} token rows deviate from the "
                          f"reference by more than the tolerance (max {row_dev.max():.3g})")
    elif flipped.any():
        mean_ratio = diff.mean() / max(np.abs(ref.astype(np.float64) - unq).mean(), 1e-30)
        top1 = float((got.argmax(-1) == ref.argmax(-1)).mean())
        stats = (f"{int(flipped.sum())} of {flipped.size} rows past the tolerance after E4M3 rounding "
                 f"flips (max {row_dev.max():.3g}), mean deviation {mean_ratio:.3f} of the mean "
                 f"quantization error, top token agreement {top1:.3f}")
        ok = flipped.mean() <= 0.5 and mean_ratio <= 0.2 and top1 >= 0.98
        why = f"; {stats}" + ("" if ok else ": beyond what rounding flips explain")
    if ok and qerr > 100 * a.atol and not dev * 10 <= qerr:
        ok, why = False, "; deviation from the reference not 10x below the quantization error"
    note = ""
    if qerr <= 100 * a.atol:
        note = f" (quantization error <= 100*atol: this input does not show whether quantization is on)"
    print(f"{'PASS' if ok else 'FAIL'}: {name} ({what}, infer-run --device {a.device} vs ORT QDQ reference): "
          f"max abs error {dev:.3g} (tolerance {a.atol:g}); quantization error (reference vs {unq_what}) "
          f"{qerr:.3g}, ours vs {unq_what} {ours_vs_unq:.3g}, logits {tuple(got.shape)}{why}{note}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
