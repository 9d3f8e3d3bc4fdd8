//===- CopyKernel.cpp - strided row copy (reshape, last-dim slice) ---------===//
//
// The input is rows of `in_features` elements; elements [offset, offset +
// length) of each row go to consecutive rows of the output. A reshape is the
// whole-row case (in_features = length, offset = 0). Bytes are copied as
// they are, so any element type works as long as input and output agree.
// With a map, element f of each output row is element map[f] of the input
// row (-1: left as it is). runGatherRows copies whole rows picked by an index buffer (the step
// program's logit rows).

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/cpu/CpuKernels.h"

#include <cstring>

namespace infer::cpu {

Status runCopy(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(int64_t inFeatures, args.intAttr("in_features"));
  ASSIGN_OR_RETURN(int64_t offset, args.intAttr("offset"));
  ASSIGN_OR_RETURN(int64_t length, args.intAttr("length"));
  if (args.outputs.size() != 1)
    return args.error("writes one buffer");
  const View &out = args.outputs[0];
  const View *map = args.operand(artifact::ROLE_MAP);
  if (inFeatures <= 0 || length <= 0 || offset < 0 || (!map && offset + length > inFeatures))
    return args.error("copies elements [" + std::to_string(offset) + ", " +
                      std::to_string(offset + length) + ") of rows of " +
                      std::to_string(inFeatures));
  if (input->type != out.type)
    return args.error(std::string("copies ") + artifact::elementTypeName(input->type) +
                      " into " + artifact::elementTypeName(out.type));
  if (out.elements % length != 0)
    return args.error("output of " + std::to_string(out.elements) +
                      " elements is not whole rows of " + std::to_string(length));
  int64_t rows = out.elements / length;
  if (input->elements != rows * inFeatures)
    return args.error("input has " + std::to_string(input->elements) + " elements, expected " +
                      std::to_string(rows * inFeatures));
  uint64_t size = artifact::elementSize(out.type);
  if (size == 0)
    return args.error("has an unknown element type");
  const char *src = static_cast<const char *>(input->data);
  char *dst = static_cast<char *>(out.data);
  if (map) {
    if (map->type != artifact::ELEMENT_TYPE_I64 || map->elements != length || offset != 0)
      return args.error("needs an i64 map of " + std::to_string(length) + " entries");
    for (int64_t f = 0; f < length; ++f)
      if (map->i64()[f] < -1 || map->i64()[f] >= inFeatures)
        return args.error("maps feature " + std::to_string(f) + " to " +
                          std::to_string(map->i64()[f]) + " of rows of " +
                          std::to_string(inFeatures));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t f = 0; f < length; ++f)
        if (int64_t from = map->i64()[f]; from >= 0)
          std::memcpy(dst + static_cast<size_t>(r * length + f) * size,
                      src + static_cast<size_t>(r * inFeatures + from) * size, size);
    return okStatus();
  }
  if (offset == 0 && length == inFeatures) {
    std::memmove(dst, src, static_cast<size_t>(rows * length) * size);
    return okStatus();
  }
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + static_cast<size_t>(r * length) * size,
                src + static_cast<size_t>(r * inFeatures + offset) * size,
                static_cast<size_t>(length) * size);
  return okStatus();
}

Status runGatherRows(const LaunchArgs &args) {
  ASSIGN_OR_RETURN(const View *input, args.required(artifact::ROLE_INPUT));
  ASSIGN_OR_RETURN(const View *indices, args.required(artifact::ROLE_INDICES));
  ASSIGN_OR_RETURN(int64_t features, args.intAttr("features"));
  if (args.outputs.size() != 1)
    return args.error("writes one buffer");
  const View &out = args.outputs[0];
  uint64_t size = artifact::elementSize(out.type);
  if (features <= 0 || size == 0 || input->type != out.type ||
      indices->type != artifact::ELEMENT_TYPE_I64 || out.elements != indices->elements * features ||
      input->elements % features != 0)
    return args.error("needs i64 indices and rows of " + std::to_string(features) +
                      " elements of one type");
  int64_t inputRows = input->elements / features;
  for (int64_t r = 0; r < indices->elements; ++r) {
    int64_t row = indices->i64()[r];
    if (row < 0 || row >= inputRows)
      return args.error("gathers row " + std::to_string(row) + " of " + std::to_string(inputRows));
    std::memcpy(static_cast<char *>(out.data) + static_cast<size_t>(r * features) * size,
                static_cast<const char *>(input->data) + static_cast<size_t>(row * features) * size,
                static_cast<size_t>(features) * size);
  }
  return okStatus();
}

} // namespace infer::cpu
