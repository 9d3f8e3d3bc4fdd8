//===- infer-run.cpp - the infer runtime's command line -------------------===//
//
//   infer-run MODEL.infer info      the manifest's summary
//   infer-run MODEL.infer forward --input input_ids=IN.npy --output logits=OUT.npy
//             [--device cpu|cuda] [--time N]   one forward over a [batch, seq] batch
//   infer-run MODEL.infer generate --prompt "text" [--chat [--system TEXT]] | --prompt-ids 1,2,3
//             [--max-new-tokens N] [--stop STR ...] [--ignore-eos] [--output text|json]
//             [--greedy | --temperature T --top-k K --top-p P --seed S] [--device cpu|cuda]
//             [--kv-blocks N] [--max-batch-tokens N] [--max-sequences N]
//             decoding over the step program (tools/infer-run/Generate.cpp)
//   infer-run tokenize --tokenizer PATH [--decode]   (tools/infer-run/Tokenize.cpp)
//   infer-run MODEL.infer serve [--host H] [--port P] [--max-queue N] [--api-key KEY]
//             [--drain-timeout S] [--served-model-name NAME] [--device cpu|cuda]
//             [--max-sequences N] [--kv-blocks N] [--max-batch-tokens N]
//             the OpenAI-compatible HTTP server (tools/infer-run/Serve.cpp, docs/server.md)
//   infer-run MODEL.infer bench --requests N --input-len I --output-len O [--batch B | --rate R]
//             [--prompt-seed S] [--device cpu|cuda] [--kv-blocks N] [--max-batch-tokens N]
//             serving throughput and latency (tools/infer-run/Bench.cpp)
//
// Links only the runtime libraries (no LLVM, no MLIR: test/artifact/no-llvm.sh).
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/artifact/TuningRecords.h"
#include "runtime/base/Status.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/cuda/abi/GemvGeometry.h"
#include "runtime/npy/Npy.h"
#include "runtime/serving/TextModel.h"
#include "tools/infer-run/Bench.h"
#include "tools/infer-run/Generate.h"
#include "tools/infer-run/Output.h"
#include "tools/infer-run/Serve.h"
#include "tools/infer-run/Tokenize.h"
#ifdef INFER_HAVE_CUDA
#include "runtime/cuda/CudaBackend.h"
#endif

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

/// `symbol` is T, or R for a step program's per-logit-row sizes.
std::string affine(const art::Affine &value, const char *symbol = "T") {
  if (value.a() == 0)
    return std::to_string(value.b());
  return std::to_string(value.a()) + "*" + symbol +
         (value.b() ? "+" + std::to_string(value.b()) : "");
}

/// The exec program's summary (the reader checked its structure).
void printExecProgram(const art::ExecProgram &program, const char *what = "exec program") {
  const art::Arena &arena = program.arena();
  int64_t bound = arena.bound_tokens();
  long long arenaBytes = static_cast<long long>(arena.size().a() * bound + arena.size().b());
  std::printf("%s: %s, arena %lld bytes (%.1f MB) at %lld tokens (peak live %lld), "
              "%d buffers, %d constants\n",
              what, program.entry().c_str(), arenaBytes, arenaBytes / 1e6, static_cast<long long>(bound),
              static_cast<long long>(arena.peak_live_bytes()), program.buffers_size(),
              program.constants_size());
  std::map<int, int> byKind;
  for (const art::Launch &launch : program.launches())
    ++byKind[launch.kind()];
  std::string kinds;
  for (auto [kind, count] : byKind)
    kinds += (kinds.empty() ? "" : ", ") +
             art::launchKindName(static_cast<art::Launch::Kind>(kind)) + " " +
             std::to_string(count);
  std::printf("  launches: %d (%s)\n", program.launches_size(), kinds.c_str());
  auto binding = [&](const char *what, const art::Binding &b) {
    const art::Buffer &buffer = program.buffers(static_cast<int>(b.buffer()));
    std::printf("  %s %s: buffer %u, %s at offset %s, %s bytes\n", what, b.name().c_str(),
                b.buffer(), art::elementTypeName(buffer.element_type()),
                affine(buffer.offset()).c_str(),
                affine(buffer.size(), buffer.per_logit_row() ? "R" : "T").c_str());
  };
  for (const art::Binding &input : program.inputs())
    binding("input ", input);
  for (const art::Binding &output : program.outputs())
    binding("output", output);
}

/// The tokenizer and chat template the artifact carries (TextInfo).
infer::Status printText(const art::Manifest &manifest) {
  if (!manifest.has_text()) {
    std::printf("text: none (token ids only; infer-compile reads tokenizer.json beside the "
                "model, or --tokenizer DIR)\n");
    return infer::okStatus();
  }
  const art::TextInfo &text = manifest.text();
  ASSIGN_OR_RETURN(auto model, infer::serving::TextModel::fromArtifact(text));
  std::string stops, sources;
  for (int32_t id : text.stop_token_ids())
    stops += (stops.empty() ? "" : ", ") + std::to_string(id);
  for (const std::string &source : text.sources())
    sources += (sources.empty() ? "" : ", ") + source;
  std::printf("text: tokenizer of %lld tokens (%zu bytes of tokenizer.json), bos '%s', eos '%s', "
              "stop token ids [%s]\n",
              static_cast<long long>(model->tokenizer().vocabSize()), text.tokenizer_json().size(),
              text.bos_token().c_str(), text.eos_token().c_str(), stops.c_str());
  std::printf("  chat template: %s\n",
              text.chat_template().empty()
                  ? "none"
                  : (std::to_string(text.chat_template().size()) + " bytes of Jinja").c_str());
  std::printf("  from: %s\n", sources.c_str());
  return infer::okStatus();
}

infer::Status printInfo(const std::string &path, bool showSource) {
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
  int packed = 0, transposed = 0, converted = 0;
  for (const art::Weight &weight : manifest.weights()) {
    weightBytes += weight.size();
    packed += weight.packed_from_size() > 0;
    transposed += weight.transposed();
    converted += weight.source_element_type() != art::ELEMENT_TYPE_UNSPECIFIED;
  }
  std::printf("weights: %d (%d packed, %d transposed, %d converted), %llu bytes (%.1f MB), "
              "section %llu bytes\n",
              manifest.weights_size(), packed, transposed, converted,
              static_cast<unsigned long long>(weightBytes), weightBytes / 1e6,
              static_cast<unsigned long long>(manifest.weight_section_size()));

  const art::CompileOptions &options = manifest.options();
  std::printf("options: target %s, dtype %s, max batch tokens %s, max seq len %s, "
              "kv block size %s%s%s\n",
              targetName(options.target()),
              options.dtype().empty() ? "as exported" : options.dtype().c_str(),
              bound(options.max_batch_tokens()).c_str(), bound(options.max_seq_len()).c_str(),
              bound(options.kv_block_size()).c_str(),
              options.quantize().empty() ? "" : ", quantize ", options.quantize().c_str());
  std::string tools;
  for (const art::ToolVersion &tool : manifest.tools())
    tools += (tools.empty() ? "" : ", ") + tool.name() + " " + tool.version();
  std::printf("versions: %s\n", tools.c_str());
  RETURN_IF_ERROR(printText(manifest));
  if (!manifest.has_exec()) {
    std::printf("exec program: none (this artifact can be inspected, not run)\n");
    return infer::okStatus();
  }
  printExecProgram(manifest.exec());
  if (manifest.has_step()) {
    printExecProgram(manifest.step(), "step program");
    const art::KvCacheLayout &kv = manifest.kv_cache();
    std::printf("  kv cache: %lld layers x %lld kv heads x %lld head dim, %s, %s, block size %lld, "
                "%lld bytes per token, max seq len %lld (%lld blocks per sequence)\n",
                static_cast<long long>(kv.num_layers()), static_cast<long long>(kv.num_kv_heads()),
                static_cast<long long>(kv.head_dim()), art::elementTypeName(kv.element_type()),
                kv.layout().c_str(), static_cast<long long>(kv.block_size()),
                static_cast<long long>(kv.bytes_per_token()), static_cast<long long>(kv.max_seq_len()),
                static_cast<long long>(kv.max_blocks_per_sequence()));
  } else {
    std::printf("step program: none (no generate)\n");
  }
  if (manifest.has_cuda()) {
    const art::CudaModule &cuda = manifest.cuda();
    std::map<std::string, int> distinct;
    int gemms = 0, fp8Gemms = 0;
    std::set<uint32_t> fp8GemmFrom; // the tokens past which each runs its FP8 GEMM
    for (const art::CudaLaunch &launch : cuda.launches()) {
      if (launch.runner() == art::CudaLaunch::CUBLASLT)
        ++gemms;
      else
        ++distinct[launch.function()];
      if (launch.has_prologue())
        ++distinct[launch.prologue().function()];
      if (launch.has_dequantize())
        ++distinct[launch.dequantize().function()];
      if (launch.dequantize().has_prologue())
        ++distinct[launch.dequantize().prologue().function()];
      if (launch.has_fp8_gemm()) {
        ++distinct[launch.fp8_gemm().function()];
        ++fp8Gemms;
        fp8GemmFrom.insert(launch.max_rows());
      }
      for (const art::CudaLaunch &stage : launch.stages())
        ++distinct[stage.function()];
    }
    std::string ptx = cuda.ptx().empty() ? std::string("no PTX")
                                         : cuda.ptx_arch() + " PTX " +
                                               std::to_string(cuda.ptx().size()) + " bytes";
    size_t cubinBytes = cuda.cubin().size();
    for (const art::CudaCubin &extra : cuda.extra_cubins())
      cubinBytes += extra.cubin().size();
    std::printf("cuda: %s cubin %zu bytes in %d module%s, %s; %zu distinct kernels, %d cuBLASLt "
                "GEMMs\n",
                cuda.arch().c_str(), cubinBytes, 1 + cuda.extra_cubins_size(),
                cuda.extra_cubins_size() ? "s" : "", ptx.c_str(), distinct.size(), gemms);
    for (const auto &[function, uses] : distinct)
      std::printf("  kernel %s (%d launches)\n", function.c_str(), uses);
    if (fp8Gemms > 0) {
      std::string past;
      for (uint32_t rows : fp8GemmFrom)
        past += (past.empty() ? "" : " or ") + std::to_string(rows);
      std::printf("  %d quantized GEMMs run steps of more than %s tokens on cuBLASLt's FP8 GEMM\n",
                  fp8Gemms, past.c_str());
    }
    int gemv = 0, folding = 0, rows = 0, rowsFolding = 0, rowsGated = 0, rowsArgmax = 0,
        multiRows = 0,
        mmas = 0, mmaFolding = 0, prefill = 0, rotary = 0, decode = 0;
    uint32_t mmaRowsLeast = 0, mmaRowsMost = 0;
    std::set<int> mmaMinRows;
    std::map<std::string, int> rowKernels, mmaKernels, decodeKernels, qkvDecodeKernels,
        pagedKernels;
    for (const art::CudaLaunch &launch : cuda.step_launches()) {
      gemv += launch.has_gemv();
      folding += launch.gemv().fuses_previous();
      rows += launch.has_gemv_single_row();
      rowsFolding += launch.gemv_single_row().fuses_previous();
      rowsGated += launch.gemv_single_row().fuses_next();
      rowsArgmax += launch.gemv_single_row().folds_argmax();
      if (launch.has_gemv_single_row())
        ++rowKernels[launch.gemv_single_row().function()];
      multiRows += launch.has_gemv_multi_row();
      if (launch.has_gemv_multi_row())
        ++rowKernels[launch.gemv_multi_row().function()];
      if (launch.has_gemv_mma()) {
        const uint32_t most = launch.gemv_mma().max_rows();
        mmaRowsLeast = mmas == 0 ? most : std::min(mmaRowsLeast, most);
        mmaRowsMost = std::max(mmaRowsMost, most);
        mmaMinRows.insert(infer::kernels::gemvMmaMinRows(launch.gemv_mma().min_rows()));
        ++mmas;
        mmaFolding += launch.gemv_mma().fuses_previous();
        ++mmaKernels[launch.gemv_mma().function()];
      }
      prefill += launch.has_prefill();
      rotary += launch.has_fused_prologue();
      decode += launch.has_decode();
      if (launch.has_decode())
        ++decodeKernels[launch.decode().function()];
      if (launch.has_qkv_decode())
        ++qkvDecodeKernels[launch.qkv_decode().function()];
      if (launch.has_prologue())
        ++pagedKernels[launch.function() + " after " + launch.prologue().function()];
    }
    if (cuda.step_launches_size() > 0)
      std::printf("  step: %d GEMMs with a decode GEMV (%d fold the norm or activation before "
                  "them), %d with a batch-1 row GEMV (%d fold, %d write the gated activation "
                  "after them, %d fold the argmax of the logits; %d also in steps of up to %d "
                  "tokens), %d paged attentions with a "
                  "prefill kernel (%d can fold the rotary before them into the KV write, %d "
                  "run it, the KV write and the attention as one kernel in decode steps), "
                  "sampler %s, %s\n",
                  gemv, folding, rows, rowsFolding, rowsGated, rowsArgmax, multiRows,
                  infer::kernels::kGemvRowsMultiRowsRun, prefill, rotary, decode,
                  cuda.sample_function().empty() ? "none (host)" : cuda.sample_function().c_str(),
                  cuda.embedding_feeds_tokens() ? "the embedding feeds a step ahead's tokens"
                                                : "a step ahead's tokens fed by a copy");
    for (const auto &[function, uses] : rowKernels)
      std::printf("  step row GEMV kernel %s (%d launches)\n", function.c_str(), uses);
    if (mmas > 0) {
      // max_rows is 8 unless the staged rows would not fit (a wide down GEMM).
      std::string most = std::to_string(mmaRowsMost);
      if (mmaRowsLeast != mmaRowsMost)
        most = std::to_string(mmaRowsLeast) + "-" + most;
      std::string least;
      for (int rows : mmaMinRows)
        least += (least.empty() ? "" : " or ") + std::to_string(rows);
      std::printf("  step: %d GEMMs with a tensor-core decode GEMV for steps of %s to %s tokens "
                  "(%d fold the norm before them)\n",
                  mmas, least.c_str(), most.c_str(), mmaFolding);
    }
    for (const auto &[function, uses] : mmaKernels)
      std::printf("  step tensor-core GEMV kernel %s (%d launches)\n", function.c_str(), uses);
    for (const auto &[function, uses] : decodeKernels)
      std::printf("  step decode attention kernel %s (%d launches)\n", function.c_str(), uses);
    for (const auto &[function, uses] : qkvDecodeKernels)
      std::printf("  step batch-1 qkv GEMV + decode attention kernel %s (%d launches)\n",
                  function.c_str(), uses);
    for (const auto &[functions, uses] : pagedKernels)
      std::printf("  step kernel %s (%d launches)\n", functions.c_str(), uses);
    if (manifest.tuning_size() == 0) {
      const std::vector<int64_t> buckets = art::tokenBuckets(manifest);
      std::printf("tuning: none (cuBLASLt's heuristic algorithms run; `infer-compile --tune` "
                  "would time these GEMM shapes at T = 1 to %lld by powers of two)\n",
                  static_cast<long long>(buckets.empty() ? 0 : buckets.back()));
      for (const art::GemmUse &use : art::gemmUses(manifest))
        std::printf("  gemm %s (%d launches)\n", use.shape.key().c_str(), use.launches);
    }
    for (const art::TuningRecords &records : manifest.tuning())
      std::printf("tuning: %s", art::tuningReport(manifest, records).c_str());
  } else {
    std::printf("cuda: none (compiled for --target cpu)\n");
  }
  if (showSource && manifest.has_cuda())
    std::printf("%s", manifest.cuda().source().c_str());
  return infer::okStatus();
}

/// Splits "NAME=FILE" (the name may not be empty).
infer::StatusOr<std::pair<std::string, std::string>> splitBinding(const std::string &text,
                                                               const char *flag) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    return infer::invalidArgumentError(std::string(flag) + " '" + text +
                                       "' is not NAME=FILE.npy");
  return std::make_pair(text.substr(0, equals), text.substr(equals + 1));
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct ForwardOptions {
  std::string device;
  /// > 0: also time this many forwards on the device (cuda) after `warmup`.
  int timeIterations = 0, warmup = 3;
};

/// The backend for `device` ("" picks cuda when the artifact has GPU code and
/// a GPU is there, else cpu).
infer::StatusOr<std::unique_ptr<infer::Backend>> makeBackend(const ArtifactReader &reader,
                                                            const std::string &device,
                                                            std::string &chosen) {
  if (device != "cpu" && device != "cuda" && !device.empty())
    return infer::invalidArgumentError("unknown device '" + device + "' (cpu or cuda)");
  bool hasGpuCode = reader.manifest().has_cuda();
#ifdef INFER_HAVE_CUDA
  if (device == "cuda" || (device.empty() && hasGpuCode && infer::cuda::loadCudaApi().ok())) {
    chosen = "cuda";
    ASSIGN_OR_RETURN(auto backend, infer::cuda::CudaBackend::create(reader));
    const infer::cuda::LoadReport &report = backend->loadReport();
    chosen += " (" + report.deviceName + (report.usedPtx ? ", kernels JIT-compiled from PTX" : "") +
              (report.tuningRecords > 0
                   ? ", " + std::to_string(report.tuningRecords) + " GEMM tuning records"
                   : std::string()) +
              ")";
    return std::unique_ptr<infer::Backend>(std::move(backend));
  }
#else
  (void)hasGpuCode;
  if (device == "cuda")
    return infer::failedPreconditionError(
        "this infer-run was built without the CUDA toolkit; use --device cpu");
#endif
  chosen = "cpu";
  ASSIGN_OR_RETURN(auto backend, infer::cpu::CpuBackend::create(reader));
  return std::unique_ptr<infer::Backend>(std::move(backend));
}

infer::Status runForward(const std::string &path, const std::vector<std::string> &inputFlags,
                         const std::vector<std::string> &outputFlags,
                         const ForwardOptions &options,
                         std::chrono::steady_clock::time_point processStart) {
  std::vector<infer::NamedArray> inputs;
  for (const std::string &flag : inputFlags) {
    ASSIGN_OR_RETURN(auto binding, splitBinding(flag, "--input"));
    infer::StatusOr<infer::HostArray> read = infer::readNpy(binding.second);
    if (!read.ok())
      return read.status().withPrefix("--input " + binding.first);
    infer::HostArray array = std::move(read).value();
    inputs.emplace_back(binding.first, std::move(array));
  }
  std::vector<std::pair<std::string, std::string>> outputPaths;
  for (const std::string &flag : outputFlags) {
    ASSIGN_OR_RETURN(auto binding, splitBinding(flag, "--output"));
    outputPaths.push_back(binding);
  }
  auto openStart = std::chrono::steady_clock::now();
  ArtifactReader::Options readerOptions;
  readerOptions.deferWeightChecksum = true; // hashed as the backend reads the weights
  ASSIGN_OR_RETURN(auto reader, ArtifactReader::open(path, readerOptions));
  double openSeconds = secondsSince(openStart);
  std::string chosen;
  ASSIGN_OR_RETURN(auto backend, makeBackend(*reader, options.device, chosen));
  std::fprintf(stderr, "device: %s; loaded in %.3f s (open + verify %.3f s), %.3f s since start\n",
               chosen.c_str(), secondsSince(openStart), openSeconds, secondsSince(processStart));
  auto forwardStart = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto outputs, backend->forward(inputs));
  std::fprintf(stderr, "forward: %.3f s wall (first call, copies included)\n",
               secondsSince(forwardStart));
  if (options.timeIterations > 0) {
#ifdef INFER_HAVE_CUDA
    auto *cuda = dynamic_cast<infer::cuda::CudaBackend *>(backend.get());
    if (!cuda)
      return infer::invalidArgumentError("--time measures the cuda backend; use --device cuda");
    infer::cuda::KindTimes perKind;
    ASSIGN_OR_RETURN(double ms, cuda->timeForward(inputs, options.warmup, options.timeIterations,
                                                  &perKind));
    ASSIGN_OR_RETURN(double streamMs, cuda->timeForwardWithoutGraph(inputs, options.timeIterations));
    std::printf("forward: %.3f ms per forward on the GPU (CUDA graph; mean of %d after %d warmup), "
                "%.3f ms with the launches enqueued one by one\n",
                ms, options.timeIterations, options.warmup, streamMs);
    double total = 0;
    for (const auto &[kind, kindMs] : perKind)
      total += kindMs;
    std::printf("  by launch kind (one profiled forward, %.3f ms with per-launch events):\n",
                total);
    for (const auto &[kind, kindMs] : perKind)
      std::printf("    %-17s %8.3f ms  %5.1f%%\n", kind.c_str(), kindMs,
                  total > 0 ? 100.0 * kindMs / total : 0.0);
#else
    return infer::failedPreconditionError("--time needs the cuda backend");
#endif
  }
  for (const auto &[name, file] : outputPaths) {
    const infer::HostArray *found = nullptr;
    std::string known;
    for (const auto &output : outputs) {
      known += (known.empty() ? "" : ", ") + output.first;
      if (output.first == name)
        found = &output.second;
    }
    if (!found)
      return infer::notFoundError("the model has no output named '" + name + "' (its outputs: " +
                                  known + ")");
    RETURN_IF_ERROR(infer::writeNpy(file, *found));
  }
  return infer::okStatus();
}

/// An integer flag parsed after CLI11 (which clamps out-of-range values):
/// the text as given, and where the value goes when it is valid.
struct IntegerFlag {
  const char *name;
  int64_t lo, hi;
  std::function<void(int64_t)> store;
  std::string help;
  std::string text;
  CLI::Option *option = nullptr;
};

/// Forward's NAME=FILE bindings, each name once.
infer::Status checkDistinctNames(const std::vector<std::string> &flags, const char *flag) {
  std::map<std::string, std::string> seen;
  for (const std::string &text : flags) {
    ASSIGN_OR_RETURN(auto binding, splitBinding(text, flag));
    auto [it, inserted] = seen.emplace(binding.first, binding.second);
    if (!inserted)
      return infer::invalidArgumentError(std::string(flag) + " names '" + binding.first +
                                         "' twice ('" + it->second + "' and '" + binding.second +
                                         "'); give each once");
  }
  return infer::okStatus();
}

int fail(const infer::Status &status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  auto processStart = std::chrono::steady_clock::now();
  // `infer-run tokenize` takes no artifact (its --tokenizer may name one).
  if (argc >= 2 && std::string(argv[1]) == "tokenize")
    return infer::tools::runTokenizeCommand(argc - 1, argv + 1);
  CLI::App app{"infer-run: loads a model.infer artifact and runs it"};
  std::string artifact;
  std::string command;
  app.add_option("artifact", artifact, "MODEL.infer, written by infer-compile -o")->required();
  app.add_option("command", command,
                 "what to do: info (print the manifest's summary), forward (run one batch), "
                 "generate (decoding over the paged KV cache, ids or text), bench (serving "
                 "throughput and latency), serve (the OpenAI-compatible HTTP server). Also: infer-run tokenize --tokenizer PATH (see its "
                 "--help)")
      ->required();
  std::vector<std::string> inputs, outputs;
  ForwardOptions forwardOptions;
  bool showSource = false;
  // Integer flags: strings here, parsed strictly after app.parse().
  std::vector<IntegerFlag> integers;
  auto addInteger = [&](const char *name, int64_t lo, int64_t hi,
                        std::function<void(int64_t)> store, const std::string &help) {
    integers.push_back({name, lo, hi, std::move(store), help, "", nullptr});
  };
  app.add_flag("--cuda-source", showSource, "info: also print the CUDA source given to NVRTC");
  app.add_option("--input", inputs, "forward: NAME=FILE.npy, an int64 [batch, seq] input");
  app.add_option("--output", outputs,
                 "forward: NAME=FILE.npy, where to write an output; generate: text (stream the "
                 "text, or ids without a tokenizer, then a summary) or json (one JSON line: ids "
                 "and text per request)");
  app.add_option("--device", forwardOptions.device,
                 "forward, generate, bench, serve: cpu or cuda (default: cuda when the artifact has "
                 "GPU code and a GPU is present, else cpu)");
  addInteger(
      "--time", 1, 100000, [&](int64_t v) { forwardOptions.timeIterations = int(v); },
      "forward: also time this many forwards on the GPU and print ms per forward "
      "with a breakdown by launch kind");
  addInteger(
      "--warmup", 0, 100000, [&](int64_t v) { forwardOptions.warmup = int(v); },
      "forward --time: untimed forwards first");
  infer::tools::GenerateOptions generateOptions;
  infer::serving::SessionOptions &session = generateOptions.session;
  bool greedy = false, noPrefixCaching = false;
  app.add_option("--prompt-ids", generateOptions.prompts,
                 "generate: a request's prompt as comma-separated token ids (repeat for more "
                 "requests, batched together)");
  app.add_option("--prompt", generateOptions.textPrompts,
                 "generate: a request's prompt as text, encoded by the artifact's tokenizer "
                 "with its special tokens (repeat for more requests, batched together)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--chat", generateOptions.chat,
               "generate: each --prompt is a user message through the artifact's chat template");
  app.add_option("--system", generateOptions.system,
                 "generate --chat: a system message before the user's");
  app.add_option("--stop", generateOptions.stop,
                 "generate: end a request before this text (repeatable; the text is not "
                 "printed); the model's stop tokens end it too")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--ignore-eos", generateOptions.ignoreEos,
               "generate: do not stop at the model's stop tokens");
  addInteger(
      "--max-new-tokens", 1, 1 << 30, [&](int64_t v) { generateOptions.maxNewTokens = int32_t(v); },
      "generate: tokens to generate per request (default 16)");
  app.add_flag("--greedy", greedy,
               "generate: greedy sampling (argmax, lowest id on ties; the default when no "
               "sampling option is given)");
  infer::sampling::SamplingParams sampling;
  CLI::Option *temperatureOption = app.add_option(
      "--temperature", sampling.temperature,
      "generate: sample from softmax(logits / T) (default 1.0 when sampling; 0: greedy)");
  addInteger(
      "--top-k", INT32_MIN, INT32_MAX, [&](int64_t v) { sampling.topK = int32_t(v); },
      "generate: sample among the K most likely tokens (0: off)");
  CLI::Option *topPOption = app.add_option(
      "--top-p", sampling.topP,
      "generate: sample from the smallest set with probability >= P (1: off)");
  std::string seedText, promptSeedText;
  CLI::Option *seedOption = app.add_option(
      "--seed", seedText,
      "generate: sampling seed in [0, 2^64) (default 0); each request's RNG is seeded from "
      "(seed, its index)");
  addInteger(
      "--kv-blocks", 2, int64_t(1) << 40, [&](int64_t v) { session.kvBlocks = v; },
      "generate, bench, serve: KV pool size in blocks, counting the null block (default on "
      "cuda: --max-sequences sequences at the artifact's max-seq-len, within 90% of "
      "the free device memory; on cpu: 4 such sequences)");
  addInteger(
      "--max-batch-tokens", 1, int64_t(1) << 40, [&](int64_t v) { session.maxBatchTokens = v; },
      "generate, bench, serve: tokens per step (default: the artifact's bound); smaller "
      "values split prompts into chunks");
  addInteger(
      "--max-sequences", 1, int64_t(1) << 40, [&](int64_t v) { session.maxSequences = v; },
      "generate, bench, serve: sequences per step (default: min(max batch tokens, 256))");
  app.add_flag("--no-prefix-caching", noPrefixCaching,
               "generate, bench, serve: do not share KV blocks of identical prompt prefixes");
  bool noRunAhead = false;
  app.add_flag("--no-run-ahead", noRunAhead,
               "generate, bench: wait for each step's tokens before enqueuing the next decode "
               "step (default: on the GPU the next one is enqueued first)");
  infer::tools::BenchOptions benchOptions;
  addInteger(
      "--requests", INT64_MIN, INT64_MAX, [&](int64_t v) { benchOptions.requests = v; },
      "bench: number of requests");
  addInteger(
      "--input-len", INT64_MIN, INT64_MAX, [&](int64_t v) { benchOptions.inputLen = v; },
      "bench: prompt tokens per request (random ids, --prompt-seed)");
  addInteger(
      "--output-len", INT64_MIN, INT64_MAX, [&](int64_t v) { benchOptions.outputLen = v; },
      "bench: generated tokens per request (greedy; stop tokens ignored)");
  addInteger(
      "--warmup-requests", INT64_MIN, INT64_MAX,
      [&](int64_t v) { benchOptions.warmupRequests = v; },
      "bench: run this many requests of the same shapes first, untimed (GEMM "
      "tuning, CUDA-graph capture; a prefill graph is captured at its shape's "
      "second step, so 2 at --batch 1)");
  app.add_option("--prompt-seed", promptSeedText,
                 "bench: seed of the random prompt ids in [0, 2^64) (default 0)");
  addInteger(
      "--batch", INT64_MIN, INT64_MAX, [&](int64_t v) { benchOptions.batch = v; },
      "bench: at most B requests in flight, the next submitted when one finishes "
      "(--batch 1: latency, one request at a time); default: all submitted at once");
  infer::tools::ServeOptions serveOptions;
  app.add_option("--host", serveOptions.server.host,
                 "serve: the address to listen on (default 127.0.0.1; 0.0.0.0: every interface)");
  addInteger(
      "--port", 0, 65535, [&](int64_t v) { serveOptions.server.port = int(v); },
      "serve: the TCP port (default 8000; 0: any free port, printed when listening)");
  addInteger(
      "--max-queue", 1, int64_t(1) << 20, [&](int64_t v) { serveOptions.server.maxQueue = v; },
      "serve: requests accepted and not yet running, at most (default 256); more get 503");
  app.add_option("--api-key", serveOptions.server.apiKey,
                 "serve: /v1/ requests need 'Authorization: Bearer KEY' (default: none)");
  addInteger(
      "--drain-timeout", 0, 86400,
      [&](int64_t v) { serveOptions.server.drainTimeout = std::chrono::seconds(v); },
      "serve: on SIGTERM, seconds the running requests may take to finish before they are "
      "cancelled (default 30)");
  app.add_option("--served-model-name", serveOptions.server.modelName,
                 "serve: the model id /v1/models lists and requests name (default: the "
                 "artifact's file name without .infer)");
  app.add_option("--rate", benchOptions.rate,
                 "bench: requests arrive as a Poisson process of R a second (seeded by "
                 "--prompt-seed), each submitted at its arrival (default: all at once)");
  for (IntegerFlag &flag : integers)
    flag.option = app.add_option(flag.name, flag.text, flag.help);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    // One line, as every other refusal (CLI11 adds a "Run with --help" line).
    std::fprintf(stderr, "error: %s (infer-run --help lists the options)\n", error.what());
    return 2;
  }
  for (const IntegerFlag &flag : integers) {
    if (!flag.option->count())
      continue;
    infer::StatusOr<int64_t> value =
        infer::tools::parseInteger(flag.name, flag.text, flag.lo, flag.hi);
    if (!value.ok())
      return fail(value.status());
    flag.store(*value);
  }
  if (seedOption->count()) {
    infer::StatusOr<uint64_t> value = infer::tools::parseUnsigned("--seed", seedText);
    if (!value.ok())
      return fail(value.status());
    sampling.seed = *value;
  }
  if (!promptSeedText.empty()) {
    infer::StatusOr<uint64_t> value = infer::tools::parseUnsigned("--prompt-seed", promptSeedText);
    if (!value.ok())
      return fail(value.status());
    benchOptions.promptSeed = *value;
  }
  CLI::Option *topKOption = app.get_option("--top-k");
  infer::Status status;
  if (command == "info") {
    status = printInfo(artifact, showSource);
  } else if (command == "forward") {
    status = checkDistinctNames(inputs, "--input");
    if (status.ok())
      status = checkDistinctNames(outputs, "--output");
    if (status.ok())
      status = runForward(artifact, inputs, outputs, forwardOptions, processStart);
  } else if (command == "generate") {
    session.device = forwardOptions.device;
    session.prefixCaching = !noPrefixCaching;
    session.runAhead = !noRunAhead;
    bool samplingGiven = temperatureOption->count() || topKOption->count() ||
                         topPOption->count() || seedOption->count();
    if (greedy && (temperatureOption->count() || topKOption->count() || topPOption->count())) {
      std::fprintf(stderr, "error: --greedy cannot be combined with --temperature, --top-k or "
                           "--top-p\n");
      return 1;
    }
    if (outputs.size() > 1) {
      std::fprintf(stderr, "error: generate takes one --output (text or json)\n");
      return 1;
    }
    if (!outputs.empty())
      generateOptions.output = outputs.front();
    if (samplingGiven && !greedy)
      generateOptions.sampling = sampling;
    else
      generateOptions.sampling.seed = sampling.seed;
    status = infer::tools::runGenerate(artifact, generateOptions);
  } else if (command == "bench") {
    session.device = forwardOptions.device;
    session.prefixCaching = !noPrefixCaching;
    session.runAhead = !noRunAhead;
    benchOptions.session = session;
    status = infer::tools::runBench(artifact, benchOptions);
  } else if (command == "serve") {
    session.device = forwardOptions.device;
    session.prefixCaching = !noPrefixCaching;
    session.runAhead = !noRunAhead;
    serveOptions.session = session;
    status = infer::tools::runServe(artifact, serveOptions);
  } else {
    std::fprintf(stderr, "error: unknown command '%s' (this build knows: info, forward, generate, bench, serve)\n",
                 command.c_str());
    return 2;
  }
  // Output that could not be written is a failure too (`> /dev/full`).
  infer::Status flushed = infer::tools::flushStdout();
  if (!status.ok())
    return fail(status);
  if (!flushed.ok())
    return fail(flushed);
  return 0;
}
