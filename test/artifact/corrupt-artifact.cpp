//===- corrupt-artifact.cpp - makes bad artifacts for the reader's tests --===//
//
//   corrupt-artifact IN.infer OUT.infer MUTATION [ARG]
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
//   reserved-bytes     a reserved header byte set (header checksum fixed up)
//   weights-overlap    the weight section's offset moved onto the manifest (checksum fixed up)
//   padding-nonzero    a byte of the padding after the manifest set (checksums fixed up)
//   kv-block-size      the KV cache layout's block_size set to -1 (checksums fixed up)
//   kv-num-layers      the KV cache layout's num_layers set to 2^30 (checksums fixed up)
//   kv-bytes-per-token the KV cache layout's bytes_per_token doubled (checksums fixed up)
//   kv-layer           a step KV_ATTENTION launch's layer set to 7 (checksums fixed up)
//   step-no-kv         the KV cache layout removed, the step program kept (checksums fixed up)
//   arena-bound        the exec arena's bound_tokens set to 2^40 (checksums fixed up)
//   gemm-k             the first GEMM launch's k set to -5 (checksums fixed up)
//   norm-epsilon       the first RMS norm's epsilon set to NaN (checksums fixed up)
//   output-dim         the model output's last dim set to 2^40 (checksums fixed up)
//   stop-token         the text info's first stop token id set to -3 (checksums fixed up)
//   nan-row ID|all     the embedding table's row ID (every row) set to NaN, an f32 table
//                      (checksum fixed up)
//
// Mutations that fix up checksums test the checks behind them.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFormat.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

using namespace infer::artifact;

namespace {


/// Re-encodes the header of `bytes` with `header` and a fresh payload hash.
void rehash(std::vector<unsigned char> &bytes, Header header) {
  header.payloadHash =
      payloadHash(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize, header.flags);
  encodeHeader(header, bytes.data());
}

/// Sets `name`'s integer attribute of `launch` (adding it when absent).
void setIntAttribute(Launch &launch, const std::string &name, int64_t value) {
  for (Attribute &attribute : *launch.mutable_attributes())
    if (attribute.name() == name) {
      attribute.set_int_value(value);
      return;
    }
  Attribute *attribute = launch.add_attributes();
  attribute->set_name(name);
  attribute->set_int_value(value);
}

/// The first launch of `kind` in `program`, or nullptr.
Launch *firstLaunch(ExecProgram &program, Launch::Kind kind) {
  for (Launch &launch : *program.mutable_launches())
    if (launch.kind() == kind)
      return &launch;
  return nullptr;
}

/// Rewrites a field of the manifest for the manifest-field mutations; false
/// when the artifact has nothing to change (e.g. no step program).
bool mutateField(const std::string &mutation, Manifest &manifest) {
  if (mutation == "kv-block-size" || mutation == "kv-num-layers" ||
      mutation == "kv-bytes-per-token") {
    if (!manifest.has_kv_cache())
      return false;
    KvCacheLayout &kv = *manifest.mutable_kv_cache();
    if (mutation == "kv-block-size")
      kv.set_block_size(-1);
    else if (mutation == "kv-num-layers")
      kv.set_num_layers(int64_t(1) << 30);
    else
      kv.set_bytes_per_token(2 * kv.bytes_per_token());
    return true;
  }
  if (mutation == "kv-layer") {
    Launch *attention =
        manifest.has_step() ? firstLaunch(*manifest.mutable_step(), Launch::KV_ATTENTION) : nullptr;
    if (!attention)
      return false;
    setIntAttribute(*attention, "layer", 7);
    return true;
  }
  if (mutation == "step-no-kv") {
    if (!manifest.has_step())
      return false;
    manifest.clear_kv_cache();
    return true;
  }
  if (mutation == "arena-bound") {
    manifest.mutable_exec()->mutable_arena()->set_bound_tokens(int64_t(1) << 40);
    return true;
  }
  if (mutation == "gemm-k" || mutation == "norm-epsilon") {
    Launch *launch = firstLaunch(*manifest.mutable_exec(),
                                 mutation == "gemm-k" ? Launch::GEMM : Launch::RMS_NORM);
    if (!launch)
      return false;
    if (mutation == "gemm-k") {
      setIntAttribute(*launch, "k", -5);
      return true;
    }
    for (Attribute &attribute : *launch->mutable_attributes())
      if (attribute.name() == "epsilon")
        attribute.set_float_value(std::numeric_limits<double>::quiet_NaN());
    return true;
  }
  if (mutation == "output-dim") {
    TensorSpec &output = *manifest.mutable_model()->mutable_outputs(0);
    output.mutable_dims(output.dims_size() - 1)->set_size(int64_t(1) << 40);
    return true;
  }
  if (mutation == "stop-token") {
    if (!manifest.has_text() || manifest.text().stop_token_ids_size() == 0)
      return false;
    manifest.mutable_text()->set_stop_token_ids(0, -3);
    return true;
  }
  return false;
}

bool isFieldMutation(const std::string &mutation) {
  for (const char *name :
       {"kv-block-size", "kv-num-layers", "kv-bytes-per-token", "kv-layer", "step-no-kv",
        "arena-bound", "gemm-k", "norm-epsilon", "output-dim", "stop-token"})
    if (mutation == name)
      return true;
  return false;
}

/// Sets row `row` of the exec program's embedding table (f32) to NaN.
bool nanRow(std::vector<unsigned char> &bytes, const Header &header, const Manifest &manifest,
            int64_t row) {
  for (const Launch &launch : manifest.exec().launches()) {
    if (launch.kind() != Launch::EMBEDDING)
      continue;
    for (const Operand &operand : launch.operands()) {
      if (operand.role() != ROLE_TABLE || !operand.ref().has_weight())
        continue;
      const Weight &table = manifest.weights(static_cast<int>(operand.ref().weight()));
      int64_t hidden = intAttribute(launch, "hidden", 0);
      if (table.element_type() != ELEMENT_TYPE_F32 || hidden <= 0 ||
          uint64_t(row + 1) * uint64_t(hidden) * 4 > table.size())
        return false;
      int64_t first = row < 0 ? 0 : row;
      int64_t last = row < 0 ? int64_t(table.size() / 4 / uint64_t(hidden)) - 1 : row;
      float nan = std::numeric_limits<float>::quiet_NaN();
      for (int64_t r = first; r <= last; ++r)
        for (int64_t h = 0; h < hidden; ++h)
          std::memcpy(bytes.data() + header.weightsOffset + table.offset() + (r * hidden + h) * 4,
                      &nan, 4);
      return true;
    }
  }
  return false;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: corrupt-artifact IN.infer OUT.infer MUTATION [ARG]\n");
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
  } else if (mutation == "unknown-flags") {
    header.flags |= 2;
    encodeHeader(header, bytes.data());
  } else if (mutation == "whole-stream-hash") { // as written before kFlagChunkedPayloadHash
    header.flags = 0;
    rehash(bytes, header);
  } else if (mutation == "reserved-bytes") {
    bytes[100] = 0x01;
    uint64_t hash = hash64(bytes.data(), 120);
    for (int i = 0; i < 8; ++i)
      bytes[120 + i] = static_cast<unsigned char>(hash >> (8 * i));
  } else if (mutation == "weights-overlap") {
    header.weightsOffset = 0;
    encodeHeader(header, bytes.data());
  } else if (mutation == "padding-nonzero") {
    if (header.manifestOffset + header.manifestSize >= header.weightsOffset) {
      std::fprintf(stderr, "corrupt-artifact: no padding after the manifest\n");
      return 1;
    }
    bytes[header.weightsOffset - 1] = 0x5a;
    rehash(bytes, header);
  } else if (mutation == "nan-row") {
    Manifest manifest;
    manifest.ParseFromArray(bytes.data() + header.manifestOffset,
                            static_cast<int>(header.manifestSize));
    int64_t row =
        argc == 5 && std::string(argv[4]) == "all" ? -1 : (argc == 5 ? std::atoll(argv[4]) : -2);
    if (row < -1 || !nanRow(bytes, header, manifest, row)) {
      std::fprintf(stderr, "corrupt-artifact: nan-row needs a row of an f32 embedding table\n");
      return 1;
    }
    rehash(bytes, header);
  } else if (mutation == "manifest-past-eof") {
    header.manifestSize = bytes.size();
    encodeHeader(header, bytes.data());
  } else if (mutation == "weight-past-eof" || mutation == "bad-manifest" ||
             mutation == "exec-buffer-past-arena" || mutation == "exec-bad-weight" ||
             mutation == "cuda-launch-records" || mutation == "cuda-empty-cubin" ||
             mutation == "cuda-gemv-grid" || isFieldMutation(mutation)) {
    std::string manifestBytes;
    if (mutation == "bad-manifest") {
      manifestBytes.assign(header.manifestSize, '\xff');
    } else {
      Manifest manifest;
      manifest.ParseFromArray(bytes.data() + header.manifestOffset,
                              static_cast<int>(header.manifestSize));
      if (isFieldMutation(mutation)) {
        if (!mutateField(mutation, manifest)) {
          std::fprintf(stderr, "corrupt-artifact: the artifact has nothing for '%s' to change\n",
                       mutation.c_str());
          return 1;
        }
      } else if (mutation == "cuda-launch-records") {
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
