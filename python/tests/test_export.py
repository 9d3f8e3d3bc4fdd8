#!/usr/bin/env python3
"""End-to-end test of `python -m infer.export` (python/infer/export.py).

  python3 python/tests/test_export.py --infer-compile BIN --infer-run BIN [--tokenizer-dir DIR] [--keep]

Builds tiny seeded models with transformers (llama, qwen2, mistral, gpt2, phi3), saves them as
safetensors checkpoints (one sharded), exports each with `python -m infer.export` in a
subprocess, checks the ONNX (onnx.load, `infer-compile --check`), compiles it for the cpu
target, runs `infer-run forward --device cpu` and compares the logits with the PyTorch model's
on the same ids (fp32, max abs 1e-4). Then: a config.json alone with --random-weights; the side
files byte-identical to their sources; every expected failure is one line on stderr, a non-zero
exit and no OUT_DIR.

Exits 77 (skip) when torch or transformers is not importable. The tokenizer defaults to the
bundled tiny-llama's (models/tiny-llama: 512 tokens, the tiny configs' vocabulary, so that the
compiled artifacts take text); without it the tokenizer checks are skipped.
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON_DIR)
DEFAULT_TOKENIZER = os.path.join(REPO, "models", "tiny-llama")
SKIP = 77

TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=256)
ARCHS = {  # name: (config class, kwargs, save_pretrained kwargs)
    "llama":   ("LlamaConfig",   dict(TINY, num_key_value_heads=2), {}),
    "qwen2":   ("Qwen2Config",   dict(TINY, num_key_value_heads=2), {}),
    "mistral": ("MistralConfig", dict(TINY, num_key_value_heads=2, sliding_window=None),
                dict(max_shard_size="200KB")),  # sharded: model.safetensors.index.json
    "gpt2":    ("GPT2Config",    dict(vocab_size=512, n_embd=64, n_layer=2, n_head=4, n_positions=256), {}),
    "phi3":    ("Phi3Config",    dict(TINY, num_key_value_heads=4, pad_token_id=0), {}),
}
TOL = 1e-4

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def run_export(*extra, timeout=600):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
               HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "infer.export", *map(str, extra)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def stderr_tail(p, n=6):
    return " | ".join(p.stderr.strip().splitlines()[-n:])


def build_model(torch, transformers, name, seed):
    cls, kw, _ = ARCHS[name]
    torch.manual_seed(seed)
    cfg = getattr(transformers, cls)(**kw)
    m = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32).eval()
    with torch.no_grad():  # perturb every weight so that norms and biases are not trivial
        for p in m.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--tokenizer-dir", default=DEFAULT_TOKENIZER,
                    help="a tokenizer fixture (tokenizer.json, tokenizer_config.json) to export with")
    ap.add_argument("--arch", action="append", choices=sorted(ARCHS), help="only these (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    try:
        import numpy as np
        import torch
        import transformers
        import onnx
    except ImportError as e:
        print(f"SKIP: test_export needs torch, transformers and onnx ({e})")
        return SKIP
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    for b in (a.infer_compile, a.infer_run):
        if not os.access(b, os.X_OK):
            print(f"error: {b}: not an executable")
            return 2
    tok = a.tokenizer_dir if a.tokenizer_dir and os.path.isfile(os.path.join(a.tokenizer_dir, "tokenizer.json")) else None
    if tok is None:
        print(f"note: no tokenizer fixture at {a.tokenizer_dir}: tokenizer checks skipped")

    t_start = time.time()
    work = tempfile.mkdtemp(prefix="infer-test-export-")
    try:
        for i, name in enumerate(a.arch or ARCHS):
            check_arch(np, torch, transformers, onnx, a, work, name, seed=i, tok=tok)
        check_config_only(np, onnx, a, work, tok)
        check_failures(torch, transformers, work)
    finally:
        if a.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(failures)} failure(s) in {time.time() - t_start:.0f}s")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


def compile_and_run(np, a, out, tag, inputs):
    """Compile OUT/model.onnx for the cpu target and run it on each input; returns the logits."""
    p = subprocess.run([a.infer_compile, os.path.join(out, "model.onnx"), "--check"], capture_output=True, text=True)
    if not check(p.returncode == 0, f"{tag}: infer-compile --check accepts it"
                 + ("" if p.returncode == 0 else f" ({(p.stdout + p.stderr).strip()[-400:]})")):
        return None
    art = os.path.join(out, "m.infer")
    p = subprocess.run([a.infer_compile, os.path.join(out, "model.onnx"), "-o", art, "--target", "cpu"],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, f"{tag}: infer-compile -o m.infer --target cpu"
                 + ("" if p.returncode == 0 else f" ({(p.stdout + p.stderr).strip()[-400:]})")):
        return None
    if os.path.isfile(os.path.join(out, "tokenizer.json")):
        # The tokenizer beside the export went into the artifact: text in, text out.
        chat = ["--chat"] if os.path.isfile(os.path.join(out, "chat_template.jinja")) else []
        p = subprocess.run([a.infer_run, art, "generate", "--device", "cpu", *chat, "--prompt", "Hello",
                            "--max-new-tokens", "4", "--output", "json"], capture_output=True, text=True)
        check(p.returncode == 0 and "text" in json.loads(p.stdout.splitlines()[-1])["requests"][0],
              f"{tag}: infer-run generate {' '.join(chat)} --prompt gives text"
              + ("" if p.returncode == 0 else f" ({p.stderr.strip()[-400:]})"))
    results = []
    for j, x in enumerate(inputs):
        xp, yp = os.path.join(out, f"in{j}.npy"), os.path.join(out, f"out{j}.npy")
        np.save(xp, x)
        p = subprocess.run([a.infer_run, art, "forward", "--device", "cpu", "--input", f"input_ids={xp}",
                            "--output", f"logits={yp}"], capture_output=True, text=True)
        if not check(p.returncode == 0, f"{tag}: infer-run forward {list(x.shape)}"
                     + ("" if p.returncode == 0 else f" ({(p.stdout + p.stderr).strip()[-400:]})")):
            return None
        results.append(np.load(yp))
    os.remove(art)
    return results


def check_arch(np, torch, transformers, onnx, a, work, name, seed, tok):
    t0 = time.time()
    model = build_model(torch, transformers, name, seed)
    ckpt = os.path.join(work, f"ckpt-{name}")
    model.save_pretrained(ckpt, **ARCHS[name][2])
    side_src = {"config.json": os.path.join(ckpt, "config.json")}
    if os.path.isfile(os.path.join(ckpt, "generation_config.json")):
        side_src["generation_config.json"] = os.path.join(ckpt, "generation_config.json")
    extra = []
    if tok and name == "llama":  # the tokenizer inside the checkpoint, plus the two optional files
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(os.path.join(tok, f), os.path.join(ckpt, f))
        with open(os.path.join(ckpt, "chat_template.jinja"), "w") as f:
            f.write("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}")
        with open(os.path.join(ckpt, "special_tokens_map.json"), "w") as f:
            json.dump({"bos_token": "<s>", "eos_token": "</s>"}, f)
        for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"):
            side_src[f] = os.path.join(ckpt, f)
    elif tok and name == "qwen2":  # the tokenizer from --tokenizer DIR
        extra = ["--tokenizer", tok]
        for f in ("tokenizer.json", "tokenizer_config.json"):
            side_src[f] = os.path.join(tok, f)
    if name == "mistral":
        check(os.path.isfile(os.path.join(ckpt, "model.safetensors.index.json")),
              f"{name}: the checkpoint is sharded (model.safetensors.index.json)")

    out = os.path.join(work, f"out-{name}")
    p = run_export(ckpt, "-o", out, *extra)
    if not check(p.returncode == 0, f"{name}: python -m infer.export"
                 + ("" if p.returncode == 0 else f" (exit {p.returncode}: {stderr_tail(p)})")):
        return
    check("Traceback" not in p.stderr, f"{name}: no traceback on stderr")
    m = onnx.load(os.path.join(out, "model.onnx"))  # with the external data
    check([i.name for i in m.graph.input] == ["input_ids"] and [o.name for o in m.graph.output] == ["logits"]
          and m.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64,
          f"{name}: onnx.load; input input_ids int64, output logits")
    check(os.path.isfile(os.path.join(out, "model.onnx.data")), f"{name}: weights in model.onnx.data")
    same = {f: os.path.isfile(os.path.join(out, f)) and filecmp.cmp(src, os.path.join(out, f), shallow=False)
            for f, src in side_src.items()}
    check(all(same.values()), f"{name}: byte-identical copies of {', '.join(sorted(same))}"
          + ("" if all(same.values()) else f" (differ or missing: {[f for f, v in same.items() if not v]})"))
    expected = {"model.onnx", "model.onnx.data", "config.json", "generation_config.json"} | set(side_src)
    check(set(os.listdir(out)) == expected, f"{name}: OUT_DIR holds exactly {sorted(expected)}"
          + ("" if set(os.listdir(out)) == expected else f" (has {sorted(os.listdir(out))})"))
    if tok and name in ("llama", "qwen2"):
        check("found tokenizer.json, tokenizer_config.json" in p.stderr, f"{name}: reports the tokenizer files found")

    vocab = model.config.vocab_size
    g = np.random.default_rng(100 + seed)
    inputs = [g.integers(0, vocab, (2, 7), dtype=np.int64), g.integers(0, vocab, (1, 13), dtype=np.int64)]
    got = compile_and_run(np, a, out, name, inputs)
    if got is None:
        return
    worst = 0.0
    with torch.no_grad():
        for x, y in zip(inputs, got):
            ref = model(input_ids=torch.from_numpy(x), use_cache=False).logits.float().numpy()
            if not check(y.shape == ref.shape, f"{name}: logits shape {list(y.shape)} == {list(ref.shape)}"):
                return
            worst = max(worst, float(np.abs(y.astype(np.float32) - ref).max()))
    check(worst <= TOL, f"{name}: infer-run matches PyTorch, max abs {worst:.2e} (<= {TOL:g}) [{time.time() - t0:.0f}s]")


def check_config_only(np, onnx, a, work, tok):
    t0 = time.time()
    d = os.path.join(work, "config-only")
    os.makedirs(d)
    cfg_path = os.path.join(d, "tiny-qwen2.json")  # any file name: copied as config.json
    cfg = dict(TINY, model_type="qwen2", architectures=["Qwen2ForCausalLM"], num_key_value_heads=2,
               bos_token_id=3, eos_token_id=[4, 5], dtype="bfloat16")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=1)
    out = os.path.join(work, "out-config-only")
    os.makedirs(out)  # an existing OUT_DIR: our files replaced, stale ones of ours removed, others kept
    for f, text in (("keep.txt", "not ours"), ("chat_template.jinja", "stale"), ("model.onnx", "stale")):
        with open(os.path.join(out, f), "w") as fh:
            fh.write(text)
    p = run_export(cfg_path, "-o", out)
    check(p.returncode != 0 and "--random-weights" in p.stderr,
          f"config only without --random-weights: refused, asks for --random-weights ({stderr_tail(p, 1)})")
    p = run_export(cfg_path, "-o", out, "--random-weights", "--seed", "3")
    if not check(p.returncode == 0, "config only: export with --random-weights"
                 + ("" if p.returncode == 0 else f" (exit {p.returncode}: {stderr_tail(p)})")):
        return
    check("Traceback" not in p.stderr, "config only: no traceback on stderr")
    have = sorted(os.listdir(out))
    check(have == ["config.json", "generation_config.json", "keep.txt", "model.onnx", "model.onnx.data"],
          f"config only: existing OUT_DIR updated, stale chat_template.jinja removed, keep.txt kept ({have})")
    check(filecmp.cmp(cfg_path, os.path.join(out, "config.json"), shallow=False),
          "config only: config.json byte-identical to the config file")
    with open(os.path.join(out, "generation_config.json")) as f:
        gen = json.load(f)
    check(gen.get("bos_token_id") == 3 and gen.get("eos_token_id") == [4, 5],
          f"config only: generation_config.json written from the config's bos/eos ({gen})")
    check("missing tokenizer.json" in p.stderr, "config only: reports the missing tokenizer files")
    m = onnx.load(os.path.join(out, "model.onnx"), load_external_data=False)
    types = {i.data_type for i in m.graph.initializer if i.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.BFLOAT16,
                                                                         onnx.TensorProto.FLOAT16)}
    check(onnx.TensorProto.BFLOAT16 in types and onnx.TensorProto.FLOAT16 not in types,
          "config only: the config's dtype bfloat16 is the default (bf16 weights)")
    g = np.random.default_rng(7)
    got = compile_and_run(np, a, out, "config only (bf16)", [g.integers(0, 512, (2, 5), dtype=np.int64)])
    if got is not None:
        check(got[0].shape == (2, 5, 512) and bool(np.isfinite(got[0].astype(np.float32)).all()),
              f"config only: logits [2, 5, 512], finite [{time.time() - t0:.0f}s]")


def check_failures(torch, transformers, work):
    """Each bad input: one line on stderr, non-zero exit, no OUT_DIR and no staging left behind."""
    t0 = time.time()
    bad = os.path.join(work, "bad")
    os.makedirs(bad)
    # checkpoints whose weights do not fit the model: one weight missing, one of another shape
    from safetensors.torch import save_file
    state = {k: v.detach().clone().contiguous() for k, v in build_model(torch, transformers, "llama", 0).state_dict().items()}
    for what in ("missing", "mismatched"):
        d = os.path.join(bad, f"weights-{what}")
        os.makedirs(d)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(dict(TINY, model_type="llama", architectures=["LlamaForCausalLM"], num_key_value_heads=2), f)
        s = dict(state)
        if what == "missing":
            s.pop("model.layers.1.mlp.down_proj.weight")
        else:
            s["model.norm.weight"] = s["model.norm.weight"][:10].clone()
        save_file(s, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})

    def cfgdir(name, cfg, weights=False):
        d = os.path.join(bad, name)
        os.makedirs(d)
        with open(os.path.join(d, "config.json"), "w") as f:
            f.write(cfg if isinstance(cfg, str) else json.dumps(cfg))
        return d

    empty = os.path.join(bad, "empty")
    os.makedirs(empty)
    a_file = os.path.join(bad, "a-file")
    with open(a_file, "w") as f:
        f.write("x")
    llama = dict(TINY, model_type="llama", architectures=["LlamaForCausalLM"], num_key_value_heads=2)
    cases = [  # (what, argv, the message must contain, one line only)
        ("SRC missing", [os.path.join(bad, "nope")], "no such file", True),
        ("no config.json", [empty], "no config.json", True),
        ("config not JSON", [cfgdir("notjson", "{not json")], "not valid JSON", True),
        ("unknown model_type", [cfgdir("unknown", {"model_type": "no-such-model", "hidden_size": 8}), "--random-weights"],
         "not known to transformers", True),
        ("encoder (bert)", [cfgdir("bert", {"model_type": "bert", "architectures": ["BertForMaskedLM"],
                                            "hidden_size": 64}), "--random-weights"], "not a causal language model", True),
        ("encoder without architectures (roberta)", [cfgdir("roberta", {"model_type": "roberta"}), "--random-weights"],
         "encoder", True),
        ("vision model (vit)", [cfgdir("vit", {"model_type": "vit", "architectures": ["ViTForImageClassification"]}),
                                "--random-weights"], "not a causal language model", True),
        ("encoder-decoder (t5)", [cfgdir("t5", {"model_type": "t5"}), "--random-weights"], "causal language model", True),
        ("weights missing", [cfgdir("noweights", llama)], "--random-weights", True),
        ("shard missing", [cfgdir("noshard", llama)], "missing", True),
        ("a weight missing", [os.path.join(bad, "weights-missing")],
         "lacks 1 weight that LlamaForCausalLM needs (first: model.layers.1.mlp.down_proj.weight)", False),
        ("a weight of another shape", [os.path.join(bad, "weights-mismatched")], "model.norm.weight", False),
        ("model build failure (reformer, is_decoder false)", [cfgdir("reformer", {
            "model_type": "reformer", "architectures": ["ReformerModelWithLMHead"],
            "vocab_size": 64, "hidden_size": 32, "num_attention_heads": 2, "attention_head_size": 16,
            "axial_pos_shape": [8, 8], "axial_pos_embds_dim": [16, 16], "feed_forward_size": 64,
            "max_position_embeddings": 64, "attn_layers": ["local", "lsh"]}),
            "--random-weights"], "cannot build ReformerModelWithLMHead", False),
        # torch 2.11's exporter fails on RWKV in its decomposition step; progress lines come first
        ("torch.onnx failure (rwkv)", [cfgdir("rwkv", {
            "model_type": "rwkv", "architectures": ["RwkvForCausalLM"], "vocab_size": 64, "hidden_size": 32,
            "num_hidden_layers": 2, "attention_hidden_size": 32, "intermediate_size": 64, "context_length": 64}),
            "--random-weights"], "torch.onnx could not export RwkvForCausalLM", False),
    ]
    with open(os.path.join(bad, "noshard", "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}}, f)
    for what, argv, expect, single in cases:
        out = os.path.join(bad, "out-" + what.split()[0])
        p = run_export(*argv, "-o", out)
        lines = p.stderr.strip().splitlines()
        if "rwkv" in what and p.returncode == 0:
            print(f"note: {what}: RWKV now exports; the torch.onnx failure path is not exercised")
            shutil.rmtree(out, ignore_errors=True)
            continue
        ok = (p.returncode != 0 and lines and lines[-1].startswith("infer.export: error: ") and expect in lines[-1]
              and "Traceback" not in p.stderr and (len(lines) == 1 or not single)
              and sum(ln.startswith("infer.export: error:") for ln in lines) == 1)
        check(ok, f"refused: {what}: exit {p.returncode}, '{lines[-1] if lines else ''}'"
              + ("" if ok else f" [stderr: {len(lines)} lines: {' | '.join(lines[:4])}]"))
        check(not os.path.exists(out), f"refused: {what}: no OUT_DIR")

    good = os.path.join(work, "config-only", "tiny-qwen2.json")
    for what, out, expect in (("OUT_DIR is a file", a_file, "not a directory"),
                              ("OUT_DIR under a file", os.path.join(a_file, "sub", "out"), "not a directory")):
        p = run_export(good, "--random-weights", "-o", out)
        lines = p.stderr.strip().splitlines()
        check(p.returncode != 0 and len(lines) == 1 and expect in lines[0], f"refused: {what}: '{lines[-1] if lines else ''}'")
    if os.geteuid() != 0:  # root writes anywhere
        ro = os.path.join(bad, "readonly")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        p = run_export(good, "--random-weights", "-o", os.path.join(ro, "out"))
        lines = p.stderr.strip().splitlines()
        check(p.returncode != 0 and len(lines) == 1 and "cannot write" in lines[0], f"refused: unwritable OUT_DIR: '{lines[-1] if lines else ''}'")
        check(os.listdir(ro) == [], "refused: unwritable OUT_DIR: nothing left")
        os.chmod(ro, 0o755)
    left = [f for f in os.listdir(bad) if ".infer-export-" in f]
    check(not left, f"no staging directories left behind ({left}) [{time.time() - t0:.0f}s]")


if __name__ == "__main__":
    sys.exit(main())
