//===- ExecDialect.cpp - exec dialect registration ------------------------===//

#include "dialects/exec/IR/ExecDialect.h"
#include "dialects/exec/IR/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace infer::exec;

#include "dialects/exec/IR/ExecOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/exec/IR/ExecOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/exec/IR/ExecOpsAttrs.cpp.inc"

void ExecDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/exec/IR/ExecOps.cpp.inc"
      >();
}

void ExecDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/exec/IR/ExecOpsTypes.cpp.inc"
      >();
}

void ExecDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/exec/IR/ExecOpsAttrs.cpp.inc"
      >();
}

LogicalResult AffineAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t perToken,
                                 int64_t constant) {
  if (perToken < 0 || constant < 0)
    return emitError() << "byte counts are non-negative, got " << perToken << " * T + "
                       << constant;
  return success();
}
