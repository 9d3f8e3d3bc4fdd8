#!/usr/bin/env python3
"""Drops what the torch exporter writes beside the graph and infer does not read: each node's
metadata_props (stack traces, module paths: about a third of a tiny model's file) and doc strings.
The graph, its names, initializers and value_info stay, so goldens and tests are unchanged.

  strip_metadata.py MODEL.onnx...    (in place; make_family_model.py applies it to new models)
"""
import sys

import onnx


def strip(model):
    """Removes node metadata and doc strings from `model` (an onnx.ModelProto), in place."""
    graphs = [model.graph]
    while graphs:
        graph = graphs.pop()
        graph.doc_string = ""
        for node in graph.node:
            del node.metadata_props[:]
            node.doc_string = ""
            for attribute in node.attribute:
                if attribute.HasField("g"):
                    graphs.append(attribute.g)
                graphs.extend(attribute.graphs)
    model.doc_string = ""
    return model


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        model = onnx.load(path, load_external_data=False)
        before = model.ByteSize()
        onnx.save(strip(model), path)
        print(f"{path}: {before} -> {model.ByteSize()} bytes")


if __name__ == "__main__":
    main()
