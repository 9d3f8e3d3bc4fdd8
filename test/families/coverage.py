#!/usr/bin/env python3
"""Regenerates docs/model-coverage.md: which Hugging Face families infer serves, on which backend.

  coverage.py --infer-compile BIN --infer-run BIN [--gpu-log run-all.log ...] [--out docs/model-coverage.md]

For every family of families.py, on its tiny random-weight model (test/models/tiny-NAME.onnx or
test/e2e/models/tiny-NAME.onnx when committed, else exported here by make_family_model.py into a temporary directory, which needs
torch and transformers):
  check     `infer-compile --check`: every op imports and the graph passes accept it;
  cpu fwd   `infer-run forward --device cpu` on both golden inputs within 1e-4 of PyTorch;
  cpu gen   `infer-run generate --device cpu`: HF's 16 greedy tokens, and batched, chunked,
            prefix-cached and preempted runs equal to one request at a time
            (test/generate/check_generate.py);
  cuda      from --gpu-log, the output of test/gpu/run-all.sh on the GPU machine: fp32 and bf16
            goldens and greedy generate (`-` when the log has no line for the model).
A failing column shows the first error line, shortened. Prints the table too.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from families import FAMILIES  # noqa: E402

MODELS = os.path.join(REPO, "test", "models")


def first_error(text):
    """The first diagnostic of a tool's output ('error: ...'), else its first FAIL line."""
    lines = text.splitlines()
    found = next((l for l in lines if "error: " in l), None) or \
        next((l for l in lines if l.startswith("FAIL")), None) or (lines[-1] if lines else "failed")
    found = re.sub(r"^.*?error: ", "", found).replace("exec lowering: ", "")
    return found[:110] + ("…" if len(found) > 110 else "")


def run(cmd, timeout=600):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def committed(name):
    """test/models/tiny-NAME or test/e2e/models/tiny-NAME (with - for _), if committed."""
    for base in (os.path.join(MODELS, f"tiny-{name}"),
                 os.path.join(REPO, "test", "e2e", "models", f"tiny-{name.replace('_', '-')}")):
        if os.path.exists(base + ".onnx") and os.path.exists(base + ".greedy.json"):
            return base
    return None


def model_files(name, scratch):
    base = committed(name)
    if base is None:
        code, out = run([sys.executable, os.path.join(HERE, "make_family_model.py"), name, "--out", scratch])
        if code != 0:
            return None, "export: " + first_error(out)
        base = os.path.join(scratch, f"tiny-{name}")
    return base, None


def gpu_status(logs, name):
    """'ok' / the failure / '-' for tiny-NAME in run-all.sh's outputs: the last log that has
    lines for the model decides (a later run of the model supersedes an earlier one)."""
    models = {f"tiny-{name}", f"tiny-{name.replace('_', '-')}"}  # test/e2e/models spells it with -
    for log in reversed(logs):
        # run-all.sh with model names ends "gpu tests: P passed, F failed (models: a b ...)".
        summary = re.search(r"^gpu tests: \d+ passed, (\d+) failed \(models: ([^)]*)\)", log, re.M)
        if summary and models & set(summary.group(2).split()) and summary.group(1) == "0":
            return "ok"
        lines = [l for l in log.splitlines()
                 if any(m + "." in l or m + " " in l or m + ".onnx" in l for m in models)]
        if lines:
            failed = [l for l in lines if l.startswith("FAIL")]
            return "fail: " + failed[0][:100] if failed else "ok"
    return "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--gpu-log", action="append", default=[],
                    help="run-all.sh output; several: later ones supersede earlier ones per model")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "model-coverage.md"))
    a = ap.parse_args()
    gpu_logs = [open(path).read() for path in a.gpu_log]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, (_, features) in FAMILIES.items():
            base, error = model_files(name, scratch)
            cells = {"check": "-", "fwd": "-", "gen": "-"}
            if error:
                cells["check"] = error
            else:
                code, out = run([a.infer_compile, base + ".onnx", "--check"])
                cells["check"] = "ok" if code == 0 else first_error(out)
                if code == 0:
                    fails = []
                    for i in (0, 1):
                        code, out = run([sys.executable, os.path.join(REPO, "test", "runtime", "check_forward.py"),
                                         "--infer-compile", a.infer_compile, "--infer-run", a.infer_run,
                                         "--model", base + ".onnx", "--input", f"{base}.in{i}.npy",
                                         "--golden", f"{base}.out{i}.npy", "--atol", "1e-4"])
                        if code != 0:
                            fails.append(first_error(out))
                    cells["fwd"] = "ok" if not fails else fails[0]
                    if not fails:
                        code, out = run([sys.executable, os.path.join(REPO, "test", "generate", "check_generate.py"),
                                         "--infer-compile", a.infer_compile, "--infer-run", a.infer_run,
                                         "--model", base + ".onnx", "--greedy", base + ".greedy.json",
                                         "--inputs", base + ".in0.npy", base + ".in1.npy"])
                        cells["gen"] = "ok" if code == 0 else first_error(out)
            cuda = gpu_status(gpu_logs, name)
            rows.append((name, features, committed(name) is not None, cells, cuda))
            print(f"{name}: {cells} cuda {rows[-1][4]}", flush=True)
    served = sum(1 for r in rows if r[3]["gen"] == "ok")
    lines = ["# Model coverage", "",
             "Generated by `test/families/coverage.py` (do not edit by hand): each Hugging Face decoder",
             "family of `test/families/families.py` as a tiny random-weight model with the family's",
             "features on. `check`: `infer-compile --check`; `cpu fwd`: logits within 1e-4 of PyTorch on",
             "both golden inputs; `cpu gen`: HF's greedy tokens and batched/chunked/prefix/preempted runs",
             "equal to single ones; `cuda`: fp32 and bf16 goldens and greedy generate in",
             "`test/gpu/run-all.sh` (`-`: not run). `in CI`: the model is committed (test/models,",
             "test/e2e/models) and runs in the README's test command.", "",
             f"{served} of {len(rows)} families serve end to end on the cpu backend.", "",
             "| family | features | in CI | check | cpu fwd | cpu gen | cuda |",
             "|---|---|---|---|---|---|---|"]
    for name, features, in_ci, cells, cuda in rows:
        esc = [c.replace("|", "\\|") for c in (cells["check"], cells["fwd"], cells["gen"], cuda)]
        lines.append(f"| {name} | {features} | {'yes' if in_ci else 'no'} | " + " | ".join(esc) + " |")
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {a.out}: {served} of {len(rows)} families serve on cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
