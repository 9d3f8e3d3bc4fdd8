#!/usr/bin/env python3
"""From a Hugging Face config to streamed text on the GPU: the path a user walks.

  check_text_e2e.py --bin BIN_DIR --library libinfer.so --tokenizer DIR --out DIR

1. `python -m infer.export` of a random-weight TinyLlama-1.1B (its config.json
   alone, beside the Llama-2 tokenizer it uses and TinyLlama-Chat's chat template), bf16;
2. `infer-compile model.onnx -o model.infer` (the tokenizer files beside it go in);
3. `infer-run model.infer generate --prompt ...` streams text (greedy and seeded);
4. infer.Engine (the Python package over libinfer.so) generates the same tokens
   and text as infer-run for the same prompts and seed, and its stream of one prompt
   the same text as its generate of that prompt alone.

Exact equality needs the same kernels on both sides: every process runs the artifact's
cuBLASLt algorithms (the runtime never times them: docs/tuning.md), and each comparison
has the same batch (a batch of
two rounds differently from one sequence in bf16; random weights make near-ties, and
then tokens). Session 52 saw both on an H100 before the check pinned them.

Exits 77 without a GPU or without torch/transformers (CI); 1 on any mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import time

TINYLLAMA = dict(architectures=["LlamaForCausalLM"], model_type="llama", vocab_size=32000,
                 hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                 num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048,
                 rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2, torch_dtype="bfloat16")
PROMPTS = ["The capital of France is", "def fibonacci(n):"]
SAMPLING = [dict(), dict(temperature=0.8, top_p=0.95, seed=3), dict(temperature=1.0, top_k=50, seed=11)]


def timed(cmd, what, **kw):
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    print(f"{what}: exit {proc.returncode} in {time.time() - start:.1f} s", flush=True)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        sys.exit(1)
    return proc


def cli_flags(sampling):
    flags = []
    for key, flag in (("temperature", "--temperature"), ("top_p", "--top-p"), ("top_k", "--top-k"),
                      ("seed", "--seed")):
        if key in sampling:
            flags += [flag, str(sampling[key])]
    return flags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--tokenizer", required=True, help="the Llama-2 tokenizer directory")
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    a = ap.parse_args()
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}")
        return 77
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    src, model = os.path.join(a.out, "tinyllama-src"), os.path.join(a.out, "tinyllama")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "config.json"), "w") as f:
        json.dump(TINYLLAMA, f)
    with open(os.path.join(a.tokenizer, "tokenizer.json"), "rb") as fin, \
            open(os.path.join(src, "tokenizer.json"), "wb") as fout:
        fout.write(fin.read())
    # TinyLlama-1.1B-Chat's chat template (the Llama-2 tokenizer's config has none): the artifact
    # then serves /v1/chat/completions (check_serve_gpu.py).
    with open(os.path.join(a.tokenizer, "tokenizer_config.json")) as f:
        tokenizer_config = json.load(f)
    with open(os.path.join(repo, "test", "chat", "templates", "tinyllama-1.1b-chat-v1.0.jinja")) as f:
        tokenizer_config["chat_template"] = f.read()
    with open(os.path.join(src, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config, f)
    env = dict(os.environ, PYTHONPATH=os.path.join(repo, "python"))
    timed([sys.executable, "-m", "infer.export", src, "-o", model, "--random-weights", "--dtype", "bf16"],
          "python -m infer.export (config only, random weights, bf16)", env=env)
    artifact = os.path.join(a.out, "tinyllama.infer")
    timed([os.path.join(a.bin, "infer-compile"), os.path.join(model, "model.onnx"), "-o", artifact],
          "infer-compile -o")
    info = timed([os.path.join(a.bin, "infer-run"), artifact, "info"], "infer-run info").stdout
    print("\n".join(l for l in info.splitlines()
                    if l.startswith(("text:", "  chat template", "  from:", "weights:"))))
    failures = []
    run = os.path.join(a.bin, "infer-run")
    streamed = timed([run, artifact, "generate", "--prompt", PROMPTS[0], "--max-new-tokens",
                      str(a.max_new_tokens), "--device", "cuda"], "infer-run generate --prompt (streamed)")
    print(f"streamed text: {streamed.stdout!r}\n{streamed.stderr.strip()}")

    sys.path.insert(0, os.path.join(repo, "python"))
    os.environ["INFER_LIBRARY"] = a.library
    import infer
    with infer.Engine(artifact, device="cuda") as engine:
        print(f"Engine: {engine.info}")
        for sampling in SAMPLING:
            args = sum((["--prompt", p] for p in PROMPTS), []) + cli_flags(sampling)
            cli = json.loads(timed([run, artifact, "generate", "--device", "cuda", "--output", "json",
                                    "--max-new-tokens", str(a.max_new_tokens), *args],
                                   f"infer-run generate {cli_flags(sampling)}").stdout.splitlines()[-1])
            ours = engine.generate(PROMPTS, max_tokens=a.max_new_tokens, **sampling)
            for i, (c, r) in enumerate(zip(ours, cli["requests"])):
                same = c.token_ids == r["generated"] and c.text == r["text"]
                print(f"  {'same' if same else 'DIFFERENT'} tokens and text, prompt {i} {sampling}: "
                      f"{len(c.token_ids)} tokens, finish {c.finish_reason}, text {c.text[:80]!r}")
                if not same:
                    failures.append((sampling, i, c.token_ids, r["generated"]))
            solo = engine.generate([PROMPTS[0]], max_tokens=a.max_new_tokens, **sampling)[0]
            chunks = list(engine.stream(PROMPTS[0], max_tokens=a.max_new_tokens, **sampling))
            text = "".join(ch.text for ch in chunks)
            if text != solo.text:
                failures.append(("stream", sampling, text, solo.text))
            print(f"  stream: {len(chunks)} chunks, {'same' if text == solo.text else 'DIFFERENT'} "
                  f"text as generate of the prompt alone")
    if streamed.stdout != cli_text_of(run, artifact, a.max_new_tokens) + "\n":
        failures.append(("streamed CLI text differs from its JSON text",))
    print(f"{len(failures)} failures")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def cli_text_of(run, artifact, n):
    proc = subprocess.run([run, artifact, "generate", "--prompt", PROMPTS[0], "--max-new-tokens", str(n),
                           "--device", "cuda", "--output", "json"], capture_output=True, text=True)
    return json.loads(proc.stdout.splitlines()[-1])["requests"][0]["text"]


if __name__ == "__main__":
    sys.exit(main())
