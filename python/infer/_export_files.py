"""Files side of `python -m infer.export` (no torch): the source checkpoint, the staged output
directory and the tokenizer / generation files copied beside the model. See docs/export.md."""
import json
import os
import shutil
import sys
import tempfile

TAG = "infer.export"

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")
# Files this command writes into OUT_DIR; stale ones of an earlier export into the same directory
# are removed when the new export does not write them.
MODEL_FILES = ("model.onnx", "model.onnx.data")
OUTPUT_FILES = MODEL_FILES + ("config.json", "generation_config.json") + TOKENIZER_FILES
# Other tokenizer formats: reported when tokenizer.json is absent (infer reads tokenizer.json).
OTHER_TOKENIZER_FILES = ("tokenizer.model", "vocab.json", "merges.txt", "vocab.txt", "tokenizer.tiktoken")


class ExportError(Exception):
    """An expected failure: reported as one line, exit 1."""


def log(msg):
    try:
        print(f"{TAG}: {msg}", file=sys.stderr, flush=True)
    except OSError:  # stderr closed (a pipe whose reader went away): progress is not worth failing for
        pass


def first_line(text):
    for line in str(text).splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def mb(nbytes):
    return f"{nbytes / 1e6:.1f} MB"

# ---------------------------------------------------------------------------------------------
# The source: config and weight files, inspected without torch.
# ---------------------------------------------------------------------------------------------

class Source:
    def __init__(self, path):
        self.path = path
        self.is_dir = False
        self.dir = None
        self.config_path = None
        self.config = None
        self.weight_files = []   # absolute paths
        self.weight_format = None


def read_json(path, what):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ExportError(f"{path}: cannot read {what}: {e.strerror}")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise ExportError(f"{path}: {what} is not valid JSON: {first_line(e)}")


def find_weights(d):
    """Returns (format, [files]) of the weights in directory d, or (None, [])."""
    for index_name, fmt in (("model.safetensors.index.json", "safetensors"),
                            ("pytorch_model.bin.index.json", "pytorch")):
        index = os.path.join(d, index_name)
        if os.path.isfile(index):
            data = read_json(index, "the weight index")
            weight_map = data.get("weight_map") if isinstance(data, dict) else None
            if not isinstance(weight_map, dict) or not weight_map:
                raise ExportError(f"{index}: no weight_map (expected a sharded checkpoint's index)")
            shards = sorted(set(str(v) for v in weight_map.values()))
            missing = [s for s in shards if not os.path.isfile(os.path.join(d, s))]
            if missing:
                raise ExportError(f"{index}: {len(missing)} of {len(shards)} weight shards listed are "
                                  f"missing (first: {missing[0]})")
            return fmt, [os.path.join(d, s) for s in shards]
    if os.path.isfile(os.path.join(d, "model.safetensors")):
        return "safetensors", [os.path.join(d, "model.safetensors")]
    if os.path.isfile(os.path.join(d, "pytorch_model.bin")):
        return "pytorch", [os.path.join(d, "pytorch_model.bin")]
    shards = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
    if shards:
        raise ExportError(f"{d}: {len(shards)} .safetensors files ({shards[0]}, ...) but neither "
                          "model.safetensors nor model.safetensors.index.json")
    return None, []


def inspect_source(path, need_weights=True):
    src = Source(path)
    if not os.path.exists(path):
        raise ExportError(f"{path}: no such file or directory")
    if os.path.isdir(path):
        src.is_dir = True
        src.dir = path
        src.config_path = os.path.join(path, "config.json")
        if not os.path.isfile(src.config_path):
            raise ExportError(f"{path}: no config.json (expected a Hugging Face checkpoint directory "
                              "or a config.json file)")
    else:
        src.dir = os.path.dirname(os.path.abspath(path))
        src.config_path = path
    src.config = read_json(src.config_path, "the model config")
    if not isinstance(src.config, dict):
        raise ExportError(f"{src.config_path}: not a model config (a JSON object was expected)")
    if not src.config.get("model_type"):
        raise ExportError(f"{src.config_path}: no model_type (not a Hugging Face model config)")
    if src.is_dir:
        try:
            src.weight_format, src.weight_files = find_weights(path)
        except ExportError as e:
            if need_weights:
                raise
            log(f"note: {e} (ignored: --random-weights)")
    return src


# ---------------------------------------------------------------------------------------------
# The output directory: everything is written into a staging directory, moved into place last.
# ---------------------------------------------------------------------------------------------

class Output:
    def __init__(self, out_dir):
        self.out = os.path.abspath(out_dir)
        self.exists = False
        self.stage = None

    def open(self):
        out = self.out
        if os.path.exists(out) and not os.path.isdir(out):
            raise ExportError(f"{out}: exists and is not a directory")
        self.exists = os.path.isdir(out)
        if self.exists:
            base = out
        else:  # stage in the nearest existing ancestor: same file system, renamed into place
            base = os.path.dirname(out)
            while base and not os.path.exists(base):
                base = os.path.dirname(base)
            if not os.path.isdir(base):
                raise ExportError(f"{out}: cannot create the output directory: {base} is not a directory")
        try:
            self.stage = tempfile.mkdtemp(prefix=f".{os.path.basename(out) or 'out'}.infer-export-", dir=base)
        except OSError as e:
            raise ExportError(f"{out}: cannot write the output directory: {e.strerror}")
        return self.stage

    def commit(self):
        out, stage = self.out, self.stage
        written = set(os.listdir(stage))
        if not self.exists:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(stage, 0o777 & ~umask)  # mkdtemp's mode is 0700; OUT_DIR gets the usual one
            os.makedirs(os.path.dirname(out), exist_ok=True)
            try:
                os.rename(stage, out)
                self.stage = None
                return
            except OSError:
                if not os.path.isdir(out):
                    raise
                self.exists = True  # created meanwhile: merge file by file
        for name in sorted(written):
            os.replace(os.path.join(stage, name), os.path.join(out, name))
        for name in OUTPUT_FILES:  # an earlier export's files that this one does not have
            if name not in written and os.path.isfile(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
        os.rmdir(stage)
        self.stage = None

    def discard(self):
        if self.stage and os.path.isdir(self.stage):
            shutil.rmtree(self.stage, ignore_errors=True)
        self.stage = None


# ---------------------------------------------------------------------------------------------
# Tokenizer and generation files
# ---------------------------------------------------------------------------------------------

def copy_side_files(src, tokenizer_dir, stage, text_config):
    """Copies config.json, generation_config.json and the tokenizer files into stage."""
    shutil.copyfile(src.config_path, os.path.join(stage, "config.json"))
    tok_dir = tokenizer_dir or src.dir
    found, missing = [], []
    for name in TOKENIZER_FILES:
        p = os.path.join(tok_dir, name)
        if os.path.isfile(p):
            shutil.copyfile(p, os.path.join(stage, name))
            found.append(name)
        else:
            missing.append(name)
    gen_candidates = [os.path.join(src.dir, "generation_config.json")]
    if tokenizer_dir:
        gen_candidates.append(os.path.join(tokenizer_dir, "generation_config.json"))
    gen = next((p for p in gen_candidates if os.path.isfile(p)), None)
    if gen:
        shutil.copyfile(gen, os.path.join(stage, "generation_config.json"))
        gen_note = f"generation_config.json copied from {os.path.dirname(gen)}"
    else:
        ids = {k: getattr(text_config, k, None) for k in ("bos_token_id", "eos_token_id", "pad_token_id")}
        ids = {k: v for k, v in ids.items() if v is not None}
        if ids:
            with open(os.path.join(stage, "generation_config.json"), "w") as f:
                json.dump(dict(ids, _from_model_config=True), f, indent=2)
                f.write("\n")
            gen_note = ("no generation_config.json: wrote one from the config's "
                        + ", ".join(f"{k}={v}" for k, v in ids.items()))
        else:
            gen_note = "no generation_config.json, and the config has no bos/eos token ids: none written"
    log(f"tokenizer files from {tok_dir}: found {', '.join(found) or 'none'}"
        + (f"; missing {', '.join(missing)}" if missing else ""))
    if "tokenizer.json" not in found:
        others = [n for n in OTHER_TOKENIZER_FILES if os.path.isfile(os.path.join(tok_dir, n))]
        hint = (f" ({', '.join(others)} found: infer reads tokenizer.json only; transformers' "
                "AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR) writes one)") if others else ""
        log(f"no tokenizer.json{hint}: the export compiles and runs on token ids")
    log(gen_note)
