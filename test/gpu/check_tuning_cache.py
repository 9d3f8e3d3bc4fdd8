#!/usr/bin/env python3
"""GPU check of the GEMM tuning cache (runtime/cuda/GemmTuningCache.h; ctest label `gpu`).

Compiles MODEL.onnx for cuda, then serves two prompts (18 prompt tokens in one step: a
cuBLASLt prefill, whose algorithm is tuned) with `infer-run generate --greedy` three times
over a fresh INFER_CACHE_DIR:
  1. the first run tunes and writes gemm-tuning.json (one device, at least one shape);
  2. the second takes every algorithm from the file: the same token ids, and the file is not
     rewritten (nothing was tuned);
  3. with the file corrupted the run still succeeds and writes a valid file again.
INFER_GEMM_TUNING_CACHE=0 writes no file. Exits 77 (ctest SKIP) without an NVIDIA GPU.

  check_tuning_cache.py --infer-compile C --infer-run R --model M.onnx [--dtype bf16]
"""
import argparse, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_gpu import SKIP, gpu_present, run  # noqa: E402


def generate(infer_run, artifact, cache_dir, extra_env=None):
    env = dict(os.environ, INFER_CACHE_DIR=cache_dir, **(extra_env or {}))
    env.pop("INFER_GEMM_TUNE", None)
    proc = subprocess.run([infer_run, artifact, "generate", "--device", "cuda", "--greedy",
                           "--prompt-ids", "1,2,3,4,5,6,7", "--prompt-ids", "8,9,10,11,12,13,14,15,16,17,18",
                           "--max-new-tokens", "8"], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(f"FAIL: generate exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return None
    return [line for line in proc.stdout.splitlines() if line.startswith("request ")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--dtype", default="bf16", choices=["fp32", "bf16", "fp16"])
    a = ap.parse_args()
    if not gpu_present():
        print("SKIP: no NVIDIA GPU (libcuda.so.1 missing or no device)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "model.infer")
        if run([a.infer_compile, a.model, "-o", artifact, "--target", "cuda", "--dtype", a.dtype]).returncode:
            return 1
        cache = os.path.join(tmp, "cache")
        path = os.path.join(cache, "gemm-tuning.json")
        first = generate(a.infer_run, artifact, cache)
        if first is None:
            return 1
        try:
            with open(path) as f:
                written = f.read()
            devices = json.loads(written)["devices"]
        except (OSError, ValueError, KeyError) as e:
            print(f"FAIL: the first run left no valid {path}: {e}")
            return 1
        shapes = sum(len(entries) for entries in devices.values())
        if len(devices) != 1 or shapes == 0:
            print(f"FAIL: expected one device with tuned shapes, found {devices}")
            return 1
        second = generate(a.infer_run, artifact, cache)
        if second is None:
            return 1
        if second != first:
            print(f"FAIL: the second run's ids differ from the first's:\n{first}\n{second}")
            return 1
        with open(path) as f:
            if f.read() != written:
                print("FAIL: the second run rewrote the cache (it tuned a shape the file held)")
                return 1
        with open(path, "w") as f:
            f.write("{ not json")
        if generate(a.infer_run, artifact, cache) is None:
            return 1
        try:
            with open(path) as f:
                json.load(f)["devices"]
        except (OSError, ValueError, KeyError) as e:
            print(f"FAIL: a corrupted cache was not replaced by a valid one: {e}")
            return 1
        off = os.path.join(tmp, "off")
        if generate(a.infer_run, artifact, off, {"INFER_GEMM_TUNING_CACHE": "0"}) is None:
            return 1
        if os.path.exists(os.path.join(off, "gemm-tuning.json")):
            print("FAIL: INFER_GEMM_TUNING_CACHE=0 still wrote a cache")
            return 1
    print(f"PASS: GEMM tuning cache ({os.path.basename(a.model)}, {a.dtype}): {shapes} shape(s) "
          f"tuned once, the second run took them from the file (same ids, file unchanged), a "
          f"corrupted file replaced, none written with INFER_GEMM_TUNING_CACHE=0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
