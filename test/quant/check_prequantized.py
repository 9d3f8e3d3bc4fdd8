#!/usr/bin/env python3
"""Models that bring their weights quantized: writes a pre-quantized copy of MODEL.onnx in one
FORM, compiles it with infer-compile (no --quantize: the weights are used as the model stores
them), runs `infer-run forward` and compares the logits with ONNX Runtime's CPU provider on the
same pre-quantized model (graph optimizations off).

FORM (each MatMul whose B is a 2-D float initializer, the LM head included):
  ort-nbits4        ONNX Runtime's MatMulNBitsQuantizer: com.microsoft.MatMulNBits, 4 bits,
                    asymmetric (uint4 with zero points), blocks of --block-size along k
  ort-nbits4-sym    the same, symmetric (no zero points: the default 8)
  ort-nbits8        the same with 8 bits
  ort-qdq-uint4     MatMulNBitsQuantizer's QDQ format: DequantizeLinear of uint4, zero points,
                    axis 0, block_size
  qdq-int4          quantize_reference.py's int4 (signed, no zero points, blocked along k)
  qdq-uint8-channel onnx helpers: uint8 per output channel (axis 1) with zero points
  qdq-int8-tensor   onnx helpers: int8, one scale for the whole weight
  qdq-fp8-channel   onnx helpers: float8e4m3fn per output channel, weight only

On the cpu, `infer-compile --reference-run` (the reference interpreter) must match ORT within
--atol too, and `--verify-numerics` (every optimization stage on the interpreter) must pass. PASS when max |ours - ORT| <= --atol (fp32) or <= --rtol of max |ORT| (--dtype bf16 on cuda),
and, in fp32, ORT's logits lie at least 10x further from the unquantized model's than ours from
ORT's (so the check cannot pass with the quantized weights silently replaced by float ones).

  check_prequantized.py --infer-compile C --infer-run R --model M.onnx --input M.in0.npy
                        --form ort-nbits4 [--block-size 16] [--device cuda --dtype bf16]
"""
import argparse, logging, os, sys, tempfile

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_reference as qr  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from check_gpu import SKIP, gpu_present  # noqa: E402

FORMS = ["ort-nbits4", "ort-nbits4-sym", "ort-nbits8", "ort-qdq-uint4", "qdq-int4",
         "qdq-uint8-channel", "qdq-int8-tensor", "qdq-fp8-channel"]


def ort_quantize(model, form, block):
    logging.disable(logging.WARNING)  # the quantizer logs every node
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    q = MatMulNBitsQuantizer(model, bits=8 if form == "ort-nbits8" else 4, block_size=block,
                             is_symmetric=form == "ort-nbits4-sym",
                             quant_format=QuantFormat.QDQ if form == "ort-qdq-uint4" else QuantFormat.QOperator)
    q.process()
    return q.model.model


def helper_quantize(model, form):
    """Replaces each MatMul's 2-D float32 initializer B [K, N] by DequantizeLinear(q, s[, zp])."""
    qr.set_default_opset(model, 21)
    model.ir_version = max(model.ir_version, 10)
    inits = {i.name: i for i in model.graph.initializer}
    count = 0
    for node in list(model.graph.node):
        if node.op_type != "MatMul" or node.input[1] not in inits:
            continue
        init = inits[node.input[1]]
        W = numpy_helper.to_array(init)
        if W.ndim != 2 or W.dtype != np.float32:
            continue
        name = init.name
        if form == "qdq-uint8-channel":
            lo, hi = np.minimum(W.min(0), 0), np.maximum(W.max(0), 0)
            s = ((hi - lo) / 255).astype(np.float32)
            s[s == 0] = 1
            zp = np.clip(np.rint(-lo / s), 0, 255).astype(np.uint8)
            q = np.clip(np.rint(W / s) + zp, 0, 255).astype(np.uint8)
            tensors, attrs = [q, s, zp], {"axis": 1}
        elif form == "qdq-int8-tensor":
            s = np.float32(np.abs(W).max() / 127) or np.float32(1)
            q = np.clip(np.rint(W / s), -128, 127).astype(np.int8)
            tensors, attrs = [q, np.array(s, np.float32)], {}
        else:  # qdq-fp8-channel
            s = (np.abs(W).max(0) / 448).astype(np.float32)
            s[s == 0] = 1
            q = np.clip(W / s, -448, 448).astype(ml_dtypes.float8_e4m3fn)
            tensors, attrs = [q, s], {"axis": 1}
        names = [f"{name}_pq", f"{name}_pq_scale", f"{name}_pq_zero"][:len(tensors)]
        for n, t in zip(names, tensors):
            if t.dtype == ml_dtypes.float8_e4m3fn:
                proto = helper.make_tensor(n, TensorProto.FLOAT8E4M3FN, t.shape,
                                           t.view(np.uint8).tobytes(), raw=True)
            else:
                proto = numpy_helper.from_array(t, n)
            model.graph.initializer.append(proto)
        out = f"{name}_pq_dq"
        model.graph.node.insert(list(model.graph.node).index(node),
                                helper.make_node("DequantizeLinear", names, [out], **attrs))
        node.input[1] = out
        count += 1
    if not count:
        raise SystemExit("FAIL: no MatMul with a 2-D float32 initializer to quantize")
    return model


def max_abs(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--form", required=True, choices=FORMS)
    ap.add_argument("--block-size", type=int, default=16)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--rtol", type=float, default=3e-2)
    ap.add_argument("--input-name", default="input_ids")
    a = ap.parse_args()
    if a.dtype != "fp32" and a.device != "cuda":
        ap.error("--dtype bf16 runs on --device cuda")
    if a.device == "cuda" and not gpu_present():
        print("SKIP: no usable NVIDIA GPU")
        return SKIP
    ids = np.load(a.input)
    model = onnx.load(a.model)
    if a.form == "qdq-int4":
        model, _, form = qr.quantize_model(model, "int4", a.block_size)
        if form != "qdq":
            print(f"FAIL: quantize_reference wrote the {form} form, not QDQ")
            return 1
    elif a.form.startswith("ort-"):
        model = ort_quantize(model, a.form, a.block_size)
    else:
        model = helper_quantize(model, a.form)
    ops = sorted({n.op_type for n in model.graph.node if n.op_type in ("MatMulNBits", "DequantizeLinear")})
    ref = qr.run_model(model, {a.input_name: ids})
    unq = qr.run_model(a.model, {a.input_name: ids})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pq.onnx")
        onnx.save(model, path)
        artifact = os.path.join(tmp, "pq.infer")
        qr.run_tool([a.infer_compile, path, "-o", artifact, "--target", a.device, "--dtype", a.dtype])
        # The step program computes only the sampled rows' logits (a gather_rows before the LM
        # head), a quantized LM head too: on the GPU that is what samples on the device.
        info = qr.run_tool([a.infer_run, artifact, "info"]).stdout
        step = info.split("step program:", 1)[-1]
        if "step program:" not in info or "gather_rows" not in step:
            print("FAIL: the step program computes every row's logits (no gather_rows)")
            return 1
        out = os.path.join(tmp, "out.npy")
        qr.run_tool([a.infer_run, artifact, "forward", "--input", f"{a.input_name}={a.input}",
                     "--output", f"logits={out}", "--device", a.device])
        got = np.load(out).astype(np.float32)
        if a.device == "cpu":
            # The reference interpreter on every optimization stage (graph.dequantize before
            # RaisePrequantized, graph.quantized_linear after), against ORT too.
            interp = os.path.join(tmp, "interp.npy")
            for cmd in ([a.infer_compile, path, "--reference-run", "--input", f"{a.input_name}={a.input}",
                         "--output", f"logits={interp}"],
                        [a.infer_compile, path, "--verify-numerics", "--input", f"{a.input_name}={a.input}"]):
                qr.run_tool(cmd)
            if (err := max_abs(np.load(interp), ref)) > a.atol:
                print(f"FAIL: the reference interpreter's logits lie {err:.3g} from ORT's")
                return 1
    name = f"{os.path.basename(a.model)} {a.form} ({'/'.join(ops)}), {a.device} {a.dtype}"
    if got.shape != ref.shape:
        print(f"FAIL: {name}: logits {got.shape} != ORT's {ref.shape}")
        return 1
    dev, qerr = max_abs(got, ref), max_abs(ref, unq)
    scale = max(float(np.abs(ref).max()), 1e-30)
    if a.dtype == "fp32":
        ok, limit = dev <= a.atol, f"{dev:.3g} (tolerance {a.atol:g})"
    else:
        ok, limit = dev / scale <= a.rtol, f"{dev / scale:.3g} of max |ORT| (tolerance {a.rtol:g})"
    # (bf16 runs differ from ORT's f32 by bf16's rounding; the fp32 runs show quantization is on.)
    visible = a.dtype != "fp32" or qerr >= 10 * dev
    ok = ok and visible and bool(np.isfinite(got).all())
    print(f"{'PASS' if ok else 'FAIL'}: {name}: max |infer - ORT| {limit}; ORT vs the unquantized "
          f"model {qerr:.3g}{'' if visible else ' (not 10x our deviation: is quantization on?)'}, "
          f"top token agreement {float((got.argmax(-1) == ref.argmax(-1)).mean()):.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
