"""infer: Python front door of the infer compiler and runtime.

- `infer.Engine`: generate from a compiled MODEL.infer over the C++ runtime
  (libinfer.so through ctypes; see infer/engine.py).
- `python -m infer.export`: a Hugging Face checkpoint or config.json to ONNX plus
  its tokenizer files, ready for `infer-compile` (needs torch and transformers).
"""
from .engine import Chunk, Completion, Engine
from ._native import InferError

__all__ = ["Engine", "Completion", "Chunk", "InferError"]
__version__ = "0.1.0"
