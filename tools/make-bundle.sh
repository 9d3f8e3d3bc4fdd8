#!/usr/bin/env bash
# Builds the relocatable bundle of infer-compile, infer-opt and infer-run for a
# machine without MLIR/LLVM (the GPU machine: Ubuntu 24.04). See docs/bundle.md.
#
#   tools/make-bundle.sh [OUTDIR]        (default OUTDIR: build-bundle)
#
# Configures build-bundle/ (or $INFER_BUNDLE_BUILD_DIR) with INFER_STATIC_LLVM=ON
# (static LLVM components instead of libLLVM.so), builds the three tools under
# the shared build lock, installs them stripped into OUTDIR/infer-bundle/bin
# (rpath $ORIGIN/../lib), copies the shared libraries they need that a stock
# Ubuntu 24.04 lacks (protobuf, onnx, onnx_proto, xxhash) into
# OUTDIR/infer-bundle/lib, checks the result with `env -i` runs and ldd, and
# writes OUTDIR/infer-bundle.tar.xz.
#
# Environment: INFER_BUNDLE_BUILD_DIR (build dir), INFER_BUNDLE_JOBS (ninja -j,
# default 2), INFER_BUILD_LOCK (default /tmp/infer-build.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

outdir=$(mkdir -p "${1:-build-bundle}" && cd "${1:-build-bundle}" && pwd)
build_dir="${INFER_BUNDLE_BUILD_DIR:-build-bundle}"
jobs="${INFER_BUNDLE_JOBS:-2}"
lock="${INFER_BUILD_LOCK:-/tmp/infer-build.lock}"
stage="$outdir/infer-bundle"
tarball="$outdir/infer-bundle.tar.xz"

# cuda_libs, system_libs, copy_needed_libs: what the bundle carries.
. "$root/tools/bundle-libs.sh"

if ! command -v patchelf >/dev/null; then
  echo "make-bundle: installing patchelf" >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y -q patchelf >/dev/null; else sudo apt-get install -y -q patchelf >/dev/null; fi
fi

# 1. Configure and build the static-LLVM configuration (its own build dir).
flock "$lock" bash -c '
  set -euo pipefail
  if [ ! -f "$1/build.ninja" ]; then
    cmake -G Ninja -S . -B "$1" -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DINFER_STATIC_LLVM=ON
  fi
  ninja -C "$1" -j "$2" infer-compile infer-opt infer-run infer
' _ "$build_dir" "$jobs"
grep -q '^INFER_STATIC_LLVM:BOOL=ON' "$build_dir/CMakeCache.txt" ||
  { echo "make-bundle: $build_dir is not configured with INFER_STATIC_LLVM=ON" >&2; exit 1; }

# 2. Install the tools (stripped; rpath $ORIGIN/../lib comes from CMake).
rm -rf "$stage" "$tarball"
cmake --install "$build_dir" --component infer-bundle --prefix "$stage" --strip >/dev/null
mkdir -p "$stage/lib"

# 3. Copy the non-system shared libraries.
copy_needed_libs "$stage/lib" "$stage"/bin/* "$stage"/lib/libinfer.so
for lib in "$stage"/lib/*; do
  chmod 0755 "$lib"
  strip --strip-unneeded "$lib"
  patchelf --set-rpath '$ORIGIN' "$lib"
done

# 4. Check: every binary's runpath, ldd (only system libraries and lib/), and
#    runs with an empty environment.
for bin in "$stage"/bin/*; do
  readelf -d "$bin" | grep -q 'R.*PATH.*\[\$ORIGIN/\.\./lib' ||
    { echo "make-bundle: $bin lacks rpath \$ORIGIN/../lib" >&2; exit 1; }
done
for f in "$stage"/bin/* "$stage"/lib/*; do
  ldd "$f" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
    [[ "$soname" =~ $system_libs ]] && continue
    case "$(realpath "$path")" in
      "$stage"/lib/*) ;;
      /usr/local/cuda*) [[ "$soname" =~ $cuda_libs ]] || exit 1 ;;
      *) echo "make-bundle: $f resolves $soname to $path, outside the bundle" >&2; exit 1 ;;
    esac
  done
done
env -i "$stage/bin/infer-compile" --version
env -i "$stage/bin/infer-opt" --version | head -2 >/dev/null
model="$root/test/models/tiny-llama.onnx"
if [ -f "$model" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  env -i "$stage/bin/infer-compile" "$model" --emit=optimized > "$tmp/opt.mlir"
  env -i "$stage/bin/infer-compile" "$model" -o "$tmp/tiny-llama.infer"
  env -i "$stage/bin/infer-run" "$tmp/tiny-llama.infer" info > "$tmp/info.txt"
  echo "make-bundle: smoke test on tiny-llama.onnx passed" \
       "($(grep -c 'graph\.' "$tmp/opt.mlir") graph ops, artifact $(stat -c %s "$tmp/tiny-llama.infer") bytes)"
fi

# 5. Describe and pack.
{
  echo "infer bundle: infer-compile, infer-opt, infer-run (docs/bundle.md)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (modified)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "needs from the system: glibc >= 2.36, libstdc++ (GCC >= 12), libgcc_s, zlib"
  echo "files:"
  (cd "$stage" && find bin lib -type f | sort | xargs ls -l | awk '{printf "  %-32s %10d\n", $9, $5}')
} > "$stage/BUNDLE.txt"
tar -C "$outdir" --owner=0 --group=0 --numeric-owner --sort=name \
  -cf - infer-bundle | xz -9 -T"$jobs" > "$tarball"
echo "make-bundle: $tarball: $(du -b "$tarball" | cut -f1) bytes" \
     "($(du -sb "$stage" | cut -f1) bytes unpacked)"
