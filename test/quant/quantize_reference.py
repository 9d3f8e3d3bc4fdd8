#!/usr/bin/env python3
"""Independent reference for infer-compile's weight quantization (`--quantize int4 --group-size G`,
`--quantize fp8`): writes a copy of MODEL.onnx whose linear layers are quantized as ONNX QDQ
(opset 21 DequantizeLinear / QuantizeLinear), run by ONNX Runtime's CPU provider.

  quantize_reference.py MODEL.onnx --scheme int4 --group-size G --out OUT.onnx
  quantize_reference.py MODEL.onnx --scheme fp8 [--out OUT.onnx] --run IN.npy --output LOGITS.npy
                        [--input-name input_ids] [--form qdq|float]

Quantized: every MatMul whose B is a 2-D float32 initializer and every Gemm whose B is one
(transB respected), except the LM head (a MatMul/Gemm from which the graph's logits output is
reached without passing through another MatMul/Gemm) unless --lm-head is given. 3-D initializers (MoE experts), B computed
at run time, and B reaching the node through Identity/Transpose/Constant are left alone; a summary
says what was quantized and what was left and why. The weight is viewed as W[N, K] (n = output
channel, k = the reduction axis).

int4 (weight only), per row n and group of G consecutive k:
  scale = float32(max|W[n, group]|) / float32(7)  (0 -> 1);  q = clip(rint(W / scale), -8, 7)
  B -> DequantizeLinear(q as INT4 in B's layout, scales, axis=<k axis of B>, block_size=G)
fp8 (W8A8, float8 e4m3fn, round to nearest even, saturating), per output channel n:
  scale = max_k |W[n, :]| / 448  (0 -> 1);  q = float8_e4m3fn(clip(W / scale, -448, 448))
  B -> DequantizeLinear(q, scales[N], axis=<n axis of B>)
  A (any rank, last dim K) -> x2d = Reshape(A, [-1, K]); s = ReduceMax(Abs(x2d), axes=[1]) / 448,
  Where(s == 0, 1, s); DequantizeLinear(QuantizeLinear(x2d, s, axis=0, saturate=1,
  output_dtype=FLOAT8E4M3FN), s, axis=0) reshaped back to Shape(A).

--form float (automatic fallback when bumping the opset to 21 would break the model's other
nodes) writes the dequantized float32 weights as plain initializers instead (and for fp8 the
activation fake-quantization as Div/Cast(saturate)/Cast/Mul); it computes the same numbers.

ONNX Runtime runs with graph optimizations disabled: at ORT_ENABLE_ALL its CPU provider fuses a
blocked int4 DequantizeLinear+MatMul into MatMulNBits, which (at its default accuracy level)
quantizes the activations to int8 as well and moves the logits by ~1e-3.
"""
import argparse, collections, os, sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FP8_MAX = np.float32(448.0)
INT4_MAX = np.float32(7.0)
LINEAR_OPS = ("MatMul", "Gemm")
DEFAULT_DOMAINS = ("", "ai.onnx")


class QuantError(Exception):
    pass


# ----------------------------------------------------------------------------- the math

def quantize_int4(W, G):
    """W [N, K] float32, groups of G consecutive k per row. Returns (q [N, K] int8 holding values
    in [-8, 7], scales [N, K // G] float32)."""
    W = np.asarray(W, dtype=np.float32)
    N, K = W.shape
    if G <= 0 or K % G:
        raise QuantError(f"group size {G} does not divide K={K}")
    Wg = W.reshape(N, K // G, G)
    amax = np.max(np.abs(Wg), axis=2).astype(np.float32)
    scales = (amax / INT4_MAX).astype(np.float32)
    scales[scales == 0] = np.float32(1)
    q = np.clip(np.rint(Wg / scales[:, :, None]), -8, 7).astype(np.int8)
    return q.reshape(N, K), scales


def dequantize_int4(q, scales, G):
    """(q [N, K], scales [N, K // G]) -> float32 [N, K] = q * scale."""
    N, K = q.shape
    deq = q.reshape(N, K // G, G).astype(np.float32) * scales.astype(np.float32)[:, :, None]
    return deq.reshape(N, K).astype(np.float32)


def quantize_fp8(W):
    """W [N, K] float32, one scale per output channel n. Returns (q [N, K] ml_dtypes.float8_e4m3fn,
    scales [N] float32)."""
    W = np.asarray(W, dtype=np.float32)
    amax = np.max(np.abs(W), axis=1).astype(np.float32)
    scales = (amax / FP8_MAX).astype(np.float32)
    scales[scales == 0] = np.float32(1)
    q = np.clip(W / scales[:, None], -FP8_MAX, FP8_MAX).astype(ml_dtypes.float8_e4m3fn)
    return q, scales


def dequantize_fp8(q, scales):
    """(q [N, K] float8_e4m3fn, scales [N]) -> float32 [N, K] = q * scale."""
    return (q.astype(np.float32) * scales.astype(np.float32)[:, None]).astype(np.float32)


def fake_quant_fp8_rows(x2d):
    """The activation side of fp8: per row, scale = max|row| / 448 (0 -> 1), round the row / scale
    to float8 e4m3fn (nearest even, saturating at 448), multiply back. float32 in and out."""
    x2d = np.asarray(x2d, dtype=np.float32)
    s = (np.max(np.abs(x2d), axis=1).astype(np.float32) / FP8_MAX).astype(np.float32)
    s[s == 0] = np.float32(1)
    q = np.clip(x2d / s[:, None], -FP8_MAX, FP8_MAX).astype(ml_dtypes.float8_e4m3fn)
    return (q.astype(np.float32) * s[:, None]).astype(np.float32)


# ----------------------------------------------------------------------------- graph analysis

def logits_name(graph):
    names = [o.name for o in graph.output]
    if not names:
        raise QuantError("the graph has no outputs")
    return "logits" if "logits" in names else names[0]


def lm_heads(graph, logits):
    """MatMul/Gemm nodes from which `logits` is reachable without passing through another
    MatMul/Gemm (walked backwards from logits; Shape/Size carry no values and stop the walk)."""
    producer = {o: n for n in graph.node for o in n.output if o}
    heads, seen, stack = set(), set(), [logits]
    while stack:
        t = stack.pop()
        if t in seen or t not in producer:
            continue
        seen.add(t)
        n = producer[t]
        if n.op_type in LINEAR_OPS:
            heads.add(id(n))
            continue
        if n.op_type in ("Shape", "Size"):
            continue
        stack.extend(i for i in n.input if i)
    return heads


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def default_opset(model):
    for o in model.opset_import:
        if o.domain in DEFAULT_DOMAINS:
            return o.version
    return None


# ----------------------------------------------------------------------------- the rewrite

class Namer:
    def __init__(self, graph):
        self.used = set()
        for n in graph.node:
            self.used.update(n.input)
            self.used.update(n.output)
            if n.name:
                self.used.add(n.name)
        self.used.update(i.name for i in graph.initializer)
        self.used.update(i.name for i in graph.input)
        self.used.update(o.name for o in graph.output)
        self.used.update(v.name for v in graph.value_info)

    def __call__(self, base):
        name, i = base, 0
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        return name


def plan(model, scheme, group_size, lm_head=False):
    """Classifies every MatMul/Gemm. Returns (todo: [(node, B name, k_axis)], skipped:
    [(node, reason)])."""
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    graph_inputs = {i.name for i in g.input}
    producer = {o: n for n in g.node for o in n.output if o}
    heads = lm_heads(g, logits_name(g))
    todo, skipped = [], []
    for n in g.node:
        if n.op_type not in LINEAR_OPS or n.domain not in DEFAULT_DOMAINS:
            continue
        b = n.input[1]
        if id(n) in heads and not lm_head:
            skipped.append((n, "LM head (logits reachable without another MatMul/Gemm)"))
            continue
        if b in inits and b not in graph_inputs:
            init = inits[b]
            if len(init.dims) != 2:
                skipped.append((n, f"{len(init.dims)}-D initializer B (batched / MoE experts)"))
                continue
            if init.data_type != TensorProto.FLOAT:
                skipped.append((n, f"B initializer of type {TensorProto.DataType.Name(init.data_type)}, not float32"))
                continue
            if n.op_type == "Gemm" and attr(n, "transA", 0):
                skipped.append((n, "Gemm with transA=1 (not handled)"))
                continue
            k_axis = 1 if (n.op_type == "Gemm" and attr(n, "transB", 0)) else 0
            todo.append((n, b, k_axis))
        elif b in producer and producer[b].op_type in ("Identity", "Transpose") and producer[b].input[0] in inits:
            skipped.append((n, f"B is {producer[b].op_type} of an initializer (not handled)"))
        elif b in producer and producer[b].op_type == "Constant":
            skipped.append((n, "B from a Constant node (not handled)"))
        else:
            skipped.append((n, "B is computed at run time (activation x activation)"))
    if scheme == "int4":
        for n, b, k_axis in todo:
            K = inits[b].dims[k_axis]
            if K % group_size:
                raise QuantError(f"--group-size {group_size} does not divide K={K} of weight '{b}' "
                                 f"(node '{n.name}', {n.op_type} B {list(inits[b].dims)})")
    return todo, skipped


def untie_lm_heads(graph):
    """An LM head whose B is Transpose(a 2-D float32 initializer), as a tied embedding exports,
    gets that transpose as an initializer of its own, so that it is quantized like any B (the
    embedding's Gather keeps the full-precision table, as infer-compile does)."""
    inits = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output if o}
    heads = lm_heads(graph, logits_name(graph))
    for n in graph.node:
        if id(n) not in heads or len(n.input) < 2:
            continue
        t = producer.get(n.input[1])
        if t is None or t.op_type != "Transpose" or t.input[0] not in inits:
            continue
        init = inits[t.input[0]]
        perm = list(attr(t, "perm", [1, 0]))
        if len(init.dims) != 2 or init.data_type != TensorProto.FLOAT or perm != [1, 0]:
            continue
        name = t.input[0] + ".lm_head_transposed"
        if name not in inits:
            w = numpy_helper.to_array(init).T.copy()
            graph.initializer.append(numpy_helper.from_array(w, name))
            inits[name] = graph.initializer[-1]
        n.input[1] = name


def quantize_model(model, scheme, group_size=None, form="qdq", input_scales=None, clips=None,
                   lm_head=False):
    """Quantizes `model` (an onnx.ModelProto, modified in place and returned). Returns
    (model, summary lines, form actually used). `lm_head`: the LM head too
    (infer-compile --quantize-lm-head). `input_scales` (int4, AWQ): B initializer name ->
    f [K]; that weight is quantized as W[:, k] * f[k] and its MatMul's input divided by f.
    `clips` (int4, AWQ's clipping): B initializer name -> r [N, K / group_size]; each group of
    (scaled) W is clamped to +-r times its max |W| before it is quantized."""
    input_scales = input_scales or {}
    clips = clips or {}
    if scheme not in ("int4", "fp8"):
        raise QuantError(f"unknown scheme {scheme!r}")
    if scheme == "int4" and not group_size:
        raise QuantError("int4 needs --group-size")
    g = model.graph
    if lm_head:
        untie_lm_heads(g)
    todo, skipped = plan(model, scheme, group_size, lm_head)
    opset = default_opset(model)
    if opset is None:
        raise QuantError("the model imports no default-domain opset")
    notes = []
    if form == "qdq" and opset < 21:
        problem = opset_bump_problem(model, 21)
        if problem:
            notes.append(f"bumping the opset {opset} -> 21 breaks the model ({problem}); "
                         "writing dequantized float32 weights instead of QDQ")
            form = "float"
    if form == "qdq" or scheme == "fp8":
        need = 21 if form == "qdq" else 19  # float form of fp8: Cast(saturate) to float8 (opset 19)
        if opset < need:
            problem = opset_bump_problem(model, need)
            if problem:
                raise QuantError(f"bumping the opset {opset} -> {need} breaks the model: {problem}")
            set_default_opset(model, need)
            notes.append(f"opset {opset} -> {need}")
            opset = need
    if form == "qdq" or scheme == "fp8":
        model.ir_version = max(model.ir_version, 10 if opset >= 21 else 9)

    inits = {i.name: i for i in g.initializer}
    new = Namer(g)
    new_inits, new_nodes_before = [], collections.defaultdict(list)  # node id -> nodes to insert before it
    weight_out = {}  # (B name, k_axis) -> tensor name feeding B
    act_out = {}  # A name -> fake-quantized tensor name (fp8)
    consts = {}

    def const(name, arr):
        key = (name, arr.dtype.str, arr.shape, arr.tobytes())
        if key not in consts:
            consts[key] = new(name)
            new_inits.append(numpy_helper.from_array(arr, consts[key]))
        return consts[key]

    n_matmul = n_gemm = 0
    for n, b, k_axis in todo:
        n_matmul += n.op_type == "MatMul"
        n_gemm += n.op_type == "Gemm"
        before = new_nodes_before[id(n)]
        key = (b, k_axis)
        if key not in weight_out:
            B = numpy_helper.to_array(inits[b]).astype(np.float32)
            W = B.T if k_axis == 0 else B  # [N, K]
            if b in input_scales:
                W = W * np.asarray(input_scales[b], np.float32)[None, :]
            if b in clips:
                N, K = W.shape
                groups = W.reshape(N, K // group_size, group_size)
                bound = np.abs(groups).max(axis=-1, keepdims=True) * np.asarray(clips[b], np.float32)[..., None]
                W = np.clip(groups, -bound, bound).reshape(N, K).astype(np.float32)
            if scheme == "int4":
                q, scales = quantize_int4(W, group_size)
                if form == "qdq":
                    qB = q.T if k_axis == 0 else q
                    sB = scales.T if k_axis == 0 else scales
                    qn, sn, out = new(b + "_int4"), new(b + "_scale"), new(b + "_dq")
                    new_inits.append(numpy_helper.from_array(np.ascontiguousarray(qB).astype(ml_dtypes.int4), qn))
                    new_inits.append(numpy_helper.from_array(np.ascontiguousarray(sB), sn))
                    before.append(helper.make_node("DequantizeLinear", [qn, sn], [out], name=new(b + "_DequantizeLinear"),
                                                   axis=k_axis, block_size=group_size))
                else:
                    deq = dequantize_int4(q, scales, group_size)
                    out = new(b + "_int4_dequantized")
                    new_inits.append(numpy_helper.from_array(np.ascontiguousarray(deq.T if k_axis == 0 else deq), out))
            else:
                q, scales = quantize_fp8(W)
                if form == "qdq":
                    qB = q.T if k_axis == 0 else q
                    qn, sn, out = new(b + "_fp8"), new(b + "_scale"), new(b + "_dq")
                    new_inits.append(numpy_helper.from_array(np.ascontiguousarray(qB), qn))
                    new_inits.append(numpy_helper.from_array(scales, sn))
                    before.append(helper.make_node("DequantizeLinear", [qn, sn], [out], name=new(b + "_DequantizeLinear"),
                                                   axis=1 - k_axis))
                else:
                    deq = dequantize_fp8(q, scales)
                    out = new(b + "_fp8_dequantized")
                    new_inits.append(numpy_helper.from_array(np.ascontiguousarray(deq.T if k_axis == 0 else deq), out))
            weight_out[key] = out
        n.input[1] = weight_out[key]
        if b in input_scales:
            f = np.asarray(input_scales[b], np.float32)
            a, fn = n.input[0], const(b + "_awq", f)
            if (a, fn) not in act_out:
                act_out[(a, fn)] = new(a + "_awq")
                before.append(helper.make_node("Div", [a, fn], [act_out[(a, fn)]], name=new(a + "_Div")))
            n.input[0] = act_out[(a, fn)]
        if scheme == "fp8":
            a = n.input[0]
            if a not in act_out:
                K = inits[b].dims[k_axis]
                act_out[a] = fake_quant_activation(a, K, form, opset, new, const, before)
            n.input[0] = act_out[a]

    # Insert the new nodes right before their first consumer (keeps the graph topologically sorted).
    nodes = []
    for n in g.node:
        nodes.extend(new_nodes_before.get(id(n), []))
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    # Drop the float initializers nothing reads any more.
    still_read = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    replaced = {b for b, _ in weight_out}
    keep = [i for i in g.initializer if i.name not in replaced or i.name in still_read]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    gone = replaced - {i.name for i in keep}
    if gone:
        for coll in (g.input, g.value_info):
            kept = [v for v in coll if v.name not in gone]
            del coll[:]
            coll.extend(kept)

    reasons = collections.Counter(r for _, r in skipped)
    what = f"int4 G={group_size}" if scheme == "int4" else "fp8 e4m3fn W8A8"
    summary = [f"{what} ({form}{'; ' + '; '.join(notes) if notes else ''}): quantized {len(weight_out)} weights "
               f"for {len(todo)} nodes ({n_matmul} MatMul, {n_gemm} Gemm)"
               + (f", {len(act_out)} fake-quantized activations" if scheme == "fp8" else "")]
    summary.append(f"left {len(skipped)} MatMul/Gemm" + (":" if skipped else ""))
    for r, c in reasons.items():
        names = [n.name or f"({n.op_type} -> {n.output[0]})" for n, rr in skipped if rr == r]
        summary.append(f"  {c} x {r}: {', '.join(names)}")
    return model, summary, form


def fake_quant_activation(a, K, form, opset, new, const, before):
    """Appends to `before` the nodes fake-quantizing activation `a` (last dim K) per row to fp8;
    returns the output name."""
    def node(op, ins, **kw):
        out = new(f"{a}_{op.lower()}")
        before.append(helper.make_node(op, ins, [out], name=new(f"{a}_fp8_{op}"), **kw))
        return out
    shape = node("Shape", [a])
    x2d = node("Reshape", [a, const("fp8_rows_shape", np.array([-1, K], np.int64))])
    absx = node("Abs", [x2d])
    if opset >= 18:
        amax = node("ReduceMax", [absx, const("fp8_axes_1", np.array([1], np.int64))], keepdims=0)
    else:
        amax = node("ReduceMax", [absx], axes=[1], keepdims=0)
    s0 = node("Div", [amax, const("fp8_max", np.array(FP8_MAX, np.float32))])
    zero = node("Equal", [s0, const("fp8_zero", np.array(0, np.float32))])
    s = node("Where", [zero, const("fp8_one", np.array(1, np.float32)), s0])
    if form == "qdq":
        q = node("QuantizeLinear", [x2d, s], axis=0, saturate=1, output_dtype=TensorProto.FLOAT8E4M3FN)
        dq = node("DequantizeLinear", [q, s], axis=0)
    else:
        s2 = node("Unsqueeze", [s, const("fp8_axes_1", np.array([1], np.int64))])
        d = node("Div", [x2d, s2])
        q = node("Cast", [d], to=TensorProto.FLOAT8E4M3FN, saturate=1)
        qf = node("Cast", [q], to=TensorProto.FLOAT)
        dq = node("Mul", [qf, s2])
    return node("Reshape", [dq, shape])


def set_default_opset(model, version):
    for o in model.opset_import:
        if o.domain in DEFAULT_DOMAINS:
            o.version = version


def opset_bump_problem(model, version):
    """None if the model's nodes still validate with the default opset raised to `version`, else
    the checker's complaint (nodes whose schema changed incompatibly, e.g. Reduce* axes)."""
    if model.ByteSize() >= 2**31 - 1:
        print("quantize_reference: model over 2 GB, not checking the opset bump", file=sys.stderr)
        return None
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    before = checker_error(probe)
    set_default_opset(probe, version)
    probe.ir_version = max(probe.ir_version, 10)
    after = checker_error(probe)
    return after if after and after != before else None


def checker_error(model):
    try:
        onnx.checker.check_model(model)
        return None
    except onnx.checker.ValidationError as e:
        return str(e).strip().splitlines()[0]


# ----------------------------------------------------------------------------- running

def run_tool(cmd):
    """Runs an infer tool for a check built on this reference; a non-zero exit ends the check with
    one FAIL line naming the command and its stderr."""
    import subprocess
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


def run_model(model, inputs, output=None):
    """Runs `model` (path or ModelProto) with ORT CPU, graph optimizations off. `inputs`: name ->
    array. Returns the output `output` (default: logits, else the first) as float32."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    src = model if isinstance(model, str) else model.SerializeToString()
    sess = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    if output is None:
        output = "logits" if "logits" in names else names[0]
    return np.asarray(sess.run([output], inputs)[0], dtype=np.float32)


def build_and_run(model_path, scheme, group_size, input_npy, input_name="input_ids", form="qdq", out=None, quiet=False):
    """Quantizes model_path, optionally saves it to `out`, runs it on input_npy. Returns logits."""
    model = onnx.load(model_path)
    model, summary, _ = quantize_model(model, scheme, group_size, form)
    if not quiet:
        for line in summary:
            print(f"quantize_reference: {os.path.basename(model_path)}: {line}" if line[:1] != " " else line)
    if out:
        onnx.save(model, out)
    return run_model(out if out else model, {input_name: np.load(input_npy)})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--scheme", required=True, choices=["int4", "fp8"])
    ap.add_argument("--group-size", type=int)
    ap.add_argument("--out", help="where to write the quantized model")
    ap.add_argument("--form", choices=["qdq", "float"], default="qdq",
                    help="qdq (default): DequantizeLinear/QuantizeLinear nodes; float: dequantized float32 "
                         "weights as plain initializers (same numbers; a cross-check of the QDQ layout)")
    ap.add_argument("--run", metavar="INPUT.npy", help="run the quantized model on this input with ORT CPU")
    ap.add_argument("--output", metavar="OUT.npy", help="with --run: where to save the logits (float32)")
    ap.add_argument("--input-name", default="input_ids")
    ap.add_argument("--lm-head", action="store_true", help="quantize the LM head too")
    a = ap.parse_args(argv)
    if a.scheme == "int4" and not a.group_size:
        ap.error("--scheme int4 needs --group-size")
    if a.scheme == "fp8" and a.group_size:
        ap.error("--group-size applies to int4 only (fp8 scales per output channel)")
    if not a.out and not a.run:
        ap.error("nothing to do: give --out and/or --run")
    if a.run and not a.output:
        ap.error("--run needs --output")
    try:
        model = onnx.load(a.model)
        model, summary, _ = quantize_model(model, a.scheme, a.group_size, a.form, lm_head=a.lm_head)
    except QuantError as e:
        print(f"quantize_reference: {a.model}: error: {e}", file=sys.stderr)
        return 1
    print(f"quantize_reference: {os.path.basename(a.model)}: {summary[0]}")
    for line in summary[1:]:
        print(line if line.startswith(" ") else f"quantize_reference: {os.path.basename(a.model)}: {line}")
    if a.out:
        onnx.save(model, a.out)
    if a.run:
        logits = run_model(a.out if a.out else model, {a.input_name: np.load(a.run)})
        np.save(a.output, logits)
        print(f"quantize_reference: logits {tuple(logits.shape)} -> {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
