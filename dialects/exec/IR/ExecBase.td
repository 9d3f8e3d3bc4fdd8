//===- ExecBase.td - exec dialect definition ---------------*- tablegen -*-===//
//
// The `exec` dialect: what the runtime executes. Every value of an entry
// point lives in a planned byte range of one arena, in a weight of the
// artifact, or in a small inline constant; kernels are ops that read and
// write those buffers.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_EXEC_IR_EXECBASE_TD
#define INFER_DIALECTS_EXEC_IR_EXECBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::infer::exec";
  let summary = "Planned buffers and kernel launches over a packed batch of tokens";
  let description = [{
    One `exec.program` per entry point. Its single block is straight-line
    code the runtime walks in order:

    * `exec.arena` — the one device allocation for activations. Its size is
      `#exec.affine<a * T + b>` bytes, T being the runtime token count
      (batch * seq); the arena records the bound it was planned for
      (`bound_tokens`, the compile's `--max-batch-tokens`).
    * `exec.buffer` — a byte range of the arena: `offset` and `size`, both
      affine in T, plus the element type of what it holds. Before memory
      planning a buffer has no offset; `--infer-plan-memory` assigns one.
    * `exec.weight` / `exec.constant` — a weight of the artifact by name (the
      name the artifact writer stores it under, packed weights as
      `a+b+c`) and a small inline constant (rotary frequencies).
    * `exec.input` / `exec.output` — where the runtime writes an entry input
      before the program runs and reads an entry output after it.
    * One launch op per kernel family (`exec.embedding`, `exec.rms_norm`,
      `exec.layer_norm`, `exec.gemm`, `exec.rotary`, `exec.attention`,
      `exec.kv_attention` (the `step` entry's paged attention),
      `exec.gated_activation`, `exec.elementwise`). Launches have no
      results: they name their input buffers and the arena buffer they
      write (destination-passing style), so liveness and serialization
      only have to look at operands. Shapes are token-major [T, F]: a
      launch carries its feature sizes (F, N, K, heads) as attributes, T
      comes from the runtime. `exec.elementwise` carries the fusion group's
      region of `graph` ops verbatim (its kernel is generated from it).
    * `exec.return` ends the program.

    This shape was chosen because it is the simplest to lower to (one op
    per fused graph op, a buffer per tensor value) and to serialize (a flat
    op list whose operands are buffer indices; sizes and offsets are pairs
    of integers). The memory plan is made at the bound: offsets are
    constants (`0 * T + off`) valid for every T <= bound_tokens.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

class Exec_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Exec_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class Exec_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Exec_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Exec_ArenaType : Exec_Type<"Arena", "arena"> {
  let summary = "The activation arena of a program";
}

def Exec_BufferType : Exec_Type<"Buffer", "buffer"> {
  let summary = "A byte range: an arena buffer, a weight or a constant";
}

def Exec_AffineAttr : Exec_Attr<"Affine", "affine"> {
  let summary = "A byte count `per_token * T + constant`, T the runtime token count";
  let description = [{
    ```mlir
    #exec.affine<256 * T + 0>
    ```
  }];
  let parameters = (ins "int64_t":$perToken, "int64_t":$constant);
  let assemblyFormat = "`<` $perToken `*` `T` `+` $constant `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The value at `tokens` tokens.
    int64_t at(int64_t tokens) const { return getPerToken() * tokens + getConstant(); }
  }];
}

#endif // INFER_DIALECTS_EXEC_IR_EXECBASE_TD
