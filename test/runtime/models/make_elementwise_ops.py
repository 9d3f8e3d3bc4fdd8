#!/usr/bin/env python3
"""Writes elementwise-ops.onnxtext, its input and its numpy golden (committed):

  python3 test/runtime/models/make_elementwise_ops.py

A tiny "model" (an embedding, then one elementwise group) that uses every float elementwise
op the exec lowering puts in a fusion group (dialects/graph/Transforms/GroupElementwise.cpp)
and the reductions it absorbs: Exp, Tanh, Erf, Sigmoid, Log, Cos, Sin, Pow, Max, Min, Where,
Sqrt, Reciprocal, Clip (both bounds, only the max, only the min), Neg, Relu, Gelu, Abs, Add,
Sub, Mul, Div, ReduceMean, ReduceSum, ReduceMax. The golden is numpy's, in float64 from the
float32 table (test/runtime/CMakeLists.txt compares within 1e-5, and with the reference
interpreter exactly).
"""
import math
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(44)
table = (rng.standard_normal((16, 8)) * 1.5).astype(np.float32)
mask = rng.integers(0, 2, 8).astype(bool)
ids = rng.integers(0, 16, (2, 5)).astype(np.int64)


def floats(a):
    return ", ".join(repr(float(v)) for v in a.ravel())


text = f'''# Every float elementwise op a fusion group can hold, for the cpu backend
# (written by make_elementwise_ops.py; test/runtime/CMakeLists.txt runs it).
<ir_version: 8, opset_import: ["" : 20]>
elementwise_ops (int64[batch, seq] input_ids) => (float[batch, seq, 8] logits)
<float[16, 8] table = {{{floats(table)}}}, bool[8] mask = {{{", ".join("1" if m else "0" for m in mask)}}}, float half = {{0.5}}, float one = {{1}}, float three_halves = {{1.5}}, float lo = {{-0.75}}, float hi = {{0.75}}, int64[1] last = {{-1}}>
{{
  x = Gather(table, input_ids)
  ax = Abs(x)
  ax1 = Add(ax, one)
  xh = Mul(x, half)
  e = Exp(xh)
  t = Tanh(x)
  r = Erf(x)
  s = Sigmoid(x)
  l = Log(ax1)
  c = Cos(x)
  sn = Sin(x)
  axh = Add(ax, half)
  p = Pow(axh, three_halves)
  mx = Max(e, t)
  mn = Min(r, s)
  w = Where(mask, c, sn)
  q = Sqrt(ax1)
  rc = Reciprocal(ax1)
  cl = Clip(x, lo, hi)
  cmax = Clip(x, , hi)
  cmin = Clip(x, lo)
  nx = Neg(x)
  rl = Relu(nx)
  g = Gelu <approximate = "tanh"> (x)
  mean = ReduceMean(x, last)
  sum = ReduceSum(t, last)
  max = ReduceMax(r, last)
  centered = Sub(x, mean)
  asum = Abs(sum)
  asum1 = Add(asum, one)
  scaled = Div(centered, asum1)
  a1 = Add(mx, mn)
  a2 = Add(a1, w)
  a3 = Add(a2, l)
  a4 = Add(a3, p)
  qrc = Mul(q, rc)
  a5 = Add(a4, qrc)
  a6 = Add(a5, cl)
  a7 = Add(a6, rl)
  a8 = Add(a7, g)
  a9 = Add(a8, scaled)
  a10 = Add(a9, cmax)
  a11 = Add(a10, cmin)
  logits = Add(a11, max)
}}
'''

x = table.astype(np.float64)[ids]
erf = np.vectorize(math.erf)
ax1 = np.abs(x) + 1
t, r, s = np.tanh(x), erf(x), 1 / (1 + np.exp(-x))
gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
scaled = (x - x.mean(-1, keepdims=True)) / (np.abs(t.sum(-1, keepdims=True)) + 1)
logits = (np.maximum(np.exp(0.5 * x), t) + np.minimum(r, s) + np.where(mask, np.cos(x), np.sin(x))
          + np.log(ax1) + (np.abs(x) + 0.5) ** 1.5 + np.sqrt(ax1) / ax1 + np.clip(x, -0.75, 0.75)
          + np.maximum(-x, 0) + gelu + scaled + np.minimum(x, 0.75) + np.maximum(x, -0.75)
          + r.max(-1, keepdims=True))

with open(os.path.join(here, "elementwise-ops.onnxtext"), "w") as f:
    f.write(text)
np.save(os.path.join(here, "elementwise-ops.in0.npy"), ids)
np.save(os.path.join(here, "elementwise-ops.out0.npy"), logits.astype(np.float32))
