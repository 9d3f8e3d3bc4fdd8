//===- ExecDialect.h - exec dialect declaration -----------------*- C++ -*-===//
#ifndef INFER_DIALECTS_EXEC_IR_EXECDIALECT_H
#define INFER_DIALECTS_EXEC_IR_EXECDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/exec/IR/ExecOpsDialect.h.inc"

#endif // INFER_DIALECTS_EXEC_IR_EXECDIALECT_H
