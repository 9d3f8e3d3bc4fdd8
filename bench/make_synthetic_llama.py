#!/usr/bin/env python3
"""Writes an ONNX model with the weight shapes of a Llama preset (default TinyLlama-1.1B) and its
weights as external data, for measuring import time and memory without a GPU or transformers.

  python3 bench/make_synthetic_llama.py --out /tmp/synth [--dtype bfloat16] [--layers 22]

The graph is a simplified decoder (per layer: q/k/v/o projections, gated MLP, residual adds, norm
scales as Mul) in the same opset as the dynamo exporter; weights are zeros in a sparse file, so
writing 2.2 GB takes a second. Import cost depends on the number and size of initializers, which
match the real model.
"""
import argparse, os
import numpy as np
import onnx
from onnx import TensorProto, helper

PRESETS = {
    "tinyllama-1.1b": dict(vocab=32000, hidden=2048, inter=5632, layers=22, heads=32, kv_heads=4),
    "llama3-8b": dict(vocab=128256, hidden=4096, inter=14336, layers=32, heads=32, kv_heads=8),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="tinyllama-1.1b", choices=sorted(PRESETS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--layers", type=int, help="override the preset's layer count")
    a = ap.parse_args()
    p = dict(PRESETS[a.preset])
    if a.layers:
        p["layers"] = a.layers
    elem = {"bfloat16": TensorProto.BFLOAT16, "float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT}[a.dtype]
    elem_bytes = 4 if a.dtype == "float32" else 2
    os.makedirs(a.out, exist_ok=True)
    name = f"{a.preset}-synthetic"
    data_name = name + ".onnx.data"
    offset = 0
    inits, nodes = [], []

    def weight(wname, shape):
        nonlocal offset
        t = helper.make_tensor_value_info(wname, elem, shape)  # for the type only
        tensor = TensorProto(name=wname, data_type=elem, dims=shape, data_location=TensorProto.EXTERNAL)
        size = int(np.prod(shape)) * elem_bytes
        for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(size))):
            e = tensor.external_data.add(); e.key = k; e.value = v
        offset += (size + 4095) // 4096 * 4096
        inits.append(tensor)
        return wname

    H, I, V = p["hidden"], p["inter"], p["vocab"]
    kv = H // p["heads"] * p["kv_heads"]
    nodes.append(helper.make_node("Gather", [weight("model.embed_tokens.weight", [V, H]), "input_ids"], ["h0"], name="embed"))
    h = "h0"
    for l in range(p["layers"]):
        pre = f"model.layers.{l}."
        def mm(x, w, out):
            nodes.append(helper.make_node("MatMul", [x, w], [out], name=out))
            return out
        def mul(x, w, out):
            nodes.append(helper.make_node("Mul", [x, w], [out], name=out))
            return out
        def add(x, y, out):
            nodes.append(helper.make_node("Add", [x, y], [out], name=out))
            return out
        n1 = mul(h, weight(pre + "input_layernorm.weight", [H]), f"l{l}_n1")
        q = mm(n1, weight(pre + "self_attn.q_proj.weight", [H, H]), f"l{l}_q")
        k = mm(n1, weight(pre + "self_attn.k_proj.weight", [H, kv]), f"l{l}_k")
        v = mm(n1, weight(pre + "self_attn.v_proj.weight", [H, kv]), f"l{l}_v")
        kvsum = add(k, v, f"l{l}_kv")
        o = mm(q, weight(pre + "self_attn.o_proj.weight", [H, H]), f"l{l}_o")
        h = add(h, o, f"l{l}_r1")
        n2 = mul(h, weight(pre + "post_attention_layernorm.weight", [H]), f"l{l}_n2")
        g = mm(n2, weight(pre + "mlp.gate_proj.weight", [H, I]), f"l{l}_g")
        u = mm(n2, weight(pre + "mlp.up_proj.weight", [H, I]), f"l{l}_u")
        d = mm(mul(g, u, f"l{l}_gu"), weight(pre + "mlp.down_proj.weight", [I, H]), f"l{l}_d")
        h = add(h, d, f"l{l}_r2")
        nodes.append(helper.make_node("ReduceSum", [kvsum], [f"l{l}_unused"], name=f"l{l}_keep_kv", keepdims=0))
    hn = f"final_norm"
    nodes.append(helper.make_node("Mul", [h, weight("model.norm.weight", [H])], [hn], name=hn))
    nodes.append(helper.make_node("MatMul", [hn, weight("lm_head.weight", [H, V])], ["logits"], name="lm_head"))
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", elem, ["batch", "seq", V])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx.save(model, os.path.join(a.out, name + ".onnx"))
    with open(os.path.join(a.out, data_name), "wb") as f:
        f.truncate(offset)  # sparse: zeros, written instantly
    params = sum(int(np.prod(t.dims)) for t in inits)
    print(f"{os.path.join(a.out, name + '.onnx')}: {params / 1e9:.2f}B params, "
          f"{offset / 1e9:.2f} GB external data, {len(nodes)} nodes")


if __name__ == "__main__":
    main()
