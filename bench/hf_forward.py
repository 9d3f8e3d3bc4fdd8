#!/usr/bin/env python3
"""HF eager forward time on the GPU machine, the peer figure beside `infer-run forward --time`:
the same random-weight preset as export_hf.py (same config, seed 0), bf16, one forward over
batch × seq random ids, best of --reps after a warmup, with all logits (what infer-run's
forward computes) and with logits_to_keep=1 (bench_peers.py's prefill figure).

  python3 bench/hf_forward.py --export-hf ../shared/tools/export_hf.py --preset tinyllama-1.1b --seq 2048
"""
import argparse, importlib.util, json, time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export-hf", required=True, help="path of export_hf.py (for its PRESETS)")
    ap.add_argument("--preset", default="tinyllama-1.1b")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("export_hf", a.export_hf)
    export_hf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export_hf)
    import torch, transformers
    transformers.logging.set_verbosity_error()
    cls, kw = export_hf.PRESETS[a.preset]
    cfg = getattr(transformers, cls)(**kw)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16).eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda")

    def best(fn):
        fn(); torch.cuda.synchronize(); times = []
        for _ in range(a.reps):
            start = time.time(); fn(); torch.cuda.synchronize(); times.append(time.time() - start)
        return min(times) * 1e3

    with torch.no_grad():
        full = best(lambda: model(ids, use_cache=False))
        last = best(lambda: model(ids, use_cache=False, logits_to_keep=1))
    tokens = a.batch * a.seq
    print(json.dumps(dict(preset=a.preset, batch=a.batch, seq=a.seq, params=params,
                          hf_eager_forward_all_logits_ms=round(full, 2),
                          hf_eager_forward_last_logits_ms=round(last, 2),
                          flop_floor_ms=round(2 * params * tokens / 790e12 * 1e3, 2),
                          torch=torch.__version__, transformers=transformers.__version__)))


if __name__ == "__main__":
    main()
