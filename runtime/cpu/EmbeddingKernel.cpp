//===- EmbeddingKernel.cpp - token rows (+ learned positions) -------------===//
//
// out[t] = table[ids[t]] (+ position_table[position_offset + pos(t)]), pos(t)
// being position_ids[t] when given (the step program), else t % seq.

#include "runtime/cpu/CpuKernels.h"

#include <cstring>

namespace infer::cpu {

Status runEmbedding(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *table, args.required(artifact::ROLE_TABLE));
  ASSIGN_OR_RETURN(const View *ids, args.required(artifact::ROLE_IDS));
  ASSIGN_OR_RETURN(int64_t hidden, args.intAttr("hidden"));
  int64_t offset = args.intAttr("position_offset", 0);
  if (hidden <= 0 || table->elements % hidden != 0)
    return args.error("table of " + std::to_string(table->elements) +
                      " elements is not rows of hidden = " + std::to_string(hidden));
  RETURN_IF_ERROR(args.expectF32(*table, table->elements, "table"));
  if (ids->type != artifact::ELEMENT_TYPE_I64 || ids->elements != args.tokens)
    return args.error("ids must be i64 with one id per token");
  const View &out = args.outputs[0];
  RETURN_IF_ERROR(args.expectF32(out, args.tokens * hidden, "output"));
  int64_t vocab = table->elements / hidden;
  for (int64_t t = 0; t < args.tokens; ++t) {
    int64_t id = ids->i64()[t];
    if (id < 0 || id >= vocab)
      return invalidArgumentError("token id " + std::to_string(id) + " at (batch " +
                                  std::to_string(t / args.seq) + ", position " +
                                  std::to_string(t % args.seq) +
                                  ") is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    std::memcpy(out.mutableF32() + t * hidden, table->f32() + id * hidden,
                sizeof(float) * static_cast<size_t>(hidden));
  }
  const View *positions = args.operand(artifact::ROLE_POSITION_TABLE);
  if (!positions)
    return okStatus();
  if (positions->elements % hidden != 0)
    return args.error("position table is not rows of hidden = " + std::to_string(hidden));
  RETURN_IF_ERROR(args.expectF32(*positions, positions->elements, "position table"));
  int64_t rows = positions->elements / hidden;
  // The step program gives each token's absolute position.
  const View *positionIds = args.operand(artifact::ROLE_POSITION_IDS);
  if (positionIds &&
      (positionIds->type != artifact::ELEMENT_TYPE_I64 || positionIds->elements != args.tokens))
    return args.error("position ids must be i64 with one position per token");
  for (int64_t t = 0; t < args.tokens; ++t) {
    int64_t position = positionIds ? positionIds->i64()[t] : t % args.seq;
    int64_t row = offset + position;
    if (row < 0 || row >= rows)
      return invalidArgumentError("position " + std::to_string(position) +
                                  " is beyond the model's " + std::to_string(rows - offset) +
                                  " learned positions");
    float *dst = out.mutableF32() + t * hidden;
    const float *src = positions->f32() + row * hidden;
    for (int64_t h = 0; h < hidden; ++h)
      dst[h] += src[h];
  }
  return okStatus();
}

} // namespace infer::cpu
