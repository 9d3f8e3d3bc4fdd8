#!/usr/bin/env python3
"""GPU check of `infer-compile --tune` (docs/tuning.md; ctest label `gpu`).

  1. --tune --tuning-db DB times every GEMM shape bucket on this GPU, writes DB, and the
     artifact's records (infer-run info) are for this GPU;
  2. the same compile again times nothing (every record from DB) and writes the same bytes;
     so does --tuning-db DB without --tune;
  3. two processes on the tuned artifact give the same bits: `forward` logits byte for byte
     (each says it took the records), `generate --greedy` ids of two prompts (18 tokens in one
     prefill step: cuBLASLt);
  4. records for another GPU only: the run warns and takes cuBLASLt's heuristic.
Exits 77 (ctest SKIP) without an NVIDIA GPU.

  check_tune.py --infer-compile C --infer-run R --model M.onnx --input M.in0.npy [--dtype bf16]
"""
import argparse, filecmp, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_gpu import SKIP, gpu_present, run  # noqa: E402


def fail(message):
    print(f"FAIL: {message}")
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--dtype", default="bf16", choices=["fp32", "bf16", "fp16"])
    a = ap.parse_args()
    if not gpu_present():
        print("SKIP: no NVIDIA GPU (libcuda.so.1 missing or no device)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "tuning.json")
        compile_ = [a.infer_compile, a.model, "--target", "cuda", "--dtype", a.dtype,
                    "--max-batch-tokens", "256"]
        paths = {name: os.path.join(tmp, name + ".infer") for name in ("first", "again", "db", "other")}
        first = run(compile_ + ["-o", paths["first"], "--tune", "--tuning-db", db])
        if first.returncode:
            return 1
        print(first.stderr)
        sets = json.load(open(db))["record_sets"]
        if len(sets) != 1 or not sets[0]["gemm"]:
            return fail(f"expected one GPU's records in {db}, found {sets}")
        device, timed = sets[0]["device"], len(sets[0]["gemm"])
        info = run([a.infer_run, paths["first"], "info"])
        if info.returncode or f"GEMM tuning records for {device} " not in info.stdout:
            return fail(f"info lists no records for {device}:\n{info.stdout}")
        again = run(compile_ + ["-o", paths["again"], "--tune", "--tuning-db", db])
        if again.returncode:
            return 1
        if f"tuning 0 GEMM shape buckets on {device}" not in again.stderr or \
                f"{timed} from the tuning database" not in again.stderr:
            return fail(f"the second --tune timed again:\n{again.stderr}")
        if run(compile_ + ["-o", paths["db"], "--tuning-db", db]).returncode:
            return 1
        for name in ("again", "db"):
            if not filecmp.cmp(paths["first"], paths[name], shallow=False):
                return fail(f"the {name} compile's artifact differs from the first's")

        # Two processes, the same bits.
        outputs = []
        for i in range(2):
            out = os.path.join(tmp, f"logits{i}.npy")
            proc = run([a.infer_run, paths["first"], "forward", "--device", "cuda",
                        "--input", f"input_ids={a.input}", "--output", f"logits={out}"])
            if proc.returncode:
                return 1
            if f"{timed} GEMM tuning records" not in proc.stderr:
                return fail(f"forward does not say it took the {timed} records:\n{proc.stderr}")
            outputs.append(open(out, "rb").read())
        if outputs[0] != outputs[1]:
            return fail("two forward processes on one tuned artifact gave different logits")
        ids = []
        for i in range(2):
            proc = run([a.infer_run, paths["first"], "generate", "--device", "cuda", "--greedy",
                        "--prompt-ids", "1,2,3,4,5,6,7", "--prompt-ids",
                        "8,9,10,11,12,13,14,15,16,17,18", "--max-new-tokens", "8"])
            if proc.returncode:
                return 1
            ids.append([line for line in proc.stdout.splitlines() if line.startswith("request ")])
        if not ids[0] or ids[0] != ids[1]:
            return fail(f"two generate processes gave different ids:\n{ids[0]}\n{ids[1]}")

        # Another GPU's records only: a warning, and the heuristic runs.
        sets[0]["device"] = "Another GPU, 1 SMs"
        other_db = os.path.join(tmp, "other.json")
        json.dump({"format": 2, "record_sets": sets}, open(other_db, "w"))
        if run(compile_ + ["-o", paths["other"], "--tuning-db", other_db]).returncode:
            return 1
        proc = run([a.infer_run, paths["other"], "generate", "--device", "cuda", "--greedy",
                    "--prompt-ids", "1,2,3", "--max-new-tokens", "4"])
        if proc.returncode or "not for this" not in proc.stderr:
            return fail(f"records of another GPU gave no warning:\n{proc.stderr}")
    print(f"OK: {timed} records for {device}; the same artifact from the database; the same bits "
          "in two processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
