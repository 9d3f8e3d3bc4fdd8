//===- ProgramIO.h - binding a forward's inputs and shaping its outputs ---===//
//
// The checks every backend makes before running the exec program (each input
// named and known, [batch, seq] integer ids, T within the artifact's bound)
// and the shape an output buffer is given back in.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_EXEC_PROGRAMIO_H
#define INFER_RUNTIME_EXEC_PROGRAMIO_H

#include "runtime/exec/Backend.h"

#include <cstdint>
#include <vector>

namespace infer::exec {

struct BoundInputs {
  int64_t batch = 0, seq = 0, tokens = 0;
  /// Step programs: sequences, the most new tokens of one of them, and the
  /// logit rows R (per_logit_row buffers are sized by R).
  int64_t sequences = 0, maxNewTokens = 0, logitRows = 0;
  /// By ExecProgram input index.
  std::vector<const HostArray *> arrays;
};

StatusOr<BoundInputs> bindInputs(const artifact::ExecProgram &program,
                                 const std::vector<NamedArray> &inputs);

/// The ids of input `array` as int64 (it holds int64 or int32).
std::vector<int64_t> tokenIds(const HostArray &array);

/// The shape of output `name` holding `elements` values, from the model's
/// output spec with its symbolic dims bound to batch and seq.
std::vector<int64_t> outputShape(const artifact::ModelInfo &model, const std::string &name,
                                 int64_t batch, int64_t seq, int64_t elements);

/// Checks a step's metadata against the step program's token bound and the
/// block-table width: T in [1, bound], 1 <= S <= T, and every array sized for
/// T tokens of S sequences.
Status checkStepArrays(const artifact::ExecProgram &program, const StepArrays &arrays,
                       int64_t maxBlocksPerSequence);

/// The array of `arrays` that feeds the step program's input `name`
/// ("token_ids", "positions", ...), or nullptr for a name it has none for.
const std::vector<int64_t> *stepInput(const StepArrays &arrays, const std::string &name);

/// The sizes of a step over `arrays` (batch 1, seq T; logitRows from
/// logitIndices, or T when the program has no logit_indices input).
BoundInputs stepSizes(const StepArrays &arrays);

/// Elements of `buffer` at T = tokens and R = logitRows.
int64_t bufferElements(const artifact::Buffer &buffer, int64_t tokens, int64_t logitRows);

/// Whether a launch runs over the step's logit rows (its output is a
/// per_logit_row buffer): then its `tokens` is R.
bool runsPerLogitRow(const artifact::ExecProgram &program, const artifact::Launch &launch);

/// Whether the step program computes only the rows named by logit_indices
/// (its logits output is a per_logit_row buffer).
bool gathersLogitRows(const artifact::ExecProgram &program);

/// `value` at T = tokens.
inline int64_t affineAt(const artifact::Affine &value, int64_t tokens) {
  return value.a() * tokens + value.b();
}

} // namespace infer::exec

#endif // INFER_RUNTIME_EXEC_PROGRAMIO_H
