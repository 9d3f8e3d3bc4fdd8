//===- GraphAttrs.td - graph dialect attributes ------------*- tablegen -*-===//

#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHATTRS_TD
#define INFER_DIALECTS_GRAPH_IR_GRAPHATTRS_TD

include "dialects/graph/IR/GraphBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Graph_WeightAttr : Graph_Attr<"Weight", "weight", [TypedAttrInterface]> {
  let summary = "A tensor whose bytes live in a graph dialect resource";
  let description = [{
    Refers to a blob in the `graph` dialect's resource section by key. The
    blob is either an mmap'd range of a file (printed as
    `"file:<path>:<offset>:<size>"`) or, for data that has no file behind it,
    hex bytes as the builtin dialect prints its blobs.

    ```mlir
    %w = graph.weight <"model.embed_tokens.weight"> : tensor<512x64xf32>
    {-#
      dialect_resources: { graph: {
        "model.embed_tokens.weight": "file:/models/m.onnx.data:0:131072"
      } }
    #-}
    ```
  }];
  let parameters = (ins
    AttributeSelfTypeParameter<"", "::mlir::ShapedType">:$type,
    ResourceHandleParameter<"::infer::graph::WeightHandle">:$handle
  );
  let assemblyFormat = "`<` $handle `>`";
  let extraClassDeclaration = [{
    /// The bytes of the weight, or an empty array if the resource has no blob.
    ::llvm::ArrayRef<char> getData() const;
  }];
}

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHATTRS_TD
