//===- BufferChecks.cpp - what codegen asks of the program's buffers ------===//

#include "codegen/cuda/BufferChecks.h"

namespace infer::codegen {
namespace art = artifact;

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

} // namespace infer::codegen
