//===- BufferChecks.cpp - may one kernel do two launches' work? -----------===//

#include "codegen/cuda/BufferChecks.h"

namespace infer::codegen {
namespace art = artifact;

bool buffersApartForEveryT(const art::ExecProgram &program, uint32_t a, uint32_t b, int64_t last) {
  if (a >= uint32_t(program.buffers_size()) || b >= uint32_t(program.buffers_size()))
    return false;
  const art::Buffer &x = program.buffers(int(a)), &y = program.buffers(int(b));
  auto at = [](const art::Affine &value, int64_t tokens) { return value.a() * tokens + value.b(); };
  auto before = [&](const art::Buffer &first, const art::Buffer &second, int64_t tokens) {
    return at(first.offset(), tokens) + at(first.size(), tokens) <= at(second.offset(), tokens);
  };
  return (before(x, y, 1) && before(x, y, last)) || (before(y, x, 1) && before(y, x, last));
}

bool readOnlyBy(const art::ExecProgram &program, uint32_t buffer, int readerA, int readerB) {
  for (int i = 0; i < program.launches_size(); ++i)
    if (i != readerA && i != readerB)
      for (const art::Operand &operand : program.launches(i).operands())
        if (operand.ref().target_case() == art::Ref::kBuffer && operand.ref().buffer() == buffer)
          return false;
  for (const auto *bindings : {&program.inputs(), &program.outputs()})
    for (const art::Binding &binding : *bindings)
      if (binding.buffer() == buffer)
        return false;
  return true;
}

bool unreadAfter(const art::ExecProgram &program, uint32_t buffer, int index) {
  for (int i = index + 1; i < program.launches_size(); ++i)
    for (const art::Operand &operand : program.launches(i).operands())
      if (operand.ref().target_case() == art::Ref::kBuffer && operand.ref().buffer() == buffer)
        return false;
  for (const art::Binding &binding : program.outputs())
    if (binding.buffer() == buffer)
      return false;
  return true;
}

bool decodeMayReplaceRotary(const art::ExecProgram &program, int index) {
  if (index < 1 || index >= program.launches_size())
    return false;
  const art::Launch &rotary = program.launches(index - 1), &attention = program.launches(index);
  if (rotary.kind() != art::Launch::ROTARY || attention.kind() != art::Launch::KV_ATTENTION ||
      rotary.outputs_size() != 1 || attention.outputs_size() != 1)
    return false;
  const uint32_t rotated = rotary.outputs(0);
  if (!readOnlyBy(program, rotated, index - 1, index))
    return false;
  for (const art::Operand &operand : rotary.operands())
    if (operand.role() == "input" &&
        (operand.ref().target_case() != art::Ref::kBuffer ||
         (operand.ref().buffer() != rotated &&
          !buffersApartForEveryT(program, operand.ref().buffer(), attention.outputs(0),
                                 program.arena().bound_tokens()))))
      return false;
  return true;
}

} // namespace infer::codegen
