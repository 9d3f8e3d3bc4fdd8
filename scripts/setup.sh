#!/usr/bin/env bash
# Installs what infer needs on Debian 12, idempotently: MLIR/LLVM 22, libonnx,
# protobuf, CLI11, nlohmann-json, xtensor (npy), xxHash, PCRE2 and utf8proc (the tokenizer),
# cpp-httplib (infer-run serve), ninja; clang-14 with libFuzzer for the fuzz targets; numpy for the demo and bench scripts, the test oracles tokenizers (HF) and jinja2, and the official openai client and prometheus_client's parser (the server's tests), onnx, onnxruntime, onnx_ir (which onnxruntime 1.32's MatMulNBits quantizer imports) and ml_dtypes (the quantization tests' reference).
set -euo pipefail

packages=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libonnx-dev libprotobuf-dev
          protobuf-compiler ninja-build cmake g++ libcli11-dev nlohmann-json3-dev xtensor-dev libgtest-dev
          libgmock-dev libxxhash-dev libpcre2-dev libutf8proc-dev libcpp-httplib-dev python3 xz-utils
          clang-14 libclang-rt-14-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
python_packages=(numpy tokenizers jinja2 openai prometheus_client onnx onnxruntime onnx_ir ml_dtypes)
missing_python=()
for package in "${python_packages[@]}"; do
  python3 -c "import $package" 2>/dev/null || missing_python+=("$package")
done
if ((${#missing_python[@]})); then
  echo "setup: pip installing ${missing_python[*]}"
  python3 -m pip install -q "${missing_python[@]}"
fi
