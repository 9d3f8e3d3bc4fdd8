"""Loads libinfer.so, the C API of infer's runtime (runtime/capi/infer.h), with ctypes.

The library is looked for, in order: $INFER_LIBRARY; beside this file (where
`pip install ./python` puts it); a development build of the repository
(build/lib/libinfer.so next to python/). One shared library serves every Python
version, so the package itself is pure Python.
"""
import ctypes
import json
import os

API_VERSION = 1
_LIBRARY = None
# Strings the C API returns (JSON, freed with infer_free); handles are c_void_p.
_TEXT = ctypes.POINTER(ctypes.c_char)


class InferError(RuntimeError):
    """An error reported by infer's runtime (bad input, a missing tokenizer, ...)."""


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("INFER_LIBRARY"):
        yield os.environ["INFER_LIBRARY"]
    yield os.path.join(here, "libinfer.so")
    yield os.path.join(here, "..", "..", "build", "lib", "libinfer.so")


def library():
    """The loaded libinfer.so with its function signatures declared."""
    global _LIBRARY
    if _LIBRARY is not None:
        return _LIBRARY
    tried = []
    for path in _candidates():
        if os.path.isfile(path):
            lib = ctypes.CDLL(os.path.abspath(path))
            break
        tried.append(path)
    else:
        raise InferError("libinfer.so not found (tried: " + ", ".join(tried) +
                         "); install the package with `pip install ./python` or set INFER_LIBRARY")
    c_char_pp = ctypes.POINTER(ctypes.c_char_p)
    handle, text, error = ctypes.c_void_p, _TEXT, c_char_pp
    signatures = {
        "infer_api_version": (ctypes.c_int, []),
        "infer_engine_open": (handle, [ctypes.c_char_p, ctypes.c_char_p, error]),
        "infer_engine_close": (None, [handle]),
        "infer_engine_info": (text, [handle, error]),
        "infer_engine_tokenize": (text, [handle, ctypes.c_char_p, ctypes.c_int, error]),
        "infer_engine_detokenize": (text, [handle, ctypes.c_char_p, ctypes.c_int, error]),
        "infer_engine_apply_chat_template": (text, [handle, ctypes.c_char_p, error]),
        "infer_engine_submit": (ctypes.c_int64, [handle, ctypes.c_char_p, error]),
        "infer_engine_cancel": (ctypes.c_int, [handle, ctypes.c_int64, error]),
        "infer_engine_has_unfinished": (ctypes.c_int, [handle]),
        "infer_engine_step": (text, [handle, error]),
        "infer_free": (None, [ctypes.c_void_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    if lib.infer_api_version() != API_VERSION:
        raise InferError(f"libinfer.so speaks C API version {lib.infer_api_version()}, "
                         f"this package version {API_VERSION}: reinstall the package")
    _LIBRARY = lib
    return lib


def call(function, *args):
    """Calls a C API function that reports errors through its last argument.

    Returns the C result: a JSON text is parsed (and the C string freed); an
    error becomes InferError with the runtime's message.
    """
    lib = library()
    error = ctypes.c_char_p()
    result = function(*args, ctypes.byref(error))
    if error.value is not None:
        message = error.value.decode("utf-8", "replace")
        lib.infer_free(ctypes.cast(error, ctypes.c_void_p))
        raise InferError(message)
    if function.restype is _TEXT:
        try:
            return json.loads(ctypes.string_at(result).decode("utf-8"))
        finally:
            lib.infer_free(ctypes.cast(result, ctypes.c_void_p))
    return result


def encode(text):
    """A str as the C API's UTF-8 bytes; other types are refused."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text.encode("utf-8")
