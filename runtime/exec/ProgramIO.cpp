//===- ProgramIO.cpp ------------------------------------------------------===//

#include "runtime/exec/ProgramIO.h"

#include "runtime/artifact/ArtifactFormat.h"

#include <algorithm>
#include <cstring>

namespace infer::exec {
namespace art = artifact;

StatusOr<BoundInputs> bindInputs(const art::ExecProgram &program,
                                 const std::vector<NamedArray> &inputs) {
  std::string known;
  for (const art::Binding &binding : program.inputs())
    known += (known.empty() ? "" : ", ") + binding.name();
  BoundInputs bound;
  bound.arrays.assign(static_cast<size_t>(program.inputs_size()), nullptr);
  for (const NamedArray &input : inputs) {
    int found = -1;
    for (int i = 0; i < program.inputs_size(); ++i)
      if (program.inputs(i).name() == input.first)
        found = i;
    if (found < 0)
      return notFoundError("the model has no input named '" + input.first + "' (its inputs: " +
                           known + ")");
    bound.arrays[static_cast<size_t>(found)] = &input.second;
  }
  int64_t batch = -1, seq = -1;
  for (int i = 0; i < program.inputs_size(); ++i) {
    const std::string &name = program.inputs(i).name();
    const HostArray *array = bound.arrays[static_cast<size_t>(i)];
    if (!array)
      return invalidArgumentError("input '" + name + "' is not given (the model's inputs: " +
                                  known + ")");
    if (array->shape.size() != 2)
      return invalidArgumentError("input '" + name + "' must be [batch, seq], got rank " +
                                  std::to_string(array->shape.size()));
    if (array->type != art::ELEMENT_TYPE_I64 && array->type != art::ELEMENT_TYPE_I32)
      return invalidArgumentError("input '" + name + "' must hold int64 token ids, got " +
                                  art::elementTypeName(array->type));
    if (batch >= 0 && (array->shape[0] != batch || array->shape[1] != seq))
      return invalidArgumentError("inputs disagree on [batch, seq]");
    batch = array->shape[0];
    seq = array->shape[1];
  }
  if (batch <= 0 || seq <= 0)
    return invalidArgumentError("the input is empty (batch " + std::to_string(batch) + ", seq " +
                                std::to_string(seq) + ")");
  int64_t tokens = batch * seq, bound_tokens = program.arena().bound_tokens();
  if (tokens > bound_tokens)
    return invalidArgumentError(
        std::to_string(tokens) + " tokens (batch " + std::to_string(batch) + " x seq " +
        std::to_string(seq) + ") exceed the artifact's bound of " + std::to_string(bound_tokens) +
        " batch tokens; recompile with --max-batch-tokens " + std::to_string(tokens) + " or more");
  bound.batch = batch;
  bound.seq = seq;
  bound.tokens = tokens;
  bound.sequences = batch;
  bound.maxNewTokens = seq;
  bound.logitRows = tokens;
  return bound;
}

std::vector<int64_t> tokenIds(const HostArray &array) {
  int64_t count = array.numElements();
  std::vector<int64_t> ids(static_cast<size_t>(count));
  for (int64_t t = 0; t < count; ++t) {
    if (array.type == art::ELEMENT_TYPE_I64) {
      std::memcpy(&ids[t], array.bytes.data() + 8 * t, 8);
    } else {
      int32_t value;
      std::memcpy(&value, array.bytes.data() + 4 * t, 4);
      ids[t] = value;
    }
  }
  return ids;
}

std::vector<int64_t> outputShape(const art::ModelInfo &model, const std::string &name,
                                 int64_t batch, int64_t seq, int64_t elements) {
  const art::TensorSpec *spec = nullptr;
  for (const art::TensorSpec &candidate : model.outputs())
    if (candidate.name() == name)
      spec = &candidate;
  std::vector<int64_t> shape;
  if (spec) {
    for (int d = 0; d < spec->dims_size(); ++d) {
      const art::Dim &dim = spec->dims(d);
      if (dim.kind_case() == art::Dim::kSize)
        shape.push_back(dim.size());
      else if (d == 0)
        shape.push_back(batch);
      else if (d == 1)
        shape.push_back(seq);
      else
        shape.push_back(-1);
    }
  }
  int64_t known = 1, unknown = 0;
  for (int64_t dim : shape)
    dim < 0 ? ++unknown : known *= dim;
  if (!spec || unknown > 1 || (unknown == 0 && known != elements))
    return {batch, seq, elements / (batch * seq)};
  if (unknown == 1)
    for (int64_t &dim : shape)
      if (dim < 0)
        dim = elements / known;
  return shape;
}

Status checkStepArrays(const art::ExecProgram &program, const StepArrays &arrays,
                       int64_t maxBlocksPerSequence) {
  int64_t tokens = static_cast<int64_t>(arrays.tokenIds.size());
  int64_t sequences = static_cast<int64_t>(arrays.contextLens.size());
  if (tokens <= 0 || tokens > program.arena().bound_tokens())
    return invalidArgumentError("step: " + std::to_string(tokens) +
                                " tokens, outside [1, the artifact's bound of " +
                                std::to_string(program.arena().bound_tokens()) + "]");
  if (sequences < 1 || sequences > tokens ||
      arrays.seqStarts.size() != static_cast<size_t>(sequences + 1) ||
      arrays.positions.size() != static_cast<size_t>(tokens) ||
      arrays.slotIds.size() != static_cast<size_t>(tokens) ||
      arrays.blockTables.size() != static_cast<size_t>(sequences * maxBlocksPerSequence))
    return invalidArgumentError("step: the metadata arrays have inconsistent sizes");
  if (gathersLogitRows(program)) {
    if (arrays.logitIndices.empty() || arrays.logitIndices.size() > size_t(tokens))
      return invalidArgumentError("step: " + std::to_string(arrays.logitIndices.size()) +
                                  " logit rows, outside [1, " + std::to_string(tokens) + "]");
    for (int64_t row : arrays.logitIndices)
      if (row < 0 || row >= tokens)
        return invalidArgumentError("step: logit row " + std::to_string(row) +
                                    " is not one of the " + std::to_string(tokens) + " tokens");
  }
  return okStatus();
}

BoundInputs stepSizes(const StepArrays &arrays) {
  BoundInputs sizes;
  sizes.tokens = static_cast<int64_t>(arrays.tokenIds.size());
  sizes.batch = 1;
  sizes.seq = sizes.tokens;
  sizes.sequences = static_cast<int64_t>(arrays.contextLens.size());
  for (size_t s = 0; s + 1 < arrays.seqStarts.size(); ++s)
    sizes.maxNewTokens = std::max(sizes.maxNewTokens, arrays.seqStarts[s + 1] - arrays.seqStarts[s]);
  sizes.logitRows =
      arrays.logitIndices.empty() ? sizes.tokens : static_cast<int64_t>(arrays.logitIndices.size());
  return sizes;
}

int64_t bufferElements(const art::Buffer &buffer, int64_t tokens, int64_t logitRows) {
  uint64_t elementBytes = art::elementSize(buffer.element_type());
  if (elementBytes == 0)
    return 0;
  return affineAt(buffer.size(), buffer.per_logit_row() ? logitRows : tokens) /
         static_cast<int64_t>(elementBytes);
}

bool runsPerLogitRow(const art::ExecProgram &program, const art::Launch &launch) {
  return launch.outputs_size() > 0 && launch.outputs(0) < uint32_t(program.buffers_size()) &&
         program.buffers(int(launch.outputs(0))).per_logit_row();
}

bool gathersLogitRows(const art::ExecProgram &program) {
  return program.outputs_size() == 1 &&
         program.outputs(0).buffer() < uint32_t(program.buffers_size()) &&
         program.buffers(int(program.outputs(0).buffer())).per_logit_row();
}

const std::vector<int64_t> *stepInput(const StepArrays &arrays, const std::string &name) {
  if (name == "token_ids")
    return &arrays.tokenIds;
  if (name == "positions")
    return &arrays.positions;
  if (name == "seq_starts")
    return &arrays.seqStarts;
  if (name == "context_lens")
    return &arrays.contextLens;
  if (name == "block_tables")
    return &arrays.blockTables;
  if (name == "slot_ids")
    return &arrays.slotIds;
  if (name == "logit_indices")
    return &arrays.logitIndices;
  return nullptr;
}

} // namespace infer::exec
