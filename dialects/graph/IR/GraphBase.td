//===- GraphBase.td - graph dialect definition -------------*- tablegen -*-===//
//
// The `graph` dialect: tensor ops with ONNX semantics, the first IR that an
// imported model lands in. Opset differences are resolved by the importer, so
// every op here has exactly one form.
//
//===----------------------------------------------------------------------===//

#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHBASE_TD
#define INFER_DIALECTS_GRAPH_IR_GRAPHBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpAsmInterface.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::infer::graph";
  let summary = "Tensor operations with ONNX semantics";
  let description = [{
    Ops mirror ONNX operators (numpy-style broadcasting, integer shape
    arithmetic, ONNX attribute meanings) but in a single canonical form:
    axes are non-negative whenever the operand rank is known, optional
    inputs that older opsets carried as attributes are operands, and
    variadic elementwise ops (Max, Min, Sum) are binary.

    Weights are `graph.weight <key> : type` ops whose bytes live in the
    dialect's resource section, backed by an mmap of the ONNX external
    data file (printed as a `"file:<path>:<offset>:<size>"` reference,
    never as a copy of the data) or, for weights stored inside the
    protobuf, by the bytes moved out of the parsed message.

    Function arguments and results carry `graph.name` (the ONNX value
    name) and `graph.dims`, the ONNX symbolic dimension names (empty
    string for a static dim).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

class Graph_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Graph_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHBASE_TD
