//===- corrupt-artifact.cpp - makes bad artifacts for the reader's tests --===//
//
//   corrupt-artifact IN.infer OUT.infer MUTATION
//
// MUTATION is one of
//   truncate           drop the last 100 bytes
//   truncate-header    keep only the first 60 bytes
//   flip-header        flip one bit in the header's reserved bytes
//   flip-payload       flip one bit in the weight section (checksum error)
//   flip-manifest      flip one bit in the manifest (checksum error)
//   magic              overwrite the magic
//   version            set the format version to 99 (header checksum fixed up)
//   manifest-past-eof  manifest size past the end of the file (checksums fixed up)
//   weight-past-eof    weight 0's offset past the weight section (checksums fixed up)
//   bad-manifest       garbage manifest bytes (checksums fixed up)
//   exec-buffer-past-arena  exec buffer 0 moved past the arena's end (checksums fixed up)
//   exec-bad-weight    the exec program's first weight reference out of range (checksums fixed up)
//   cuda-launch-records  the GPU code's last launch record dropped (checksums fixed up)
//   cuda-empty-cubin   the GPU code's first extra cubin emptied (checksums fixed up)
//   cuda-gemv-grid     the first GEMV record's k splits made to depend on T (checksums fixed up)
//
// Mutations that fix up checksums test the checks behind them.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFormat.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace infer::artifact;

namespace {


/// Re-encodes the header of `bytes` with `header` and a fresh payload hash.
void rehash(std::vector<unsigned char> &bytes, Header header) {
  header.payloadHash = hash64(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  encodeHeader(header, bytes.data());
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: corrupt-artifact IN.infer OUT.infer MUTATION\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  auto decoded = decodeHeader(bytes.data(), bytes.size());
  if (!decoded.ok()) {
    std::fprintf(stderr, "corrupt-artifact: %s\n", decoded.status().message().c_str());
    return 1;
  }
  Header header = *decoded;
  std::string mutation = argv[3];
  if (mutation == "truncate") {
    bytes.resize(bytes.size() - 100);
  } else if (mutation == "truncate-header") {
    bytes.resize(60);
  } else if (mutation == "flip-header") {
    bytes[80] ^= 0x04;
  } else if (mutation == "flip-payload") {
    bytes[header.weightsOffset + 5] ^= 0x10;
  } else if (mutation == "flip-manifest") {
    bytes[header.manifestOffset + 3] ^= 0x01;
  } else if (mutation == "magic") {
    std::memcpy(bytes.data(), "GGUF\0\0\0\0", 8);
  } else if (mutation == "version") {
    header.version = 99;
    encodeHeader(header, bytes.data());
  } else if (mutation == "manifest-past-eof") {
    header.manifestSize = bytes.size();
    encodeHeader(header, bytes.data());
  } else if (mutation == "weight-past-eof" || mutation == "bad-manifest" ||
             mutation == "exec-buffer-past-arena" || mutation == "exec-bad-weight" ||
             mutation == "cuda-launch-records" || mutation == "cuda-empty-cubin" ||
             mutation == "cuda-gemv-grid") {
    std::string manifestBytes;
    if (mutation == "bad-manifest") {
      manifestBytes.assign(header.manifestSize, '\xff');
    } else {
      Manifest manifest;
      manifest.ParseFromArray(bytes.data() + header.manifestOffset,
                              static_cast<int>(header.manifestSize));
      if (mutation == "cuda-launch-records") {
        manifest.mutable_cuda()->mutable_launches()->RemoveLast();
      } else if (mutation == "cuda-empty-cubin") {
        if (manifest.cuda().extra_cubins_size() == 0) {
          std::fprintf(stderr, "corrupt-artifact: no extra cubin to empty\n");
          return 1;
        }
        manifest.mutable_cuda()->mutable_extra_cubins(0)->clear_cubin();
      } else if (mutation == "cuda-gemv-grid") {
        bool changed = false;
        for (CudaLaunch &launch : *manifest.mutable_cuda()->mutable_launches())
          if (!changed && launch.has_gemv() && launch.gemv().grid_size() > 1) {
            launch.mutable_gemv()->mutable_grid(1)->set_symbol(GridDim::TOKENS);
            changed = true;
          }
        if (!changed) {
          std::fprintf(stderr, "corrupt-artifact: no GEMV record to change\n");
          return 1;
        }
      } else if (mutation == "weight-past-eof") {
        manifest.mutable_weights(0)->set_offset(header.weightsSize + kWeightAlignment);
      } else if (mutation == "exec-buffer-past-arena") {
        ExecProgram *exec = manifest.mutable_exec();
        *exec->mutable_buffers(0)->mutable_offset() = exec->arena().size();
      } else {
        [&] {
          for (Launch &launch : *manifest.mutable_exec()->mutable_launches())
            for (Operand &operand : *launch.mutable_operands())
              if (operand.ref().has_weight()) {
                operand.mutable_ref()->set_weight(9999);
                return;
              }
        }();
      }
      manifestBytes = manifest.SerializeAsString();
    }
    if (kHeaderSize + manifestBytes.size() > header.weightsOffset) {
      std::fprintf(stderr, "corrupt-artifact: the new manifest does not fit\n");
      return 1;
    }
    std::fill(bytes.begin() + kHeaderSize, bytes.begin() + header.weightsOffset, 0);
    std::memcpy(bytes.data() + kHeaderSize, manifestBytes.data(), manifestBytes.size());
    header.manifestSize = manifestBytes.size();
    rehash(bytes, header);
  } else {
    std::fprintf(stderr, "corrupt-artifact: unknown mutation '%s'\n", mutation.c_str());
    return 2;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return out ? 0 : 1;
}
