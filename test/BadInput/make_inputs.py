#!/usr/bin/env python3
"""Regenerates the bad ONNX files in Inputs/ (committed; needs the `onnx` package).

  python3 test/BadInput/make_inputs.py
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
os.makedirs(here, exist_ok=True)


def model_with(initializer, name):
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "W"], ["Y"], name="add")], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 8])],
        initializer=[initializer])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def external(name, location, offset, length):
    t = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[4, 8], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add(); e.key = k; e.value = v
    return t


good = model_with(numpy_helper.from_array(np.arange(32, dtype=np.float32).reshape(4, 8), "W"), "good")
data = good.SerializeToString()
open(os.path.join(here, "truncated.onnx"), "wb").write(data[: len(data) // 2])
open(os.path.join(here, "garbage.onnx"), "wb").write(np.random.default_rng(0).bytes(512))
open(os.path.join(here, "empty.onnx"), "wb").write(b"")

short = numpy_helper.from_array(np.arange(30, dtype=np.float32), "W")
short.ClearField("dims"); short.dims.extend([4, 8])
onnx.save(model_with(short, "size_mismatch"), os.path.join(here, "size-mismatch.onnx"))

onnx.save(model_with(external("W", "missing.onnx.data", 0, 128), "missing_data"), os.path.join(here, "missing-data.onnx"))
onnx.save(model_with(external("W", "../outside.onnx.data", 0, 128), "outside"), os.path.join(here, "outside-data.onnx"))
onnx.save(model_with(external("W", "short.onnx.data", 0, 128), "short_data"), os.path.join(here, "short-data.onnx"))
open(os.path.join(here, "short.onnx.data"), "wb").write(b"\0" * 64)
onnx.save(model_with(external("W", "short.onnx.data", 0, 100), "length_mismatch"), os.path.join(here, "length-mismatch.onnx"))
print("wrote", sorted(os.listdir(here)))

# .npy inputs for the reference-run cases (bad-reference-run.test).
np.save(os.path.join(here, "ids.npy"), np.array([[1, 2, 3]], dtype=np.int64))
np.save(os.path.join(here, "floats.npy"), np.array([[1.0, 2.0, 3.0]], dtype=np.float32))
np.save(os.path.join(here, "ids-3d.npy"), np.zeros((1, 2, 3), dtype=np.int64))
np.save(os.path.join(here, "ids-out-of-range.npy"), np.array([[1, 100000]], dtype=np.int64))
open(os.path.join(here, "not-npy.npy"), "wb").write(b"this is not a numpy file at all")

# External data the importer must refuse (bad-external-data.test): offsets and lengths that are
# not decimal integers, a repeated or unknown key; locations that the test turns into a link out
# of the model's directory or a FIFO.
def external_entries(name, entries):
    t = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[4, 8], data_location=TensorProto.EXTERNAL)
    for k, v in entries:
        e = t.external_data.add(); e.key = k; e.value = v
    onnx.save(model_with(t, name), os.path.join(here, name.replace("_", "-") + ".onnx"))


external_entries("hex_offset", [("location", "short.onnx.data"), ("offset", "0x10"), ("length", "128")])
external_entries("signed_length", [("location", "short.onnx.data"), ("offset", "0"), ("length", "+128")])
external_entries("repeated_key", [("location", "short.onnx.data"), ("offset", "0"), ("offset", "64"), ("length", "128")])
external_entries("unknown_key", [("location", "short.onnx.data"), ("basepath", "/"), ("length", "128")])
external_entries("link_data", [("location", "link.onnx.data"), ("offset", "0"), ("length", "128")])
external_entries("fifo_data", [("location", "fifo.onnx.data"), ("offset", "0"), ("length", "128")])

# bad-output.test: a valid model whose weight is external data (the test writes its 128 bytes).
onnx.save(model_with(external("W", "good.onnx.data", 0, 128), "good_data"), os.path.join(here, "good-data.onnx"))

# sigterm-during-write.sh: a 256 MiB embedding table as external data (the test makes the sparse
# data file), so that -o is seen mid-write.
big = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[65536, 1024], data_location=TensorProto.EXTERNAL)
for k, v in (("location", "big-external.onnx.data"), ("offset", "0"), ("length", str(65536 * 1024 * 4))):
    e = big.external_data.add(); e.key = k; e.value = v
onnx.save(helper.make_model(helper.make_graph(
    [helper.make_node("Gather", ["W", "input_ids"], ["Y"], name="embed")], "big_external",
    [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", "seq", 1024])],
    initializer=[big]), opset_imports=[helper.make_opsetid("", 17)]),
    os.path.join(here, "big-external.onnx"))

# Calibration prompts that are not UTF-8 (bad-quantize.test).
open(os.path.join(here, "calibration-not-utf8.txt"), "wb").write(b"\xff\xfe bad\n")
