#!/usr/bin/env python3
"""Self-check of quantize_reference.py (needs no infer binaries): ONNX Runtime against numpy.

1. Small cases: one MatMul / Gemm (transB 0 and 1) quantized by quantize_model and run by ONNX
   Runtime must equal numpy's x @ dequantized(W).T; the fp8 activation subgraph
   (QuantizeLinear/DequantizeLinear with a per-row run-time scale) must equal
   fake_quant_fp8_rows bit for bit, round-half-even ties and subnormals included.
2. Models: each model quantized (int4 G=16, int4 G=32, fp8) and run on its in0.npy: ORT runs it,
   the logits differ from the unquantized golden by a small but clearly non-zero amount, and the
   float form (dequantized weights as plain initializers, no QDQ nodes) gives the same logits
   within 1e-5.

  selfcheck.py [MODEL.onnx ...]   (default: tiny-llama, tiny-gpt2, tiny-phi3, tiny-opt-ts, tiny-qwen2_moe)
"""
import os, sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quantize_reference as qr  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS = ["test/models/tiny-llama.onnx", "test/models/tiny-gpt2.onnx", "test/e2e/models/tiny-phi3.onnx",
                  "test/models/tiny-opt-ts.onnx", "test/models/tiny-qwen2_moe.onnx"]
failures = []


def check(ok, msg):
    print(f"{'ok  ' if ok else 'FAIL'} {msg}")
    if not ok:
        failures.append(msg)


def one_linear_model(op, B, x_shape, transB=0, opset=20):
    """x -> op(x, B) -> Relu -> MatMul(lm head) -> logits; the LM head must stay float."""
    K = x_shape[-1]
    N = B.shape[0] if transB else B.shape[1]
    rng = np.random.default_rng(7)
    head = rng.normal(size=(N, 5)).astype(np.float32)
    kw = {"transB": transB} if op == "Gemm" else {}
    nodes = [helper.make_node(op, ["x", "B"], ["h"], name="lin", **kw),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "head"], ["logits"], name="head")]
    out_shape = list(x_shape[:-1]) + [5]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, out_shape)],
                          initializer=[numpy_helper.from_array(B, "B"), numpy_helper.from_array(head, "head")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), head


def small_cases():
    rng = np.random.default_rng(0)
    N, K, G = 24, 64, 16
    W = rng.normal(0, 0.02, (N, K)).astype(np.float32)
    W[3, 16:32] = 0  # an all-zero group: scale 1
    W[5, :16] = np.array([7, 2.5, -3.5, 0.5, -0.5, 1.5, -7, 6.5] * 2, np.float32)  # scale 1, ties -> even
    W[6, :] = 0  # an all-zero row (fp8 scale 1)
    q, s = qr.quantize_int4(W, G)
    check(np.array_equal(q[5, :8], [7, 2, -4, 0, 0, 2, -7, 6]) and s[5, 0] == 1 and s[3, 1] == 1,
          "int4 numpy: rint ties to even, zero group -> scale 1")
    for scheme in ("int4", "fp8"):
        for op, transB in (("MatMul", 0), ("Gemm", 0), ("Gemm", 1)):
            B = W if transB else W.T.copy()
            x_shape = (3, K) if op == "Gemm" else (2, 3, K)
            model, head = one_linear_model(op, B, x_shape, transB)
            x = rng.normal(size=x_shape).astype(np.float32)
            model, summary, _ = qr.quantize_model(model, scheme, G if scheme == "int4" else None)
            got = qr.run_model(model, {"x": x})
            if scheme == "int4":
                deq = qr.dequantize_int4(q, s, G)
                xin = x
            else:
                q8, s8 = qr.quantize_fp8(W)
                deq = qr.dequantize_fp8(q8, s8)
                xin = qr.fake_quant_fp8_rows(x.reshape(-1, K)).reshape(x.shape)
            want = np.maximum(xin @ deq.T, 0) @ head
            n_dq = sum(n.op_type == "DequantizeLinear" for n in model.graph.node)
            err = float(np.abs(got - want).max()) / float(np.abs(want).max())
            check(err <= 1e-6 and n_dq == (1 if scheme == "int4" else 2) and "1 x LM head" in summary[-1],
                  f"{scheme} {op} transB={transB}: ORT QDQ vs numpy max abs error / max |numpy| {err:.3g}, "
                  f"{n_dq} DequantizeLinear, LM head left float")
    # The fp8 activation subgraph alone, bit for bit.
    rows = [rng.normal(size=K) * 10.0 ** e for e in range(-30, 31, 3)]
    rows.append(np.zeros(K))
    tie = np.zeros(K)  # amax 448 -> scale exactly 1: halfway values round to even
    tie[:8] = [448, 1.0625, 1.1875, -1.0625, 2.0 ** -10, 3 * 2.0 ** -10, 5 * 2.0 ** -10, 240 + 8]
    rows.append(tie)
    rows.append(np.r_[rng.normal(size=K - 1), 1e30])  # one huge outlier, the rest flush towards 0
    X = np.array(rows, np.float32)
    want = qr.fake_quant_fp8_rows(X)
    check(np.array_equal(want[-2, :8], np.array([448, 1.0, 1.25, -1.0, 0, 2.0 ** -8, 2.0 ** -8, 256], np.float32)),
          "fp8 numpy: e4m3fn round-half-even (normal and subnormal), zero row")
    g = helper.make_graph([], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, K])])
    new = qr.Namer(g)
    inits, consts, before = [], {}, []

    def const(name, arr):
        consts[name] = name
        inits.append(numpy_helper.from_array(arr, name))
        return name
    for form in ("qdq", "float"):
        before.clear(); inits.clear()
        out = qr.fake_quant_activation("x", K, form, 21, new, const, before)
        before.append(helper.make_node("Identity", [out], ["y"]))
        g2 = helper.make_graph(before, "g", g.input, g.output, initializer=inits)
        m = helper.make_model(g2, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        got = qr.run_model(m, {"x": X}, "y")
        check(np.array_equal(got.view(np.uint32), want.view(np.uint32)),
              f"fp8 activation ({form} form) in ORT == fake_quant_fp8_rows bit for bit on {X.shape[0]} rows")
    # K not divisible by G: a clear error naming the weight.
    model, _ = one_linear_model("MatMul", W.T.copy(), (2, K))
    try:
        qr.quantize_model(model, "int4", 48)
        check(False, "int4 G=48 on K=64 must be refused")
    except qr.QuantError as e:
        check("'B'" in str(e) and "48" in str(e), f"int4 G=48 on K=64 refused: {e}")


def model_cases(models):
    rows = []
    for path in models:
        full = path if os.path.isabs(path) else os.path.join(ROOT, path)
        base = full[:-len(".onnx")]
        ids, golden = np.load(base + ".in0.npy"), np.load(base + ".out0.npy")
        for scheme, G in (("int4", 16), ("int4", 32), ("fp8", None)):
            what = f"{os.path.basename(base)} {scheme}" + (f" G={G}" if G else "")
            try:
                m, summary, form = qr.quantize_model(onnx.load(full), scheme, G, "qdq")
                qdq = qr.run_model(m, {"input_ids": ids})
                mf, _, _ = qr.quantize_model(onnx.load(full), scheme, G, "float")
                flt = qr.run_model(mf, {"input_ids": ids})
            except Exception as e:  # noqa: BLE001
                check(False, f"{what}: {type(e).__name__}: {e}")
                continue
            qerr = float(np.abs(qdq - golden).max())
            rel = qerr / float(np.abs(golden).max())
            cross = float(np.abs(qdq - flt).max())
            check(form == "qdq", f"{what}: {summary[0]}")
            check(1e-3 < qerr and rel < 0.5,
                  f"{what}: ORT ran the QDQ model; max |quantized - golden| {qerr:.4g} ({rel:.1%} of max |golden|)")
            check(cross <= 1e-5, f"{what}: QDQ vs float-form (dequantized initializers) max abs {cross:.3g}")
            rows.append((what, summary[0].split(": ")[1], qerr, rel, cross))
    print("\nmodel / scheme | quantized | max |q - golden| | relative | max |qdq - float|")
    for r in rows:
        print(f"{r[0]} | {r[1]} | {r[2]:.4g} | {r[3]:.1%} | {r[4]:.3g}")


def main():
    small_cases()
    model_cases(sys.argv[1:] or DEFAULT_MODELS)
    print(f"\n{'FAIL' if failures else 'PASS'}: {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
