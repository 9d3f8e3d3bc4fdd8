#!/usr/bin/env bash
# `pip install ./python` into a fresh virtual environment, as a user would:
# the build runs the repository's CMake with INFER_RUNTIME_ONLY (no MLIR) and
# puts libinfer.so inside the package; then the installed package generates
# text from the bundled tiny-llama and `python -m infer.export --help` answers.
#   check_pip_install.sh PYTHON REPO INFER_COMPILE
set -euo pipefail
python="$1" repo="$2" infer_compile="$3"
unset PYTHONPATH INFER_LIBRARY  # the installed package, not the checkout, must answer
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
# A copy of the package folder would lose the repository around it (the
# runtime's sources): install from the checkout itself.
"$work/venv/bin/python" -m pip install -q "$repo/python" 2>&1 | tail -20
"$infer_compile" "$repo/models/tiny-llama/tiny-llama.onnx" -o "$work/tiny.infer" --target cpu >/dev/null
cd "$work"  # not the checkout: the installed package must be the one imported
"$work/venv/bin/python" - "$work/tiny.infer" <<'PY'
import os, sys
import infer
assert os.path.dirname(infer.__file__).startswith(sys.prefix), infer.__file__
with infer.Engine(sys.argv[1], device="cpu") as engine:
    out = engine.generate(["Hello"], max_tokens=6, ignore_eos=True)[0]
    assert len(out.token_ids) == 6 and isinstance(out.text, str), out
    assert engine.detokenize(out.token_ids) == out.text
print("pip install ./python: the installed package generated", out.token_ids, repr(out.text))
PY
"$work/venv/bin/python" -m infer.export --help | head -3
