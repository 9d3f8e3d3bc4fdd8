//===- CudaCodegen.cpp - kernels, geometry and NVRTC for the exec program --===//

#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/BufferChecks.h"
#include "codegen/cuda/CudaTypes.h"
#include "codegen/cuda/Nvrtc.h"
#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/Quantization.h"
#include "runtime/cuda/abi/AttentionGeometry.h"
#include "runtime/cuda/abi/GemvGeometry.h"
#include "runtime/cuda/abi/KernelParams.h"
#include "runtime/cuda/abi/KvDecodeGeometry.h"
#include "runtime/cuda/abi/KvPrefillGeometry.h"
#include "runtime/cuda/abi/MoeGeometry.h"
#include "runtime/cuda/abi/QuantizedFp8Gemm.h"
#include "runtime/cuda/abi/QuantizedGemvGeometry.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace infer::codegen {
namespace art = artifact;
namespace {

constexpr const char *kKernelNamePlaceholder = "INFER_KERNEL_NAME";

/// The kernel families and generated kernels of one module being built.
class ModuleBuilder {
public:
  explicit ModuleBuilder(const art::Manifest &manifest) : manifest_(manifest) {}

  /// Chooses the runner of launch `index` of `program` and records its geometry.
  StatusOr<art::CudaLaunch> plan(const art::ExecProgram &program, int index) {
    program_ = &program;
    return plan(index);
  }

  /// The whole translation unit (stored in the artifact).
  std::string source() const { return headers() + generated_.str(); }
  /// The program that compiles `expressions`: the generated elementwise
  /// kernels only where it names them.
  std::string sourceFor(const std::vector<std::string> &expressions) const;
  /// The kernel headers' includes, which every program starts with.
  std::string headers() const;
  const std::vector<std::string> &nameExpressions() const { return expressions_; }

  /// The device sampler for the step program's logits, when it computes only
  /// the logit rows (the sampler reads [R, vocab]); "" otherwise.
  StatusOr<std::string> planSampler(const art::ExecProgram &step) {
    if (step.outputs_size() != 1 || step.outputs(0).buffer() >= uint32_t(step.buffers_size()))
      return std::string();
    const art::Buffer &logits = step.buffers(int(step.outputs(0).buffer()));
    if (!logits.per_logit_row())
      return std::string();
    ASSIGN_OR_RETURN(std::string type, cudaTypeName(logits.element_type()));
    art::CudaLaunch record;
    useKernel(record, "infer::kernels::infer_sample<" + type + ">");
    return record.function();
  }

private:
  StatusOr<art::CudaLaunch> plan(int index);
  const art::Launch &launch(int index) const { return program_->launches(index); }
  Status error(int index, const std::string &message) const {
    const std::string kind = art::launchKindName(launch(index).kind());
    return unimplementedError("launch " + std::to_string(index) + " (" + kind +
                              "): the cuda backend " + message);
  }
  /// Element types of every operand with `role`, in order.
  std::vector<art::ElementType> typesOf(const art::Launch &launch, art::OperandRole role) const {
    std::vector<art::ElementType> types;
    for (const art::Operand &operand : launch.operands())
      if (operand.role() == role)
        types.push_back(art::refElementType(manifest_, *program_, operand.ref()));
    return types;
  }
  art::ElementType outputType(const art::Launch &launch) const {
    uint32_t id = launch.outputs_size() ? launch.outputs(0) : ~0u;
    return id < uint32_t(program_->buffers_size()) ? program_->buffers(int(id)).element_type()
                                                  : art::ELEMENT_TYPE_UNSPECIFIED;
  }
  double floatAttr(const art::Launch &launch, const std::string &name, double fallback) const {
    const art::Attribute *attribute = art::findAttribute(launch, name);
    return attribute && attribute->value_case() == art::Attribute::kFloatValue
               ? attribute->float_value()
               : fallback;
  }
  /// An (KV_)ATTENTION with FP8 KV cache scales (--kv-cache-dtype fp8).
  bool readsFp8KvCache(const art::Launch &launch) const {
    return floatAttr(launch, "k_cache_scale", 0.0) > 0 ||
           floatAttr(launch, "v_cache_scale", 0.0) > 0;
  }
  bool boolAttr(const art::Launch &launch, const std::string &name) const {
    const art::Attribute *attribute = art::findAttribute(launch, name);
    return attribute && attribute->value_case() == art::Attribute::kBoolValue &&
           attribute->bool_value();
  }
  std::vector<int64_t> intsAttr(const art::Launch &launch, const std::string &name) const {
    const art::Attribute *attribute = art::findAttribute(launch, name);
    if (!attribute || attribute->value_case() != art::Attribute::kInts)
      return {};
    return {attribute->ints().values().begin(), attribute->ints().values().end()};
  }
  int64_t intAttr(const art::Launch &launch, const std::string &name, int64_t fallback) const {
    return art::intAttribute(launch, name, fallback);
  }
  std::string stringAttr(const art::Launch &launch, const std::string &name) const {
    const art::Attribute *attribute = art::findAttribute(launch, name);
    return attribute && attribute->value_case() == art::Attribute::kStringValue
               ? attribute->string_value()
               : std::string();
  }
  /// The buffer of `launch`'s first operand with `role`, or ~0u.
  static uint32_t bufferOf(const art::Launch &launch, art::OperandRole role) {
    return art::operandBuffer(launch, role).value_or(~0u);
  }
  /// The last launch before `index` that writes buffer `id`, or -1.
  int writerOf(uint32_t id, int index) const {
    for (int i = index - 1; i >= 0 && id != ~0u; --i)
      for (uint32_t out : launch(i).outputs())
        if (out == id)
          return i;
    return -1;
  }
  /// The first launch after `index` that reads buffer `id`, or -1.
  int readerAfter(uint32_t id, int index) const {
    for (int i = index + 1; i < program_->launches_size() && id != ~0u; ++i)
      for (const art::Operand &operand : launch(i).operands())
        if (operand.ref().target_case() == art::Ref::kBuffer && operand.ref().buffer() == id)
          return i;
    return -1;
  }
  /// GEMM `index`'s prologue, as exec.gemm's `prologue` says
  /// (--infer-fold-gemm-prologue decided it): 1 when its decode GEMVs compute
  /// the rms_norm that writes its input themselves, 2 its gated activation,
  /// 0 neither.
  int gemvPrologue(int index) const {
    const std::string prologue = stringAttr(launch(index), "prologue");
    return prologue == "rms_norm" ? 1 : prologue == "gated_activation" ? 2 : 0;
  }
  /// The launch GEMM `index`'s `prologue` names: the one writing its input,
  /// of the kind the attribute says.
  StatusOr<int> prologueLaunch(int index) const {
    const int kind = gemvPrologue(index);
    const int writer = writerOf(bufferOf(launch(index), art::ROLE_INPUT), index);
    const art::Launch::Kind want =
        kind == 1 ? art::Launch::RMS_NORM : art::Launch::GATED_ACTIVATION;
    if (kind == 0 || writer < 0 || launch(writer).kind() != want ||
        launch(writer).outputs_size() != 1)
      return error(index, "cannot fold its prologue (prologue = \"" +
                              stringAttr(launch(index), "prologue") +
                              "\"): its input is not written by that launch");
    return writer;
  }
  /// The launch GEMM `index`'s `epilogue = "gated_activation"` names: the
  /// gated activation reading its output.
  StatusOr<int> epilogueLaunch(int index) const {
    const int reader =
        launch(index).outputs_size() == 1 ? readerAfter(launch(index).outputs(0), index) : -1;
    if (reader < 0 || launch(reader).kind() != art::Launch::GATED_ACTIVATION)
      return error(index, "cannot fold its epilogue: the launch reading its output is not a "
                          "gated activation");
    return reader;
  }
  /// Whether GEMM `index`'s batch-1 GEMV writes the gated activation after
  /// it itself (exec.gemm's `epilogue`, --infer-fold-gemm-epilogue).
  bool rowsFoldForward(int index) const {
    return index >= 0 && launch(index).kind() == art::Launch::GEMM &&
           stringAttr(launch(index), "epilogue") == "gated_activation";
  }
  /// What KV_ATTENTION `index`'s `rotary` attribute says of the rotary
  /// before it (--infer-fold-kv-rotary): whether infer_kv_decode does it in
  /// decode steps, and whether the KV write does it in the others.
  bool rotaryInDecode(int index) const {
    const std::string rotary = stringAttr(launch(index), "rotary");
    return rotary == "decode" || rotary == "decode_or_kv_write";
  }
  bool rotaryInKvWrite(int index) const {
    const std::string rotary = stringAttr(launch(index), "rotary");
    return rotary == "kv_write" || rotary == "decode_or_kv_write";
  }
  /// The rotary KV_ATTENTION `index`'s `rotary` attribute folds: the launch
  /// writing its one input.
  StatusOr<int> rotaryLaunch(int index, art::ElementType type) const {
    const std::string kind = stringAttr(launch(index), "rotary");
    int inputs = 0;
    for (const art::Operand &operand : launch(index).operands())
      inputs += operand.role() == art::ROLE_INPUTS;
    const int writer = writerOf(bufferOf(launch(index), art::ROLE_INPUTS), index);
    if ((!rotaryInDecode(index) && !rotaryInKvWrite(index)) || inputs != 1 || writer < 0 ||
        launch(writer).kind() != art::Launch::ROTARY || outputType(launch(writer)) != type)
      return error(index, "cannot fold the rotary before it (rotary = \"" + kind +
                              "\"): its input is not written by a rotary of its type");
    return writer;
  }
  /// The GEMM KV_ATTENTION `index`'s `qkv_decode` runs
  /// (--infer-fold-qkv-decode): the one writing rotary `rotary`'s input.
  StatusOr<int> qkvGemmLaunch(int index, int rotary) const {
    const int gemm = writerOf(bufferOf(launch(rotary), art::ROLE_INPUT), rotary);
    if (gemm < 0 || launch(gemm).kind() != art::Launch::GEMM || gemvPrologue(gemm) != 1 ||
        !boolAttr(launch(gemm), "transpose_weight"))
      return error(index, "cannot run its qkv GEMM (qkv_decode): the rotary's input is not "
                          "written by a GEMM over [n, k] weights that folds an rms_norm");
    return gemm;
  }
  /// Whether GEMM `gemm` writes the step program's logits, computed for the
  /// logit rows only (what infer_sample reads: planSampler).
  bool writesLogitRows(const art::Launch &gemm) const {
    return gemm.outputs_size() == 1 && program_->outputs_size() == 1 &&
           program_->outputs(0).buffer() == gemm.outputs(0) &&
           gemm.outputs(0) < uint32_t(program_->buffers_size()) &&
           program_->buffers(int(gemm.outputs(0))).per_logit_row();
  }
  /// grid.x for one block per row of `rowElements` of the launch's output.
  StatusOr<art::GridDim> rowsOfOutput(int index, int64_t rowElements) const;
  /// A decode GEMV record of the row-GEMV family (GemvRows.cuh,
  /// GemvRowsMma.cuh): kernel `expression` on `blocks` x 1 x 1 blocks of
  /// kGemvRowsThreads with `sharedBytes` of dynamic shared memory.
  art::CudaLaunch rowGemvRecord(const std::string &expression, int64_t blocks,
                                int64_t sharedBytes, bool foldsPrevious);
  /// Registers `expression` (a template instantiation) and returns its slot.
  void useKernel(art::CudaLaunch &cuda, const std::string &expression) {
    auto [it, inserted] = expressionIndex_.try_emplace(expression, expressions_.size());
    if (inserted)
      expressions_.push_back(expression);
    cuda.set_function(expression); // replaced by the lowered name after compiling
  }

  const art::Manifest &manifest_;
  const art::ExecProgram *program_ = nullptr;
  std::vector<std::string> expressions_;
  std::map<std::string, size_t> expressionIndex_;
  std::map<std::string, std::string> elementwiseByBody_; ///< body -> kernel name
  std::ostringstream generated_;
};

art::GridDim gridDim(art::GridDim::Symbol symbol, int64_t multiplier, int64_t divisor = 1) {
  art::GridDim dim;
  dim.set_symbol(symbol);
  dim.set_multiplier(multiplier);
  dim.set_divisor(divisor);
  return dim;
}

art::CudaLaunch ModuleBuilder::rowGemvRecord(const std::string &expression, int64_t blocks,
                                             int64_t sharedBytes, bool foldsPrevious) {
  art::CudaLaunch record;
  record.set_runner(art::CudaLaunch::KERNEL);
  useKernel(record, expression);
  *record.add_grid() = gridDim(art::GridDim::ONE, blocks);
  *record.add_grid() = gridDim(art::GridDim::ONE, 1);
  *record.add_grid() = gridDim(art::GridDim::ONE, 1);
  record.set_block_x(kernels::kGemvRowsThreads);
  record.set_shared_bytes(uint32_t(sharedBytes));
  record.set_fuses_previous(foldsPrevious);
  return record;
}

/// infer_kv_attention's grid and block (KvDecodeGeometry.h), also
/// infer_kv_decode's.
void setKvDecodeGrid(art::CudaLaunch &cuda, int64_t numHeads, int64_t kvHeads) {
  *cuda.add_grid() = gridDim(art::GridDim::TOKENS, 1);
  *cuda.add_grid() = gridDim(art::GridDim::ONE, kernels::kvDecodeGridY(numHeads, kvHeads));
  *cuda.add_grid() = gridDim(art::GridDim::KV_DECODE_SPLITS, 1);
  cuda.set_block_x(kernels::kKvAttentionThreads);
}

StatusOr<art::GridDim> ModuleBuilder::rowsOfOutput(int index, int64_t rowElements) const {
  const art::Launch &op = launch(index);
  if (op.outputs_size() == 0 || op.outputs(0) >= uint32_t(program_->buffers_size()))
    return error(index, "cannot find the launch's output buffer");
  const art::Buffer &buffer = program_->buffers(int(op.outputs(0)));
  int64_t bytes = int64_t(art::elementSize(buffer.element_type())) * rowElements;
  if (rowElements <= 0 || bytes <= 0)
    return error(index, "cannot size rows of " + std::to_string(rowElements) + " elements");
  int64_t perToken = buffer.size().a(), fixed = buffer.size().b();
  if (perToken > 0 && fixed == 0 && perToken % bytes == 0)
    return gridDim(buffer.per_logit_row() ? art::GridDim::LOGIT_ROWS : art::GridDim::TOKENS,
                   perToken / bytes);
  if (perToken == 0 && fixed > 0 && fixed % bytes == 0)
    return gridDim(art::GridDim::ONE, fixed / bytes);
  return error(index, "needs an output of whole rows of " + std::to_string(rowElements) +
                          " elements per token");
}

StatusOr<art::CudaLaunch> ModuleBuilder::plan(int index) {
  const art::Launch &op = launch(index);
  art::CudaLaunch cuda;
  cuda.set_runner(art::CudaLaunch::KERNEL);
  cuda.set_block_x(kernels::kRowThreads);
  art::ElementType out = outputType(op);
  auto typeName = [&](art::ElementType type) -> StatusOr<std::string> {
    StatusOr<std::string> name = cudaTypeName(type);
    if (!name.ok())
      return error(index, "has no kernel for " + name.status().message());
    return name;
  };
  // Activations (every buffer operand and the output) share one type.
  auto sameAsOutput = [&](art::OperandRole role) -> Status {
    for (art::ElementType type : typesOf(op, role))
      if (type != out)
        return error(index, std::string("has no kernel for a ") + art::elementTypeName(type) + " " +
                                art::operandRoleName(role) + " with a " +
                                art::elementTypeName(out) + " output");
    return okStatus();
  };
  auto firstType = [&](art::OperandRole role) {
    std::vector<art::ElementType> types = typesOf(op, role);
    return types.empty() ? art::ELEMENT_TYPE_UNSPECIFIED : types.front();
  };
  ASSIGN_OR_RETURN(std::string t, typeName(out));
  const std::string ns = "infer::kernels::";
  switch (op.kind()) {
  case art::Launch::EMBEDDING: {
    art::ElementType table = firstType(art::ROLE_TABLE);
    std::vector<art::ElementType> positions = typesOf(op, art::ROLE_POSITION_TABLE);
    if (!positions.empty() && positions.front() != table)
      return error(index, "needs the position table in the token table's type");
    ASSIGN_OR_RETURN(std::string w, typeName(table));
    useKernel(cuda, ns + "infer_embedding<" + t + ", " + w + ">");
    *cuda.add_grid() = gridDim(art::GridDim::TOKENS, 1);
    break;
  }
  case art::Launch::RMS_NORM:
  case art::Launch::LAYER_NORM: {
    bool rms = op.kind() == art::Launch::RMS_NORM;
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUT));
    art::ElementType weight = firstType(rms ? art::ROLE_WEIGHT : art::ROLE_SCALE);
    for (art::ElementType bias : typesOf(op, art::ROLE_BIAS))
      if (bias != weight)
        return error(index, "needs bias and scale of one type");
    ASSIGN_OR_RETURN(std::string w, typeName(weight));
    useKernel(cuda, ns + (rms ? "infer_rms_norm<" : "infer_layer_norm<") + t + ", " + w + ">");
    ASSIGN_OR_RETURN(art::GridDim rows, rowsOfOutput(index, intAttr(op, "features", 0)));
    *cuda.add_grid() = rows;
    break;
  }
  case art::Launch::GEMM: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUT));
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_RESIDUAL));
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_BIAS));
    if (firstType(art::ROLE_WEIGHT) != out)
      return error(index, std::string("has no GEMM of ") + art::elementTypeName(out) +
                              " activations with " +
                              art::elementTypeName(firstType(art::ROLE_WEIGHT)) +
                              " weights (compile with --dtype to store them alike)");
    cuda.set_runner(art::CudaLaunch::CUBLASLT);
    cuda.clear_block_x();
    // Decode (T <= kGemvMaxRows): a kernel that streams the weights once.
    int64_t k = intAttr(op, "k", 0), n = intAttr(op, "n", 0);
    bool transposed = boolAttr(op, "transpose_weight");
    // The launches the IR's fusion attributes fold, by the buffers they write.
    if (gemvPrologue(index) != 0) {
      ASSIGN_OR_RETURN(int prologue, prologueLaunch(index));
      cuda.set_prologue_launch(prologue);
    }
    if (rowsFoldForward(index)) {
      ASSIGN_OR_RETURN(int epilogue, epilogueLaunch(index));
      cuda.set_epilogue_launch(epilogue);
    }
    const bool foldsArgmax = stringAttr(op, "epilogue") == "argmax";
    if (foldsArgmax && !writesLogitRows(op))
      return error(index, "cannot fold the argmax (epilogue = \"argmax\"): it does not write "
                          "the step program's logit rows");
    // The decode kernels --infer-select-kernels chose, with their parameters.
    const int elementBytes = int(art::elementSize(out));
    const std::vector<int64_t> gemvGridAttr = intsAttr(op, "gemv_grid");
    const int64_t rowRows = intAttr(op, "row_gemv_rows", 0);
    const std::vector<int64_t> mmaAttr = intsAttr(op, "mma_gemv");
    if (!gemvGridAttr.empty()) {
      const kernels::GemvGrid grid =
          k > 0 && n > 0 ? kernels::gemvGrid(k, n, transposed) : kernels::GemvGrid{0, 0, 0};
      if (gemvGridAttr != std::vector<int64_t>{grid.x, grid.y, grid.z})
        return error(index, "has infer_gemv on gemvGrid's grid only (" + std::to_string(grid.x) +
                                ", " + std::to_string(grid.y) + ", " + std::to_string(grid.z) +
                                "), not gemv_grid's");
      art::CudaLaunch gemv;
      gemv.set_runner(art::CudaLaunch::KERNEL);
      bool fuses = !transposed && gemvPrologue(index) != 0;
      int prologue = fuses ? gemvPrologue(index) : 0;
      useKernel(gemv, prologue
                          ? ns + "infer_gemv_fused<" + t + ", " + std::to_string(prologue) + ">"
                          : ns + "infer_gemv<" + t + ">");
      *gemv.add_grid() = gridDim(art::GridDim::ONE, grid.x);
      *gemv.add_grid() = gridDim(art::GridDim::ONE, grid.y);
      *gemv.add_grid() = gridDim(art::GridDim::ONE, grid.z);
      gemv.set_block_x(kernels::kGemvThreads);
      gemv.set_fuses_previous(fuses);
      *cuda.mutable_gemv() = std::move(gemv);
    }
    // Batch-1 decode over [n, k] weights: a warp per output row
    // (GemvRows.cuh), folding the launch before it whatever the layout.
    const bool foldsNext = rowsFoldForward(index);
    if ((foldsNext || foldsArgmax) && rowRows < 1)
      return error(index, "has an epilogue but no batch-1 row GEMV (row_gemv_rows)");
    if ((rowRows != 0 && rowRows != 1 && rowRows != kernels::kGemvRowsMultiRows) ||
        (rowRows >= 1 && !kernels::gemvRowsSupported(k, n, transposed, elementBytes)) ||
        (rowRows == kernels::kGemvRowsMultiRows &&
         !kernels::gemvMultiRowsSupported(k, n, transposed, elementBytes)))
      return error(index, "has no row GEMV of " + std::to_string(rowRows) + " rows at k " +
                              std::to_string(k) + ", n " + std::to_string(n));
    if (rowRows >= 1) {
      // A gated activation the GEMV before it writes (fuses_next) is not
      // computed again here.
      bool folds =
          gemvPrologue(index) != 0 &&
          !(gemvPrologue(index) == 2 &&
            rowsFoldForward(writerOf(bufferOf(launch(cuda.prologue_launch()), art::ROLE_INPUTS),
                                     cuda.prologue_launch())));
      int rowsPrologue = folds ? gemvPrologue(index) : 0;
      art::CudaLaunch rows = rowGemvRecord(
          ns + "infer_gemv_rows<" + t + ", " + std::to_string(rowsPrologue) +
              (foldsNext     ? ", true>"
               : foldsArgmax ? ", false, 1, true>"
                             : ", false>"),
          kernels::gemvRowsGrid(n), kernels::gemvRowsSharedBytes(k, elementBytes), folds);
      rows.set_fuses_next(foldsNext);
      rows.set_folds_argmax(foldsArgmax);
      *cuda.mutable_gemv_single_row() = std::move(rows);
    }
    // The multi-token forms below fold an rms_norm before them as
    // infer_gemv_fused would. A gated activation runs as its own launch:
    // folded, each of the ~260 blocks would compute it for every row.
    const bool foldsNorm = gemvPrologue(index) == 1;
    const std::string normPrologue = foldsNorm ? "1" : "0";
    // Steps of 2 .. kGemvRowsMultiRowsRun tokens: the same kernel over
    // those rows.
    if (rowRows == kernels::kGemvRowsMultiRows)
      *cuda.mutable_gemv_multi_row() = rowGemvRecord(
          ns + "infer_gemv_rows<" + t + ", " + normPrologue + ", false, " +
              std::to_string(kernels::kGemvRowsMultiRows) + ">",
          kernels::gemvRowsGrid(n),
          kernels::gemvRowsSharedBytes(k, elementBytes, kernels::kGemvRowsMultiRows), foldsNorm);
    // Steps of min_rows to max_rows tokens on tensor cores (GemvRowsMma.cuh).
    if (!mmaAttr.empty()) {
      const bool three = mmaAttr.size() == 3;
      const int64_t minRows = three ? mmaAttr[0] : 0;
      const int64_t mmaRows = three ? mmaAttr[1] : 0;
      const int64_t splits = three ? mmaAttr[2] : 0;
      if (minRows < 1 || minRows > mmaRows || mmaRows < 2 ||
          mmaRows > kernels::gemvMmaMaxRows(k, n, transposed, elementBytes) ||
          (splits != 1 && splits != 8))
        return error(index, "has no tensor-core GEMV for mma_gemv's tokens and splits at k " +
                                std::to_string(k) + ", n " + std::to_string(n) +
                                " (min 1 to max, max 2 to gemvMmaMaxRows, splits 1 or 8)");
      art::CudaLaunch mma =
          rowGemvRecord(ns + "infer_gemv_rows_mma<" + t + ", " + normPrologue + ", " +
                            std::to_string(splits) + ">",
                        kernels::gemvMmaGrid(n),
                        kernels::gemvMmaSharedBytes(k, elementBytes, int(mmaRows)), foldsNorm);
      mma.set_max_rows(uint32_t(mmaRows));
      mma.set_min_rows(uint32_t(minRows));
      *cuda.mutable_gemv_mma() = std::move(mma);
    }
    break;
  }
  case art::Launch::QUANTIZED_GEMM: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUT));
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_RESIDUAL));
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_BIAS));
    const art::Attribute *schemeAttr = art::findAttribute(op, "scheme");
    std::optional<quant::Scheme> scheme;
    if (schemeAttr && schemeAttr->value_case() == art::Attribute::kStringValue)
      scheme = quant::parseScheme(schemeAttr->string_value());
    int64_t k = intAttr(op, "k", 0), n = intAttr(op, "n", 0), group = intAttr(op, "group_size", 0);
    if (!scheme || k <= 0 || n <= 0)
      return error(index, "has no quantized GEMM kernel without a scheme (int4, fp8, int8, "
                          "fp8-weight), k and n");
    if (std::string why = quant::shapeError(*scheme, k, group); !why.empty())
      return error(index, why);
    if (firstType(art::ROLE_Q) != art::ELEMENT_TYPE_U8 ||
        firstType(art::ROLE_SCALES) != art::ELEMENT_TYPE_F32)
      return error(index, "needs u8 quantized weights and f32 scales");
    if (!typesOf(op, art::ROLE_ZEROS).empty() &&
        firstType(art::ROLE_ZEROS) != art::ELEMENT_TYPE_F32)
      return error(index, "needs f32 zero points");
    // 16-byte weight loads where a load never straddles a group or a row;
    // the kernels' scheme numbers are quant::Scheme's.
    const int64_t perLoad = *scheme == quant::Scheme::Int4 ? 32 : 16;
    const bool vector = k % perLoad == 0 && (!quant::isGrouped(*scheme) || group % perLoad == 0);
    const std::string schemeArg = std::to_string(static_cast<int>(*scheme));
    if (const int64_t blockK = intAttr(op, "mma_block_k", 0); blockK != 0) {
      // Decode steps on tensor cores (SelectKernels' choice); larger ones as below.
      const bool fp8 = *scheme == quant::Scheme::Fp8;
      const int bytes = int(art::elementSize(out));
      if (fp8 ? blockK != kernels::kFp8MmaStepK ||
                    !kernels::quantizedFp8MmaSupported(true, bytes, k, n)
              : blockK !=
                    kernels::quantizedMmaBlockK(*scheme == quant::Scheme::Int4, bytes, k, group))
        return error(index, "has no tensor-core GEMV in k steps of " + std::to_string(blockK) +
                                " for scheme " + quant::schemeName(*scheme) + ", k " +
                                std::to_string(k) + ", group " + std::to_string(group) + " and " +
                                t);
      useKernel(cuda,
                fp8 ? ns + "infer_quantized_gemv_fp8_mma<" + t + ">"
                    : ns + "infer_quantized_gemv_mma<" + t + ", " + std::to_string(blockK) + ">");
      cuda.set_block_x(kernels::kQuantizedMmaThreads);
      *cuda.add_grid() = gridDim(art::GridDim::ONE, kernels::quantizedMmaGrid(n));
      *cuda.add_grid() = gridDim(art::GridDim::ONE, 1);
      cuda.set_max_rows(uint32_t(kernels::kQuantizedMmaTokens));
    } else {
      useKernel(cuda, ns + "infer_quantized_gemm<" + t + ", " + schemeArg + ", " +
                          (vector ? "true" : "false") + ">");
      cuda.set_block_x(kernels::kQuantizedGemmThreads);
      *cuda.add_grid() = gridDim(art::GridDim::ONE, (n + kernels::kQuantizedGemmRows - 1) /
                                                        kernels::kQuantizedGemmRows);
      *cuda.add_grid() = gridDim(art::GridDim::TOKENS, 1, kernels::quantizedGemmTileTokens(k));
      cuda.set_shared_bytes(uint32_t(std::min<int64_t>(kernels::quantizedGemmSharedBytes(k),
                                                       4 * kernels::kQuantizedGemmMaxK)));
      // Larger steps (and every step where one token's inputs would not fit
      // the staging): the weight dequantized for a cuBLASLt GEMM (fp8: the
      // inputs rounded first), as CudaLaunch.dequantize says.
      cuda.set_max_rows(k <= kernels::kQuantizedGemmMaxK ? uint32_t(kernels::kQuantizedGemmTokens)
                                                         : 0u);
      // One token (batch-1 decode): the one-token instance, two blocks an SM.
      if (k <= kernels::kQuantizedGemmMaxK) {
        const int warps = kernels::quantizedGemmSingleTokenWarps(n);
        const int64_t rows = int64_t(warps) * kernels::kQuantizedGemmRowsPerWarp;
        art::CudaLaunch *single = cuda.mutable_gemv_single_row();
        single->set_runner(art::CudaLaunch::KERNEL);
        useKernel(*single, ns + "infer_quantized_gemm<" + t + ", " + schemeArg + ", " +
                               (vector ? "true" : "false") + ", 1>");
        single->set_block_x(uint32_t(warps * 32));
        *single->add_grid() = gridDim(art::GridDim::ONE, (n + rows - 1) / rows);
        *single->add_grid() = gridDim(art::GridDim::TOKENS, 1, 1);
        single->set_shared_bytes(uint32_t(4 * k));
      }
    }
    if (boolAttr(op, "fp8_gemm")) {
      // Larger steps on cuBLASLt's FP8 GEMM (SelectKernels' choice).
      if (!kernels::quantizedFp8GemmSupported(*scheme == quant::Scheme::Fp8,
                                              int(art::elementSize(out)), k, n))
        return error(index, std::string("has no FP8 GEMM for scheme ") +
                                quant::schemeName(*scheme) + ", k " + std::to_string(k) + ", n " +
                                std::to_string(n) + " and " + t +
                                " (fp8 with 16-bit activations, k % 16 and n % 8 zero)");
      art::CudaLaunch *inputs = cuda.mutable_fp8_gemm();
      inputs->set_runner(art::CudaLaunch::KERNEL);
      useKernel(*inputs, ns + "infer_quantized_fp8_inputs<" + t + ">");
      inputs->set_block_x(kernels::kQuantizedGemmThreads);
      *inputs->add_grid() = gridDim(art::GridDim::TOKENS, 1);
      break;
    }
    art::CudaLaunch *dequantize = cuda.mutable_dequantize();
    dequantize->set_runner(art::CudaLaunch::KERNEL);
    useKernel(*dequantize, ns + "infer_quantized_dequantize<" + t + ", " + schemeArg + ">");
    dequantize->set_block_x(kernels::kQuantizedGemmThreads);
    *dequantize->add_grid() = gridDim(art::GridDim::ONE, n);
    if (*scheme == quant::Scheme::Fp8) { // W8A8: the inputs are rounded too
      art::CudaLaunch *round = dequantize->mutable_prologue();
      round->set_runner(art::CudaLaunch::KERNEL);
      useKernel(*round, ns + "infer_quantized_round_inputs<" + t + ">");
      round->set_block_x(kernels::kQuantizedGemmThreads);
      *round->add_grid() = gridDim(art::GridDim::TOKENS, 1);
    }
    break;
  }
  case art::Launch::ROTARY: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUT));
    art::ElementType table = firstType(art::ROLE_INV_FREQ);
    if (table == art::ELEMENT_TYPE_UNSPECIFIED)
      table = firstType(art::ROLE_COS_CACHE);
    if (!typesOf(op, art::ROLE_SIN_CACHE).empty() && firstType(art::ROLE_SIN_CACHE) != table)
      return error(index, "needs the cos and sin caches in one type");
    ASSIGN_OR_RETURN(std::string c, typeName(table));
    useKernel(cuda, ns + "infer_rotary<" + t + ", " + c + ">");
    *cuda.add_grid() = gridDim(art::GridDim::TOKENS, 1);
    break;
  }
  case art::Launch::ATTENTION: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUTS));
    int64_t headDim = intAttr(op, "head_dim", 0), heads = intAttr(op, "num_heads", 0);
    if (headDim <= 0 || headDim > 256 || heads <= 0)
      return error(index, "has no attention kernel for head_dim " + std::to_string(headDim) +
                              " (1 to 256)");
    if (int64_t window = intAttr(op, "window", 0);
        window < 0 || window > INT32_MAX)
      return error(index, "has no attention kernel for a sliding window of " +
                              std::to_string(window) + " keys (1 to 2^31 - 1)");
    if (readsFp8KvCache(op)) {
      // --kv-cache-dtype fp8: K and V rounded through E4M3 in place first, as
      // the step program's cache holds them.
      for (const art::Operand &operand : op.operands())
        if (operand.role() == art::ROLE_INPUTS &&
            (operand.ref().target_case() != art::Ref::kBuffer ||
             !unreadAfter(*program_, operand.ref().buffer(), index)))
          return error(index, "reads K or V that later launches read too: its FP8 cache "
                              "rounding cannot be done in place");
      art::CudaLaunch round;
      round.set_runner(art::CudaLaunch::KERNEL);
      useKernel(round, ns + "infer_attention_round_kv<" + t + ">");
      *round.add_grid() = gridDim(art::GridDim::SEQ, 1);
      *round.add_grid() = gridDim(art::GridDim::BATCH, 1);
      round.set_block_x(kernels::kKvAttentionThreads);
      *cuda.mutable_prologue() = std::move(round);
    }
    useKernel(cuda, ns + "infer_attention<" + t + ", " +
                        std::to_string(kernels::attentionHeadClass(headDim)) + ">");
    *cuda.add_grid() = gridDim(art::GridDim::SEQ, 1, kernels::kAttentionBlockQ);
    *cuda.add_grid() = gridDim(art::GridDim::ONE, heads);
    *cuda.add_grid() = gridDim(art::GridDim::BATCH, 1);
    cuda.set_block_x(kernels::kAttentionThreads);
    cuda.set_shared_bytes(
        kernels::attentionSharedBytes(headDim, int(art::elementSize(out))));
    break;
  }
  case art::Launch::KV_ATTENTION: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUTS));
    int64_t headDim = intAttr(op, "head_dim", 0), kvHeads = intAttr(op, "num_kv_heads", 0);
    if (headDim <= 0 || headDim > 256 || kvHeads <= 0)
      return error(index, "has no paged attention kernel for head_dim " +
                              std::to_string(headDim) + " (1 to 256)");
    // A sliding window and ALiBi run on infer_kv_attention's general path alone.
    const bool generalPathOnly = intAttr(op, "window", 0) > 0 || floatAttr(op, "alibi", 0.0) != 0.0;
    // An FP8 cache (--kv-cache-dtype fp8): its own write and the general
    // path, for prefill and decode tokens alike; no fused variants.
    const bool fp8Cache = readsFp8KvCache(op);
    art::CudaLaunch write;
    write.set_runner(art::CudaLaunch::KERNEL);
    write.set_block_x(kernels::kKvAttentionThreads);
    useKernel(write, ns + (fp8Cache ? "infer_kv_write_fp8<" : "infer_kv_write<") + t + ">");
    *write.add_grid() = gridDim(art::GridDim::TOKENS, 1);
    *cuda.mutable_prologue() = std::move(write);
    // Prefill chunks: 128-query tiles per (sequence, head) on tensor cores,
    // Hopper's wgmma for the head sizes it has tiles for (not over an FP8
    // cache): the tensor-core prefill kernel --infer-select-kernels chose.
    const int elementBytes = int(art::elementSize(out));
    const std::string prefillKernel = stringAttr(op, "prefill_kernel");
    auto recordPrefill = [&]() -> Status {
      if (prefillKernel.empty())
        return okStatus();
      const bool wgmma = prefillKernel == "wgmma";
      if (generalPathOnly || (prefillKernel != "mma" && !wgmma) || (wgmma && fp8Cache) ||
          !kernels::kvPrefillSupported(headDim, elementBytes) ||
          (wgmma && !kernels::kvPrefillWgmmaSupported(headDim, elementBytes)))
        return error(index, "has no prefill kernel \"" + prefillKernel + "\" for head_dim " +
                                std::to_string(headDim) +
                                (generalPathOnly ? " with a window or ALiBi"
                                 : fp8Cache      ? " over an FP8 KV cache"
                                                 : ""));
      art::CudaLaunch prefill;
      prefill.set_runner(art::CudaLaunch::KERNEL);
      useKernel(prefill, ns +
                             (wgmma      ? "infer_kv_prefill_attention_wgmma<"
                              : fp8Cache ? "infer_kv_prefill_attention_fp8<"
                                         : "infer_kv_prefill_attention<") +
                             t + ", " + std::to_string(kernels::attentionHeadClass(headDim)) + ">");
      *prefill.add_grid() = gridDim(art::GridDim::MAX_NEW_TOKENS, 1, kernels::kKvPrefillBlockQ);
      *prefill.add_grid() = gridDim(art::GridDim::ONE, intAttr(op, "num_heads", 0));
      *prefill.add_grid() = gridDim(art::GridDim::SEQUENCES, 1);
      prefill.set_block_x(wgmma ? kernels::kKvPrefillWgmmaThreads : kernels::kKvPrefillThreads);
      prefill.set_shared_bytes(wgmma ? kernels::kvPrefillWgmmaSharedBytes(headDim, elementBytes)
                                     : kernels::kvPrefillSharedBytes(headDim, elementBytes));
      *cuda.mutable_prefill() = std::move(prefill);
      return okStatus();
    };
    if (fp8Cache) {
      if (!stringAttr(op, "rotary").empty() || boolAttr(op, "qkv_decode"))
        return error(index, "has no fused rotary or qkv kernels for an FP8 KV cache");
      useKernel(cuda, ns + "infer_kv_attention_fp8<" + t + ">");
      setKvDecodeGrid(cuda, intAttr(op, "num_heads", 0), kvHeads);
      RETURN_IF_ERROR(recordPrefill());
      break;
    }
    if (!stringAttr(op, "rotary").empty()) {
      ASSIGN_OR_RETURN(int rotaryIndex, rotaryLaunch(index, out));
      cuda.set_prologue_launch(rotaryIndex);
      const art::Launch &rotary = launch(rotaryIndex);
      std::vector<art::ElementType> table = typesOf(rotary, art::ROLE_INV_FREQ);
      if (table.empty())
        table = typesOf(rotary, art::ROLE_COS_CACHE);
      if (table.empty())
        return error(rotaryIndex, "has no inv_freq or cos_cache");
      ASSIGN_OR_RETURN(std::string c, typeName(table.front()));
      if (rotaryInKvWrite(index)) {
        art::CudaLaunch fused;
        fused.set_runner(art::CudaLaunch::KERNEL);
        fused.set_block_x(kernels::kKvAttentionThreads);
        useKernel(fused, ns + "infer_rotary_kv_write<" + t + ", " + c + ">");
        *fused.add_grid() = gridDim(art::GridDim::TOKENS, 1);
        *cuda.mutable_fused_prologue() = std::move(fused);
      }
      if (rotaryInDecode(index)) {
        if (generalPathOnly || art::elementSize(out) != 2 || headDim % 8 != 0 || headDim > 128)
          return error(index, "has no decode kernel (rotary = \"decode\") for a sliding window, "
                              "ALiBi, 32-bit types or head_dim " +
                                  std::to_string(headDim) + " (multiples of 8 up to 128)");
        art::CudaLaunch decode;
        decode.set_runner(art::CudaLaunch::KERNEL);
        useKernel(decode, ns + "infer_kv_decode<" + t + ", " + c + ", " +
                              std::to_string(kernels::kvDecodeMaxDim(headDim)) + ">");
        setKvDecodeGrid(decode, intAttr(op, "num_heads", 0), kvHeads);
        *cuda.mutable_decode() = std::move(decode);
      }
      if (boolAttr(op, "qkv_decode")) {
        if (!rotaryInDecode(index) || kernels::kvDecodeMaxDim(headDim) != 64)
          return error(index, "has no qkv-decode kernel without rotary = \"decode\" or for "
                              "heads wider than 64");
        ASSIGN_OR_RETURN(int gemmIndex, qkvGemmLaunch(index, rotaryIndex));
        const art::Launch &gemm = launch(gemmIndex);
        const int64_t k = intAttr(gemm, "k", 0), n = intAttr(gemm, "n", 0);
        const int gemmBytes = int(art::elementSize(outputType(gemm)));
        if (!kernels::gemvRowsSupported(k, n, true, gemmBytes))
          return error(gemmIndex, "has no batch-1 row GEMV for the qkv-decode kernel");
        cuda.set_qkv_gemm_launch(gemmIndex);
        *cuda.mutable_qkv_decode() =
            rowGemvRecord(ns + "infer_qkv_decode<" + t + ", " + c + ", 64>",
                          kernels::kQkvDecodeBlocks, kernels::qkvDecodeSharedBytes(k, gemmBytes),
                          /*foldsPrevious=*/true);
      }
    } else if (boolAttr(op, "qkv_decode")) {
      return error(index, "has no qkv-decode kernel without rotary = \"decode\"");
    }
    useKernel(cuda, ns + "infer_kv_attention<" + t + ">");
    setKvDecodeGrid(cuda, intAttr(op, "num_heads", 0), kvHeads);
    RETURN_IF_ERROR(recordPrefill());
    break;
  }
  case art::Launch::GATED_ACTIVATION: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUTS));
    useKernel(cuda, ns + "infer_gated_activation<" + t + ">");
    *cuda.add_grid() = gridDim(art::GridDim::TOKENS, 1);
    break;
  }
  case art::Launch::COPY:
  case art::Launch::GATHER_ROWS: {
    if (firstType(art::ROLE_INPUT) != out)
      return error(index, "cannot copy between element types");
    useKernel(cuda, ns + "infer_copy");
    bool gather = op.kind() == art::Launch::GATHER_ROWS;
    ASSIGN_OR_RETURN(art::GridDim rows,
                     rowsOfOutput(index, intAttr(op, gather ? "features" : "length", 0)));
    *cuda.add_grid() = rows;
    break;
  }
  case art::Launch::ELEMENTWISE: {
    // Layers repeat the same region: one kernel per distinct body.
    StatusOr<std::string> kernel =
        generateElementwiseKernel(*program_, manifest_, op, kKernelNamePlaceholder);
    if (!kernel.ok())
      return error(index, "cannot generate its kernel: " + kernel.status().message());
    auto [it, inserted] = elementwiseByBody_.try_emplace(
        *kernel, kElementwiseKernelPrefix + std::to_string(elementwiseByBody_.size()));
    if (inserted) {
      std::string text = *kernel;
      for (size_t at; (at = text.find(kKernelNamePlaceholder)) != std::string::npos;)
        text.replace(at, std::strlen(kKernelNamePlaceholder), it->second);
      generated_ << "\n" << text;
    }
    useKernel(cuda, it->second);
    // One thread per output element.
    if (op.outputs(0) >= uint32_t(program_->buffers_size()))
      return error(index, "cannot find the launch's output buffer");
    const art::Buffer &buffer = program_->buffers(int(op.outputs(0)));
    int64_t perToken = buffer.size().a() / int64_t(art::elementSize(out));
    if (perToken <= 0 || buffer.size().b() != 0)
      return error(index, "needs a per-token output for a generated kernel");
    *cuda.add_grid() =
        gridDim(buffer.per_logit_row() ? art::GridDim::LOGIT_ROWS : art::GridDim::TOKENS,
                perToken, kernels::kRowThreads);
    break;
  }
  case art::Launch::MOE: {
    RETURN_IF_ERROR(sameAsOutput(art::ROLE_INPUT));
    art::ElementType weight = firstType(art::ROLE_ROUTER);
    for (art::OperandRole role : {art::ROLE_GATE_UP, art::ROLE_DOWN})
      if (firstType(role) != weight)
        return error(index, "needs the router, gate_up and down weights in one type");
    ASSIGN_OR_RETURN(std::string w, typeName(weight));
    int64_t hidden = intAttr(op, "hidden", 0), inter = intAttr(op, "inter", 0),
            experts = intAttr(op, "experts", 0), topK = intAttr(op, "top_k", 0);
    const int bytes = int(art::elementSize(weight));
    if (experts < 1 || experts > kernels::kMoeMaxExperts || topK < 1 || topK > experts ||
        topK > kernels::kMoeMaxTopK)
      return error(index, "has no mixture-of-experts kernel for " + std::to_string(experts) +
                              " experts, top " + std::to_string(topK) + " (1 to " +
                              std::to_string(kernels::kMoeMaxExperts) + " experts, top 1 to " +
                              std::to_string(kernels::kMoeMaxTopK) + ")");
    if (hidden < 1 || inter < 1 ||
        kernels::moeGateUpSharedBytes(hidden, bytes) > kernels::kMoeMaxStageBytes ||
        kernels::moeDownSharedBytes(inter, bytes) > kernels::kMoeMaxStageBytes)
      return error(index, "has no mixture-of-experts kernel for hidden " + std::to_string(hidden) +
                              ", inter " + std::to_string(inter) +
                              " (a gate and an up row, and a down row, must fit " +
                              std::to_string(kernels::kMoeMaxStageBytes) +
                              " bytes of shared memory)");
    if (typesOf(op, art::ROLE_WORKSPACE).size() != 1)
      return error(index, "has no workspace");
    // Route (this record), then the stages in order (MoeGeometry.h).
    useKernel(cuda, ns + "infer_moe_route<" + t + ", " + w + ">");
    cuda.set_block_x(kernels::kMoeThreads);
    *cuda.add_grid() = gridDim(art::GridDim::TOKENS, 1);
    art::CudaLaunch *sort = cuda.add_stages();
    sort->set_runner(art::CudaLaunch::KERNEL);
    useKernel(*sort, ns + "infer_moe_sort");
    sort->set_block_x(kernels::kMoeSortThreads);
    *sort->add_grid() = gridDim(art::GridDim::ONE, 1);
    auto expertsStage = [&](const std::string &kernel, int rows, int64_t length,
                            int64_t sharedBytes) {
      art::CudaLaunch *stage = cuda.add_stages();
      stage->set_runner(art::CudaLaunch::KERNEL);
      useKernel(*stage, ns + kernel + "<" + t + ", " + w + ", " + std::to_string(rows) + ">");
      stage->set_block_x(kernels::kMoeThreads);
      stage->set_shared_bytes(uint32_t(sharedBytes));
      *stage->add_grid() = gridDim(art::GridDim::ONE, (length + rows - 1) / rows);
      *stage->add_grid() = gridDim(art::GridDim::ONE, experts);
    };
    expertsStage("infer_moe_gate_up", kernels::moeGateUpRows(hidden, bytes), inter,
                 kernels::moeGateUpSharedBytes(hidden, bytes));
    expertsStage("infer_moe_down", kernels::moeDownRows(inter, bytes), hidden,
                 kernels::moeDownSharedBytes(inter, bytes));
    art::CudaLaunch *combine = cuda.add_stages();
    combine->set_runner(art::CudaLaunch::KERNEL);
    useKernel(*combine, ns + "infer_moe_combine<" + t + ">");
    combine->set_block_x(kernels::kMoeThreads);
    *combine->add_grid() = gridDim(art::GridDim::TOKENS, 1);
    break;
  }
  default:
    return error(index, "does not know this kind of launch");
  }
  return cuda;
}

std::string ModuleBuilder::sourceFor(const std::vector<std::string> &expressions) const {
  for (const std::string &expression : expressions)
    if (expression.rfind(kElementwiseKernelPrefix, 0) == 0)
      return source();
  return headers();
}

std::string ModuleBuilder::headers() const {
  std::ostringstream text;
  text << "// Generated by infer-compile: the kernel families (codegen/cuda/kernels)\n"
       << "// and one kernel per exec.elementwise launch.\n"
       << "#include \"codegen/cuda/kernels/Common.cuh\"\n"
       << "#include \"codegen/cuda/kernels/RowKernels.cuh\"\n"
       << "#include \"codegen/cuda/kernels/Attention.cuh\"\n"
       << "#include \"codegen/cuda/kernels/KvAttention.cuh\"\n"
       << "#include \"codegen/cuda/kernels/QkvDecode.cuh\"\n"
       << "#include \"codegen/cuda/kernels/KvPrefillWgmma.cuh\"\n"
       << "#include \"codegen/cuda/kernels/Sampling.cuh\"\n"
       << "#include \"codegen/cuda/kernels/GemvRowsMma.cuh\"\n"
       << "#include \"codegen/cuda/kernels/Moe.cuh\"\n"
       << "#include \"codegen/cuda/kernels/QuantizedGemm.cuh\"\n"
       << "#include \"codegen/cuda/kernels/QuantizedGemvMma.cuh\"\n"
       << "#include \"codegen/cuda/kernels/QuantizedGemvFp8Mma.cuh\"\n";
  return text.str();
}

} // namespace

Status generateCudaModule(art::Manifest &manifest, const CudaCodegenOptions &options) {
  if (!manifest.has_exec())
    return failedPreconditionError("the artifact has no exec program to generate code for");
  ModuleBuilder builder(manifest);
  art::CudaModule module;
  for (int i = 0; i < manifest.exec().launches_size(); ++i) {
    ASSIGN_OR_RETURN(art::CudaLaunch launch, builder.plan(manifest.exec(), i));
    *module.add_launches() = std::move(launch);
  }
  for (int i = 0; i < manifest.step().launches_size(); ++i) {
    StatusOr<art::CudaLaunch> launch = builder.plan(manifest.step(), i);
    if (!launch.ok())
      return launch.status().withPrefix("step program");
    *module.add_step_launches() = std::move(launch).value();
  }
  std::string sampler;
  if (manifest.has_step()) {
    StatusOr<std::string> planned = builder.planSampler(manifest.step());
    if (!planned.ok())
      return planned.status().withPrefix("step program sampler");
    sampler = std::move(planned).value();
  }
  std::string source = builder.source();
  // The cubins' programs (groupKernelsIntoPrograms) and, with --ptx, one more
  // for the portable PTX of every kernel: all at once, each in its own process.
  if (options.maxPrograms < 1 || options.maxPrograms > kMaxNvrtcPrograms)
    return invalidArgumentError("the NVRTC programs must be 1 to " +
                                std::to_string(kMaxNvrtcPrograms) + ", not " +
                                std::to_string(options.maxPrograms));
  std::vector<std::vector<std::string>> programs =
      groupKernelsIntoPrograms(builder.nameExpressions(), options.maxPrograms);
  std::vector<NvrtcJob> jobs;
  for (const std::vector<std::string> &expressions : programs)
    jobs.push_back({builder.sourceFor(expressions), expressions, options.arch, options.lineInfo});
  if (options.embedPtx)
    jobs.push_back({source, builder.nameExpressions(), options.ptxArch, options.lineInfo});
  std::vector<StatusOr<NvrtcOutput>> outputs = compileInSeparateProcesses(jobs);
  std::map<std::string, std::string> loweredNames;
  std::vector<std::pair<double, std::string>> times;
  for (size_t i = 0; i < programs.size(); ++i) {
    if (!outputs[i].ok())
      return outputs[i].status();
    loweredNames.insert(outputs[i]->loweredNames.begin(), outputs[i]->loweredNames.end());
    std::set<std::string> families;
    for (const std::string &expression : programs[i])
      families.insert(kernelFamilyOf(expression));
    std::string line;
    for (const std::string &family : families)
      line += (line.empty() ? "" : ", ") + family + (family == kElementwiseKernelPrefix ? "*" : "");
    times.push_back({outputs[i]->seconds, line});
  }
  if (options.programTimes) {
    std::stable_sort(times.begin(), times.end(),
                     [](const auto &a, const auto &b) { return a.first > b.first; });
    for (const auto &[seconds, families] : times) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f s ", seconds);
      options.programTimes->push_back(text + families);
    }
  }
  auto lower = [&](art::CudaLaunch &launch) -> Status {
    if (launch.runner() != art::CudaLaunch::KERNEL)
      return okStatus();
    auto lowered = loweredNames.find(launch.function());
    if (lowered == loweredNames.end())
      return internalError("NVRTC gave no lowered name for " + launch.function());
    launch.set_function(lowered->second);
    return okStatus();
  };
  // Every record, with the alternatives nested in it (prologue, prefill,
  // gemv, ...): found by reflection, so a new kind of record cannot be left
  // with its unlowered name (which the driver would not find at load).
  std::function<Status(art::CudaLaunch &)> lowerAll = [&](art::CudaLaunch &launch) -> Status {
    RETURN_IF_ERROR(lower(launch));
    const google::protobuf::Reflection *reflection = launch.GetReflection();
    const google::protobuf::Descriptor *descriptor = launch.GetDescriptor();
    for (int f = 0; f < descriptor->field_count(); ++f) {
      const google::protobuf::FieldDescriptor *field = descriptor->field(f);
      if (field->message_type() != art::CudaLaunch::descriptor())
        continue;
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(launch, field); ++i)
          RETURN_IF_ERROR(lowerAll(*static_cast<art::CudaLaunch *>(
              reflection->MutableRepeatedMessage(&launch, field, i))));
      } else if (reflection->HasField(launch, field)) {
        RETURN_IF_ERROR(lowerAll(
            *static_cast<art::CudaLaunch *>(reflection->MutableMessage(&launch, field))));
      }
    }
    return okStatus();
  };
  for (auto *launches : {module.mutable_launches(), module.mutable_step_launches()})
    for (art::CudaLaunch &launch : *launches)
      RETURN_IF_ERROR(lowerAll(launch));
  if (!sampler.empty()) {
    auto lowered = loweredNames.find(sampler);
    if (lowered == loweredNames.end())
      return internalError("NVRTC gave no lowered name for " + sampler);
    module.set_sample_function(lowered->second);
    module.set_sample_block_x(kernels::kSampleThreads);
    module.set_embedding_feeds_tokens(true);
  }
  module.set_arch(options.arch);
  module.set_cubin(std::move(outputs[0]->cubin));
  for (size_t i = 1; i < programs.size(); ++i) {
    art::CudaCubin *extra = module.add_extra_cubins();
    extra->set_cubin(std::move(outputs[i]->cubin));
    for (const std::string &expression : programs[i])
      extra->add_functions(loweredNames.at(expression));
  }
  if (options.embedPtx) {
    // The same source lowers to the same names.
    StatusOr<NvrtcOutput> &portable = outputs.back();
    if (!portable.ok())
      return portable.status();
    module.set_ptx_arch(options.ptxArch);
    module.set_ptx(std::move(portable->ptx));
  }
  module.set_source(std::move(source));
  *manifest.mutable_cuda() = std::move(module);
  art::ToolVersion *tool = manifest.add_tools();
  tool->set_name("nvrtc");
  tool->set_version(nvrtcVersion());
  return okStatus();
}

} // namespace infer::codegen
