//===- infer-run.cpp - the infer runtime's command line -------------------===//
//
//   infer-run MODEL.infer info      the manifest's summary
//
// Links only the runtime libraries (no LLVM, no MLIR: test/artifact/no-llvm.sh).
// Later issues add forward, generate and bench.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/base/Status.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <map>
#include <string>

namespace {

using infer::artifact::ArtifactReader;
namespace art = infer::artifact;

const char *targetName(art::Target target) {
  switch (target) {
  case art::TARGET_CPU:
    return "cpu";
  case art::TARGET_CUDA:
    return "cuda";
  default:
    return "unspecified";
  }
}

std::string describeSpec(const art::TensorSpec &spec) {
  std::string text = spec.name() + ": " + art::elementTypeName(spec.element_type()) + "[";
  for (int i = 0; i < spec.dims_size(); ++i) {
    if (i)
      text += ", ";
    const art::Dim &dim = spec.dims(i);
    text += dim.kind_case() == art::Dim::kSize ? std::to_string(dim.size()) : dim.symbol();
  }
  return text + "]";
}

std::string bound(int64_t value) { return value ? std::to_string(value) : "not given"; }

std::string affine(const art::Affine &value) {
  if (value.a() == 0)
    return std::to_string(value.b());
  return std::to_string(value.a()) + "*T" + (value.b() ? "+" + std::to_string(value.b()) : "");
}

std::string lower(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// The exec program's summary (the reader checked its structure).
void printExecProgram(const art::ExecProgram &program) {
  const art::Arena &arena = program.arena();
  int64_t bound = arena.bound_tokens();
  long long arenaBytes = static_cast<long long>(arena.size().a() * bound + arena.size().b());
  std::printf("exec program: %s, arena %lld bytes (%.1f MB) at %lld tokens (peak live %lld), "
              "%d buffers, %d constants\n",
              program.entry().c_str(), arenaBytes, arenaBytes / 1e6, static_cast<long long>(bound),
              static_cast<long long>(arena.peak_live_bytes()), program.buffers_size(),
              program.constants_size());
  std::map<int, int> byKind;
  for (const art::Launch &launch : program.launches())
    ++byKind[launch.kind()];
  std::string kinds;
  for (auto [kind, count] : byKind)
    kinds += (kinds.empty() ? "" : ", ") +
             lower(art::Launch::Kind_Name(static_cast<art::Launch::Kind>(kind))) + " " +
             std::to_string(count);
  std::printf("  launches: %d (%s)\n", program.launches_size(), kinds.c_str());
  auto binding = [&](const char *what, const art::Binding &b) {
    const art::Buffer &buffer = program.buffers(static_cast<int>(b.buffer()));
    std::printf("  %s %s: buffer %u, %s at offset %s, %s bytes\n", what, b.name().c_str(),
                b.buffer(), art::elementTypeName(buffer.element_type()),
                affine(buffer.offset()).c_str(), affine(buffer.size()).c_str());
  };
  for (const art::Binding &input : program.inputs())
    binding("input ", input);
  for (const art::Binding &output : program.outputs())
    binding("output", output);
}

infer::Status printInfo(const std::string &path) {
  ASSIGN_OR_RETURN(auto reader, ArtifactReader::open(path));
  const art::Manifest &manifest = reader->manifest();
  const art::ModelInfo &model = manifest.model();
  std::printf("artifact: %s (format version %u, %llu bytes)\n", path.c_str(),
              reader->header().version, static_cast<unsigned long long>(reader->fileSize()));
  std::printf("model: %s (opset %lld, entry %s)\n", model.name().c_str(),
              static_cast<long long>(model.opset()), model.entry().c_str());
  for (const art::TensorSpec &input : model.inputs())
    std::printf("  input  %s\n", describeSpec(input).c_str());
  for (const art::TensorSpec &output : model.outputs())
    std::printf("  output %s\n", describeSpec(output).c_str());

  uint64_t weightBytes = 0;
  int packed = 0, converted = 0;
  for (const art::Weight &weight : manifest.weights()) {
    weightBytes += weight.size();
    packed += weight.packed_from_size() > 0;
    converted += weight.source_element_type() != art::ELEMENT_TYPE_UNSPECIFIED;
  }
  std::printf("weights: %d (%d packed, %d converted), %llu bytes (%.1f MB), section %llu bytes\n",
              manifest.weights_size(), packed, converted,
              static_cast<unsigned long long>(weightBytes), weightBytes / 1e6,
              static_cast<unsigned long long>(manifest.weight_section_size()));

  const art::CompileOptions &options = manifest.options();
  std::printf("options: target %s, dtype %s, max batch tokens %s, max seq len %s, "
              "kv block size %s\n",
              targetName(options.target()),
              options.dtype().empty() ? "as exported" : options.dtype().c_str(),
              bound(options.max_batch_tokens()).c_str(), bound(options.max_seq_len()).c_str(),
              bound(options.kv_block_size()).c_str());
  std::string tools;
  for (const art::ToolVersion &tool : manifest.tools())
    tools += (tools.empty() ? "" : ", ") + tool.name() + " " + tool.version();
  std::printf("versions: %s\n", tools.c_str());
  if (!manifest.has_exec()) {
    std::printf("exec program: none (this artifact can be inspected, not run)\n");
    return infer::okStatus();
  }
  printExecProgram(manifest.exec());
  return infer::okStatus();
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"infer-run: loads a model.infer artifact and runs it"};
  std::string artifact;
  std::string command;
  app.add_option("artifact", artifact, "MODEL.infer, written by infer-compile -o")->required();
  app.add_option("command", command, "what to do: info (print the manifest's summary)")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    return app.exit(error);
  }
  infer::Status status;
  if (command == "info") {
    status = printInfo(artifact);
  } else {
    std::fprintf(stderr, "error: unknown command '%s' (this build knows: info)\n", command.c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
