# Sourced by tools/make-bundle.sh and tools/make-fuzz-bundle.sh: which shared libraries a
# relocatable bundle carries.
#
# Libraries every Ubuntu 24.04 / Debian 12 system has (glibc, libstdc++, libgcc, zlib) stay out of
# a bundle. The CUDA toolkit's (NVRTC for infer-compile) come from the GPU machine's
# /usr/local/cuda (CUDA 13 there too), found through the rpath; infer-run dlopens the driver and
# cuBLASLt itself. Everything else the binaries need goes in.
cuda_libs='^(libnvrtc\.so\..*|libnvrtc-builtins\.so\..*|libcublasLt\.so\..*|libcudart\.so\..*)$'
system_libs='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|librt\.so\.1|libpthread\.so\.0|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1)$'

# copy_needed_libs DEST BIN...: the shared libraries BIN need (ldd lists the transitive
# closure) that are neither system nor CUDA libraries, copied into DEST once each; a missing one
# is an error.
copy_needed_libs() {
  local dest=$1 bin soname path; shift
  for bin in "$@"; do
    ldd "$bin" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
      [[ "$soname" =~ $system_libs ]] && continue
      [[ "$soname" =~ $cuda_libs ]] && continue
      if [ "$path" = "not" ] || [ ! -f "$path" ]; then
        echo "bundle: $bin needs $soname, which is not found" >&2; exit 1
      fi
      [ -f "$dest/$soname" ] || cp -L "$path" "$dest/$soname"
    done || return 1
  done
}
