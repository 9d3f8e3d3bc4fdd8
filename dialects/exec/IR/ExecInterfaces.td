//===- ExecInterfaces.td - exec op interfaces --------------*- tablegen -*-===//
//
// What every kernel launch says about itself, so that the artifact writer
// (and any other pass over launches) reads it from the op instead of keeping
// a list per op kind.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_EXEC_IR_EXECINTERFACES_TD
#define INFER_DIALECTS_EXEC_IR_EXECINTERFACES_TD

include "mlir/IR/OpBase.td"

def Exec_LaunchOpInterface : OpInterface<"LaunchOpInterface"> {
  let cppNamespace = "::infer::exec";
  let description = [{
    A kernel launch: its ODS operand groups, in order, each with its ODS name.
    The groups named `out` / `outs` are the buffers it writes; every other
    group's name is an operand role, stored in the artifact as the
    `OperandRole` `ROLE_<NAME>` (runtime/artifact/artifact.proto), so the
    runtime finds an operand by role, never by position or by a string.
    The names come from each op's `arguments` (`Exec_LaunchOp` computes them
    in TableGen), so adding an operand to an op is the only edit.
  }];
  let methods = [
    StaticInterfaceMethod<"The ODS names of the operand groups, in ODS order.",
      "::llvm::ArrayRef<::llvm::StringLiteral>", "getOperandGroupNames", (ins), [{}],
      [{ return ConcreteOp::kOperandGroupNames; }]>,
    InterfaceMethod<"The operands of ODS group `index` (none for an absent optional).",
      "::mlir::Operation::operand_range", "getOperandGroup", (ins "unsigned":$index), [{}],
      [{ return $_op.getODSOperands(index); }]>,
  ];
}

// The `kOperandGroupNames` a `LaunchOpInterface` op declares: the names of the
// entries of `args` that are operands (type constraints, not attributes).
class Exec_OperandGroupNames<dag args> {
  list<string> names = !foldl([]<string>, !range(!size(args)), acc, i,
      !if(!initialized(!getdagarg<TypeConstraint>(args, i)),
          !listconcat(acc, [!getdagname(args, i)]), acc));
  code declaration = "static constexpr ::llvm::StringLiteral kOperandGroupNames[] = {"
      # !interleave(!foreach(name, names, "\"" # name # "\""), ", ") # "};";
}

#endif // INFER_DIALECTS_EXEC_IR_EXECINTERFACES_TD
