#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into test/fuzz/corpus/TARGET/.

Seeds come from what the repository holds: the ONNX import tests (converted
to binary), the micro Llama (seeds/micro-llama/config.json, exported with
random weights by `python -m infer.export`, weights inlined, doc strings
dropped), its --emit=graph and --emit=optimized IR and its cpu artifact, the
graph dialect's .mlir tests, the test models' .npy inputs, the tokenizer
fixtures and the chat templates. Inputs that once crashed a target are added
by hand (docs/fuzzing.md) and kept: this script only adds or replaces seeds.

usage: make_corpus.py --infer-compile BUILD/bin/infer-compile
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "test/fuzz/corpus"


def put(target, name, data):
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data)


def strip(model):
    model.doc_string = ""
    del model.metadata_props[:]
    for node in model.graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
    return model


def onnx_seeds(micro):
    seeds = {"micro-llama.onnx": micro.SerializeToString()}
    for path in sorted((ROOT / "test/Import").glob("*.onnxtext")):
        text = "\n".join(l for l in path.read_text().splitlines() if not l.startswith("#"))
        try:
            model = onnx.parser.parse_model(text)
        except Exception:  # a test of a parse error: its text is a seed of its own
            continue
        seeds[path.stem + ".onnx"] = model.SerializeToString()
    for path in sorted((ROOT / "test/fuzz/regressions").glob("*.onnx")):
        if path.stat().st_size > 64 * 1024:  # replayed by fuzz.regressions; too slow a seed
            continue
        seeds["regression-" + path.name] = path.read_bytes()
    for target in ("onnx-import-fuzzer", "onnx-proto-fuzzer"):
        for name, data in seeds.items():
            put(target, name, data)


def mlir_seeds(compiler, micro_path):
    for emit in ("graph", "optimized"):
        text = subprocess.run([compiler, str(micro_path), f"--emit={emit}"], check=True,
                              capture_output=True).stdout
        put("mlir-parse-fuzzer", f"micro-llama.{emit}.mlir", text)
    for path in sorted((ROOT / "test/Dialect").rglob("*.mlir")):
        for i, part in enumerate(path.read_text().split("// -----")):
            body = "\n".join(l for l in part.splitlines() if not l.startswith("// RUN"))
            put("mlir-parse-fuzzer", f"{path.stem}.{i}.mlir", body.encode())


def artifact_seeds(compiler, micro_path, work):
    out = work / "micro-llama.infer"
    subprocess.run([compiler, str(micro_path), "--target", "cpu", "--no-tokenizer",
                    "--max-seq-len", "64", "-o", str(out)], check=True, capture_output=True)
    for target in ("artifact-reader-fuzzer", "artifact-manifest-fuzzer"):
        put(target, "micro-llama.infer", out.read_bytes())


def npy_seeds(work):
    arrays = {"f32-2x3": np.arange(6, dtype="<f4").reshape(2, 3), "i64-1x8": np.arange(8)[None],
              "i32-scalar": np.array(7, dtype="<i4"), "bool-4": np.array([1, 0, 1, 1], "|b1"),
              "f64-empty": np.zeros((0, 3), "<f8")}
    for name, array in arrays.items():
        path = work / f"{name}.npy"
        np.save(path, array)
        put("npy-fuzzer", f"{name}.npy", path.read_bytes())
    for path in sorted((ROOT / "test/models").glob("*.in0.npy"))[:2]:
        put("npy-fuzzer", path.name, path.read_bytes())


def tokenizer_seeds():
    fixtures = ROOT / "test/tokenizer/fixtures"
    small = [p for p in fixtures.rglob("*.json")
             if p.name != "tokenizer_config.json" and p.stat().st_size < 64 * 1024]
    for path in sorted(small):
        put("tokenizer-fuzzer", f"json-{path.parent.name}-{path.stem}", b"\x00" + path.read_bytes())
    texts = ["Hello world!", "  leading spaces and\ttabs\n\nnew lines", "<s>[INST] hi [/INST]</s>",
             "naïve café 日本語 🎉 \u200b", "<|endoftext|>1234567890 don't", "\xff".encode("latin1").decode("latin1")]
    for mode in (1, 2, 3):
        for i, text in enumerate(texts):
            put("tokenizer-fuzzer", f"text-{mode}-{i}", bytes([mode]) + text.encode("utf-8", "surrogateescape"))


def request_seeds():
    bodies = [
        (0, {"model": "m", "prompt": "Hello there", "max_tokens": 8}),
        (0, {"model": "m", "prompt": [1, 2, 3], "max_tokens": 4, "temperature": 0.7, "top_p": 0.9,
             "top_k": 5, "seed": 7, "stop": ["\n", "."], "stream": True,
             "stream_options": {"include_usage": True}}),
        (0, {"prompt": "x", "max_tokens": 0}),
        (0, {"prompt": "x", "n": 2, "stop": "s", "ignore_eos": True, "return_token_ids": True}),
        (1, {"model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                         {"role": "user", "content": "Hi"}], "max_tokens": 8}),
        (1, {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
             "max_completion_tokens": 3, "stream": True}),
        (1, {"messages": [], "temperature": -1}),
    ]
    for i, (endpoint, body) in enumerate(bodies):
        put("openai-request-fuzzer", f"body-{i}.json", bytes([endpoint]) + json.dumps(body).encode())
    put("openai-request-fuzzer", "not-json", b"\x00{\"prompt\": ")


def chat_seeds():
    for path in sorted((ROOT / "test/chat/templates").glob("*.jinja")):
        put("chat-template-fuzzer", path.name, path.read_bytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--infer-compile", required=True)
    parser.add_argument("--text-only", action="store_true",
                        help="only the seeds that need no export (tokenizer, chat, requests)")
    args = parser.parse_args()
    if args.text_only:
        tokenizer_seeds()
        chat_seeds()
        request_seeds()
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        export = work / "export"
        subprocess.run([sys.executable, "-m", "infer.export",
                        str(ROOT / "test/fuzz/seeds/micro-llama/config.json"), "-o", str(export),
                        "--random-weights"], check=True, capture_output=True,
                       env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})
        micro = strip(onnx.load(export / "model.onnx", load_external_data=True))
        micro_path = work / "micro-llama.onnx"
        onnx.save(micro, micro_path)
        onnx_seeds(micro)
        mlir_seeds(args.infer_compile, micro_path)
        artifact_seeds(args.infer_compile, micro_path, work)
        npy_seeds(work)
    tokenizer_seeds()
    chat_seeds()
    request_seeds()
    for target in sorted(CORPUS.iterdir()):
        files = list(target.iterdir())
        size = sum(f.stat().st_size for f in files)
        print(f"{target.name}: {len(files)} inputs, {size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
