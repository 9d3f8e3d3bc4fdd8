"""Export a Hugging Face causal language model to ONNX for infer-compile.

  python -m infer.export SRC -o OUT_DIR [--dtype fp32|bf16|fp16] [--random-weights] [--seed N]
                         [--tokenizer DIR] [--max-seq-len N] [--verbose]

SRC is a local checkpoint directory (config.json + *.safetensors, sharded or not) or a config
file alone (then --random-weights is required). Nothing is downloaded. OUT_DIR receives
model.onnx (+ model.onnx.data, the weights as ONNX external data) with input `input_ids`
int64 [batch, seq] and output `logits` [batch, seq, vocab], exported by torch.onnx's dynamo
exporter, and beside it config.json, generation_config.json and the tokenizer files found.
See docs/export.md.
"""
import argparse
import contextlib
import io
import os
import re
import signal
import sys
import time

from ._export_files import (MODEL_FILES, ExportError, Output, copy_side_files, first_line, inspect_source, log,
                            mb)

PROG = "python -m infer.export"
TAG = "infer.export"

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
CONFIG_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16",
                 "fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "half": "fp16", "float": "fp32"}
DEFAULT_MAX_SEQ_CAP = 131071          # default seq bound when max_position_embeddings is huge
MAX_BATCH = 1024                      # the batch bound, as shared/tools/export_hf.py
GPU_INIT_PARAMS = 50_000_000          # random init on the GPU (when there is one) above this


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not usage + message
        print(f"{TAG}: error: {message} (see {PROG} --help)", file=sys.stderr)
        sys.exit(2)


def parse_args(argv):
    ap = _Parser(prog=PROG, description=__doc__.split("\n")[0],
                 epilog="docs/export.md describes what is written and what is refused.")
    ap.add_argument("src", metavar="SRC", help="Hugging Face checkpoint directory, or a config.json file")
    ap.add_argument("-o", "--output", metavar="OUT_DIR", required=True,
                    help="output directory (created; an existing one gets the files replaced)")
    ap.add_argument("--dtype", choices=sorted(DTYPES),
                    help="weight and activation type of the export (default: the config's dtype "
                         "when it is fp32/bf16/fp16, else fp32)")
    ap.add_argument("--random-weights", action="store_true",
                    help="random weights from --seed (required for a config alone; a checkpoint's "
                         "weights are then ignored)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    ap.add_argument("--tokenizer", metavar="DIR",
                    help="take the tokenizer files from DIR instead of SRC's directory")
    ap.add_argument("--max-seq-len", type=int, metavar="N",
                    help="upper bound of the dynamic seq dim (default max_position_embeddings - 1, "
                         f"at most {DEFAULT_MAX_SEQ_CAP})")
    ap.add_argument("--verbose", action="store_true",
                    help="show the exporter's and transformers' own output and tracebacks")
    return ap.parse_args(argv)

# ---------------------------------------------------------------------------------------------
# Model: config checks, building, export
# ---------------------------------------------------------------------------------------------

def import_ml(verbose):
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    if not verbose:
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import warnings
        warnings.filterwarnings("ignore")
    try:
        import torch
        import transformers
        import onnx
        import onnxscript  # noqa: F401  (the dynamo exporter needs it)
    except ImportError as e:
        raise ExportError(f"needs torch, transformers, onnx and onnxscript installed: {first_line(e)}")
    import logging
    if not verbose:
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        for name in ("torch.onnx", "torch.export", "torch._export", "onnxscript", "torch.fx"):
            logging.getLogger(name).setLevel(logging.ERROR)
    return torch, transformers, onnx


def causal_lm_class_names(transformers):
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    return MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def is_causal_class_name(name, causal_names):
    return (name in set(causal_names.values()) or name.endswith("ForCausalLM")
            or name.endswith("LMHeadModel"))


def load_config(src, transformers):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    raw = src.config
    mt = raw["model_type"]
    where = src.config_path
    version = transformers.__version__
    if mt not in CONFIG_MAPPING:
        custom = " (the checkpoint brings its own code via auto_map; remote code is not run)" \
            if raw.get("auto_map") else ""
        raise ExportError(f"{where}: model_type '{mt}' is not known to transformers {version}{custom}")
    config_class = CONFIG_MAPPING[mt]
    try:
        config = config_class.from_dict(dict(raw))
    except Exception as e:  # noqa: BLE001 - transformers raises many types for bad configs
        raise ExportError(f"{where}: transformers cannot read this '{mt}' config: {first_line(e)}")

    causal = causal_lm_class_names(transformers)
    archs = [a for a in (raw.get("architectures") or []) if isinstance(a, str)]
    causal_archs = [a for a in archs if is_causal_class_name(a, causal)]
    if archs and not causal_archs:
        raise ExportError(f"{where}: architecture {', '.join(archs)} ('{mt}') is not a causal language "
                          "model; infer exports decoder-only models (…ForCausalLM)")
    if mt not in causal:
        raise ExportError(f"{where}: model_type '{mt}' ({config_class.__name__}) is not a causal language "
                          f"model: transformers {version} has no AutoModelForCausalLM for it")
    if getattr(config, "is_encoder_decoder", False) and not causal_archs:
        raise ExportError(f"{where}: model_type '{mt}' is an encoder-decoder model; infer exports "
                          "decoder-only models")
    if getattr(config, "is_decoder", None) is False and hasattr(config, "add_cross_attention"):
        raise ExportError(f"{where}: model_type '{mt}' is configured as an encoder (is_decoder is false); "
                          "infer exports decoder-only models")
    model_class = None
    for a in causal_archs:  # the checkpoint's own class when transformers has it
        model_class = getattr(transformers, a, None)
        if model_class is not None:
            break
    arch = model_class.__name__ if model_class is not None else causal[mt]
    return config, model_class, arch


def choose_dtype(args, raw):
    if args.dtype:
        return args.dtype, "--dtype"
    d = raw.get("dtype", raw.get("torch_dtype"))
    if isinstance(d, str):
        d = d.replace("torch.", "")
    if isinstance(d, str) and d in CONFIG_DTYPES:
        return CONFIG_DTYPES[d], "the config's dtype"
    return "fp32", "default" + (f" (the config's dtype {d!r} is not fp32/bf16/fp16)" if d else "")


def choose_max_seq(args, text_config):
    mpe = getattr(text_config, "max_position_embeddings", None)
    if args.max_seq_len is not None:
        if args.max_seq_len < 2:
            raise ExportError(f"--max-seq-len {args.max_seq_len}: must be at least 2")
        if isinstance(mpe, int) and args.max_seq_len > mpe:
            log(f"note: --max-seq-len {args.max_seq_len} is beyond the config's max_position_embeddings {mpe}")
        return args.max_seq_len
    if not isinstance(mpe, int) or mpe < 3:
        log(f"note: the config has no usable max_position_embeddings: seq bound {DEFAULT_MAX_SEQ_CAP}")
        return DEFAULT_MAX_SEQ_CAP
    if mpe - 1 > DEFAULT_MAX_SEQ_CAP:
        log(f"note: max_position_embeddings is {mpe}: seq bound capped at {DEFAULT_MAX_SEQ_CAP} "
            "(--max-seq-len sets it)")
        return DEFAULT_MAX_SEQ_CAP
    return mpe - 1


def export_model_kwargs(transformers, config, model_class):
    """Implementation switches for an exportable graph. Mixture-of-experts layers default to
    transformers' grouped_mm kernels, a custom op torch.onnx cannot translate; batched_mm (a
    gather of each token's expert weights, then batched matmuls) exports to plain ONNX ops."""
    cls = model_class
    if cls is None:
        try:
            cls = transformers.AutoModelForCausalLM._model_mapping[type(config)]
        except Exception:  # noqa: BLE001
            return {}
    can = getattr(cls, "_can_set_experts_implementation", None)
    try:
        if can is not None and can():
            log("mixture-of-experts layers exported with experts_implementation='batched_mm'")
            return {"experts_implementation": "batched_mm"}
    except Exception:  # noqa: BLE001
        pass
    return {}


def count_params(model):
    seen, n, nbytes = set(), 0, 0
    for p in list(model.parameters()) + list(model.buffers()):
        if id(p) in seen:
            continue
        seen.add(id(p))
        n += p.numel()
        nbytes += p.numel() * p.element_size()
    return n, nbytes


def build_random(torch, transformers, config, model_class, arch, dtype, seed, text_config, model_kwargs):
    vocab = getattr(text_config, "vocab_size", 0) or 0
    hidden = getattr(text_config, "hidden_size", 0) or 0
    layers = getattr(text_config, "num_hidden_layers", 0) or 0
    approx = vocab * hidden * 2 + layers * hidden * hidden * 12
    dev = "cuda" if approx > GPU_INIT_PARAMS and torch.cuda.is_available() else "cpu"
    log(f"building {arch} with random weights (seed {seed}) on {dev}...")
    torch.manual_seed(seed)
    try:
        with torch.device(dev):
            if model_class is not None:
                model = model_class._from_config(config, dtype=torch.float32, **model_kwargs)
            else:
                model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32, **model_kwargs)
    except Exception as e:  # noqa: BLE001 - transformers' own config checks
        raise ExportError(f"transformers cannot build {arch} from this config: {first_line(e)}")
    with torch.no_grad():  # perturb every parameter so that norms and biases are not trivial
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    model = model.to(dtype)
    if dev != "cpu":
        model = model.to("cpu")
    return model.eval()


def load_weights(torch, transformers, src, config, model_class, arch, dtype, model_kwargs):
    total = sum(os.path.getsize(f) for f in src.weight_files)
    n = len(src.weight_files)
    log(f"loading {arch} weights from {n} {src.weight_format} file{'s' if n > 1 else ''} ({mb(total)})...")
    builder = model_class if model_class is not None else transformers.AutoModelForCausalLM
    try:
        model, info = builder.from_pretrained(src.dir, config=config, dtype=dtype, local_files_only=True,
                                              trust_remote_code=False, output_loading_info=True,
                                              ignore_mismatched_sizes=True, **model_kwargs)  # reported below
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"{src.dir}: cannot load the {arch} weights: {first_line(e)}")
    missing = list(info.get("missing_keys") or [])
    mismatched = list(info.get("mismatched_keys") or [])
    unexpected = list(info.get("unexpected_keys") or [])
    if mismatched:
        k = mismatched[0]
        raise ExportError(f"{src.dir}: {len(mismatched)} weight{'s' if len(mismatched) > 1 else ''} with shapes "
                          "the config does not give "
                          f"(first: {k[0] if isinstance(k, (tuple, list)) else k})")
    if missing:
        raise ExportError(f"{src.dir}: the checkpoint lacks {len(missing)} weight{'s' if len(missing) > 1 else ''} "
                          f"that {arch} needs "
                          f"(first: {sorted(missing)[0]})")
    if unexpected:
        log(f"note: {len(unexpected)} weights in the checkpoint are not used by {arch} "
            f"(first: {sorted(unexpected)[0]})")
    return model.eval()


def export_onnx(torch, model, arch, path, vocab, max_seq, verbose):
    from torch.export import Dim

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    seq = min(7, max_seq)
    batch = 3 if seq == 2 else 2  # distinct example sizes, so that batch and seq stay two symbols
    gen = torch.Generator().manual_seed(0)
    example = torch.randint(0, max(int(vocab), 1), (batch, seq), generator=gen, dtype=torch.int64)
    out = io.StringIO()
    redirect = contextlib.nullcontext() if verbose else contextlib.redirect_stdout(out)
    try:
        with redirect:
            torch.onnx.export(Logits(model).eval(), (example,), path, dynamo=True, verbose=bool(verbose),
                              input_names=["input_ids"], output_names=["logits"],
                              dynamic_shapes={"input_ids": {0: Dim("batch", max=MAX_BATCH),
                                                            1: Dim("seq", max=max_seq)}},
                              external_data=True)
    except Exception as e:  # noqa: BLE001 - report the exporter's own first error line
        if verbose:
            import traceback
            traceback.print_exc()
        raise ExportError(f"torch.onnx could not export {arch}: {exporter_error_line(e)}")


def exporter_error_line(e):
    """The exporter wraps the real error: the innermost one's first line, and the exporter's step."""
    chain, seen = [], set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append(e)
        e = e.__cause__ or e.__context__
    outer = strip_ansi(first_line(chain[0]))
    inner = chain[-1]
    inner_line = strip_ansi(first_line(inner))
    step = re.match(r"(.*?)\s*This is step (\d+)/(\d+)", outer)
    where = f" ({step.group(1).rstrip('.')}, step {step.group(2)}/{step.group(3)})" if step else ""
    if len(chain) > 1 and inner_line and inner_line != outer:
        return f"{type(inner).__name__}: {inner_line}{where or f' [{outer}]'}"
    if step:
        return step.group(1).rstrip(".") + f" (step {step.group(2)}/{step.group(3)})"
    return f"{type(chain[0]).__name__}: {outer}" if outer else type(chain[0]).__name__


def strip_ansi(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def verify_onnx(onnx, path):
    try:
        m = onnx.load(path, load_external_data=False)
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"{path}: the exported model does not load with onnx.load: {first_line(e)}")
    ins = [i for i in m.graph.input]
    outs = [o for o in m.graph.output]
    if [i.name for i in ins] != ["input_ids"] or [o.name for o in outs] != ["logits"]:
        raise ExportError(f"the export has inputs {[i.name for i in ins]} and outputs {[o.name for o in outs]}, "
                          "expected input_ids -> logits")
    t = ins[0].type.tensor_type
    if t.elem_type != onnx.TensorProto.INT64 or len(t.shape.dim) != 2:
        raise ExportError("the export's input_ids is not int64 [batch, seq]")
    if len(outs[0].type.tensor_type.shape.dim) != 3:
        raise ExportError("the export's logits is not [batch, seq, vocab]")
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    return len(m.graph.node), opset


# ---------------------------------------------------------------------------------------------

def run(args):
    t0 = time.time()
    src = inspect_source(args.src, need_weights=not args.random_weights)
    if args.tokenizer is not None and not os.path.isdir(args.tokenizer):
        raise ExportError(f"{args.tokenizer}: --tokenizer is not a directory")
    if not args.random_weights and not src.weight_files:
        if src.is_dir:
            raise ExportError(f"{src.path}: no weights (*.safetensors) beside config.json: pass "
                              "--random-weights to export with random weights")
        raise ExportError(f"{src.path}: a config file alone has no weights: pass --random-weights, or "
                          "give the checkpoint directory")
    if args.random_weights and src.weight_files:
        log(f"--random-weights: ignoring the {len(src.weight_files)} weight file"
            f"{'s' if len(src.weight_files) > 1 else ''} in {src.dir}")

    output = Output(args.output)
    output.open()
    try:
        torch, transformers, onnx = import_ml(args.verbose)
        config, model_class, arch = load_config(src, transformers)
        log(f"{src.config_path}: {arch} (model_type '{src.config['model_type']}')")
        text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
        dtype_name, dtype_why = choose_dtype(args, src.config)
        dtype = getattr(torch, DTYPES[dtype_name])
        max_seq = choose_max_seq(args, text_config)
        model_kwargs = export_model_kwargs(transformers, config, model_class)

        if args.random_weights:
            model = build_random(torch, transformers, config, model_class, arch, dtype, args.seed, text_config,
                                 model_kwargs)
        else:
            model = load_weights(torch, transformers, src, config, model_class, arch, dtype, model_kwargs)
        nparams, nbytes = count_params(model)
        path = os.path.join(output.stage, "model.onnx")
        log(f"exporting {arch} with torch.onnx (dynamo): {nparams / 1e6:.1f}M parameters, {dtype_name} "
            f"({dtype_why}), batch <= {MAX_BATCH}, seq <= {max_seq}; writing about {mb(nbytes)}...")
        t1 = time.time()
        export_onnx(torch, model, arch, path, getattr(text_config, "vocab_size", 2), max_seq, args.verbose)
        del model
        nodes, opset = verify_onnx(onnx, path)
        sizes = {f: os.path.getsize(os.path.join(output.stage, f))
                 for f in MODEL_FILES if os.path.isfile(os.path.join(output.stage, f))}
        log(f"exported in {time.time() - t1:.1f}s: " + " + ".join(f"{f} ({mb(s)})" for f, s in sizes.items())
            + f", {nodes} nodes, opset {opset}")
        unexpected = sorted(set(os.listdir(output.stage)) - set(MODEL_FILES))
        if unexpected:
            raise ExportError(f"the exporter wrote unexpected files: {', '.join(unexpected)}")
        copy_side_files(src, args.tokenizer, output.stage, text_config)
        output.commit()
    finally:
        output.discard()
    log(f"wrote {output.out} in {time.time() - t0:.1f}s")


def _on_term(signum, frame):
    raise KeyboardInterrupt()


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _on_term)
    try:
        run(args)
    except ExportError as e:
        print(f"{TAG}: error: {first_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{TAG}: interrupted; nothing written", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"{TAG}: error: out of memory", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - an unexpected failure still gets one line
        if args.verbose:
            import traceback
            traceback.print_exc()
        print(f"{TAG}: error: unexpected {type(e).__name__}: {first_line(e)} (--verbose shows the traceback)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
