#!/usr/bin/env python3
"""Checkpoint exchange between Python LeRobot 0.6.2's π0 / π0.5 and the C++ port, at the tiny sizes of
pi_reference.py (imported as a module: its patches, LAYOUTS, make_policy/fill, inputs and noise formula;
pi_reference.py itself is not changed and its output is not touched).

  write OUTDIR
      For layouts "pi05_bf16" and "pi0": build the tiny policy, fill its weights with pi_reference.py's
      formula (fill()), and call LeRobot's own policy.save_pretrained(OUTDIR/<layout>). Whatever files
      save_pretrained writes are kept (config.json + model.safetensors for LeRobot 0.6.2). This is "a
      checkpoint LeRobot wrote". Prints every file with its size. NOTE: the chroot runs transformers 5.12,
      whose SigLIP names have no `vision_model.` level (`...vision_tower.embeddings...`); LeRobot 0.6.2's
      pinned transformers (5.4-5.5), openpi's checkpoints and the C++ port write
      `...vision_tower.vision_model.embeddings...`. The folders hold the names transformers 5.12 gives.

  load CKPT_DIR LAYOUT OUT.json
      Load a checkpoint folder (config.json + model.safetensors, e.g. written by the C++ port, with the
      `vision_model.` level) into LeRobot's policy class for LAYOUT at the tiny sizes, STRICTLY:
        - model.safetensors is read with safetensors.torch.load_file;
        - names are mapped to the running transformers' names: `vision_tower.vision_model.` ->
          `vision_tower.` when the policy's own state dict has no `vision_model.` level (recorded in
          "name_mapping" with the number of keys renamed);
        - every floating tensor of the policy is first set to NaN, so that anything not loaded shows;
        - policy.load_state_dict(sd, strict=True) (errors are caught and recorded, then the keys are
          compared by hand too);
        - the dtype of every checkpoint tensor is compared with the policy's own tensor of that name
          (load_state_dict would silently convert);
      then policy.predict_action_chunk(batch, noise=noise) with pi_reference.py's inputs(LAYOUT) and
      noise t(300, (2, 4, 8)), compared with the chunk pi_reference.json recorded for LAYOUT.
      Also recorded: what LeRobot's from_pretrained key fixing (_fix_pytorch_state_dict_keys + the
      "model." prefix) would do to the checkpoint's keys (it never raises: from_pretrained catches and
      prints load errors, so a strict load is done here explicitly); whether LeRobot's
      PreTrainedConfig.from_pretrained reads the folder's config.json, and how it differs from the
      config.json LeRobot writes for this layout; and how many tensors differ from the formula weights.
      Writes OUT.json with {"missing", "unexpected", "dtype_mismatches", "chunk", "reference_chunk",
      "max_abs_diff", ...} and prints one summary line.

    PYTHONPATH=<lerobot>/src:... python3 pi_checkpoints.py write tests/policies/data/pi_lerobot_checkpoints
    PYTHONPATH=<lerobot>/src:... python3 pi_checkpoints.py load CKPT_DIR pi05_bf16 OUT.json
"""
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pi_reference as ref  # noqa: E402

WRITE_LAYOUTS = ("pi05_bf16", "pi0")
REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "policies" / "data" / "pi_reference.json"
VM_CPP = "vision_tower.vision_model."
VM_HF512 = "vision_tower."


def setup():
    ref.unpatch()
    ref.patch_causal_mask()
    ref.patch()


def versions():
    import transformers
    import lerobot
    pyproject = Path(lerobot.__file__).resolve().parents[2] / "pyproject.toml"
    version = next((line.split('"')[1] for line in pyproject.read_text().splitlines()
                    if line.startswith("version")), None) if pyproject.exists() else None
    return {"lerobot_version": version, "torch": torch.__version__, "transformers": transformers.__version__}


# ---------------------------------------------------------------- write
def write(outdir):
    setup()
    outdir = Path(outdir)
    for layout in WRITE_LAYOUTS:
        _, policy = ref.make_policy(layout)
        target = outdir / layout
        target.mkdir(parents=True, exist_ok=True)
        policy.save_pretrained(target)
        files = sorted(p for p in target.rglob("*") if p.is_file())
        total = sum(p.stat().st_size for p in files)
        print(f"{layout}: {total} bytes in {len(files)} files: "
              + ", ".join(f"{p.relative_to(target)} ({p.stat().st_size})" for p in files), flush=True)


# ---------------------------------------------------------------- load
def dt(x):
    return str(x.dtype).replace("torch.", "")


def cpp_to_running(names, own):
    """Map checkpoint names to the running transformers' names. Returns (mapping, description)."""
    own_has_vm = any(VM_CPP in n for n in own)
    mapping, renamed = {}, 0
    for n in names:
        m = n
        if not own_has_vm and VM_CPP in n:
            m = n.replace(VM_CPP, VM_HF512)
            renamed += 1
        mapping[n] = m
    desc = (f"dropped the `vision_model.` level ('{VM_CPP}' -> '{VM_HF512}') in {renamed} keys: the running "
            f"transformers names SigLIP without it" if not own_has_vm else
            "none: the running transformers names SigLIP with `vision_model.` like the checkpoint")
    return mapping, desc, renamed


def lerobot_key_fixing(policy, sd):
    """What LeRobot's from_pretrained does to the checkpoint keys before its (non-raising) load."""
    fixed = policy._fix_pytorch_state_dict_keys(dict(sd), policy.config)
    remapped = {(k if k.startswith("model.") else f"model.{k}"): v for k, v in fixed.items()}
    if hasattr(policy, "_prepare_pretrained_state_dict"):
        remapped = policy._prepare_pretrained_state_dict(remapped)
    own = set(policy.state_dict())
    return {"dropped": sorted(set(sd) - set(remapped)), "added": sorted(set(remapped) - set(sd)),
            "missing_after_fixing": sorted(own - set(remapped)),
            "unexpected_after_fixing": sorted(set(remapped) - own),
            "note": "from_pretrained catches load errors and only prints them (and does not rename "
                    "`vision_model.`); these are the keys it would find missing/unexpected as is"}


def config_check(ckpt, layout):
    out = {}
    path = Path(ckpt) / "config.json"
    if not path.exists():
        return {"error": "no config.json"}
    given = json.loads(path.read_text())
    try:
        from lerobot.configs.policies import PreTrainedConfig
        cfg = PreTrainedConfig.from_pretrained(str(ckpt))
        out["lerobot_reads_it"] = True
        out["type"] = cfg.type
        tiny = {k: (list(v) if isinstance(v, tuple) else v) for k, v in ref.TINY.items()}
        out["tiny_fields_differing"] = {
            k: [ref.jsonable(getattr(cfg, k)) if not isinstance(getattr(cfg, k), tuple) else list(getattr(cfg, k)), v]
            for k, v in {**tiny, **ref.LAYOUTS[layout]["cfg"]}.items()
            if (list(getattr(cfg, k)) if isinstance(getattr(cfg, k), tuple) else getattr(cfg, k)) != v}
    except Exception as e:  # noqa: BLE001
        out["lerobot_reads_it"] = False
        out["error"] = f"{type(e).__name__}: {e}"
    cfg_ref, _ = ref.make_policy(layout)
    with tempfile.TemporaryDirectory() as tmp:
        cfg_ref._save_pretrained(Path(tmp))
        written = json.loads((Path(tmp) / "config.json").read_text())
    out["keys_missing_vs_lerobot"] = sorted(set(written) - set(given))
    out["keys_extra_vs_lerobot"] = sorted(set(given) - set(written))
    out["values_differing_vs_lerobot"] = {k: {"checkpoint": given[k], "lerobot": written[k]}
                                          for k in sorted(set(given) & set(written)) if given[k] != written[k]}
    return out


def load(ckpt, layout, out_path):
    from safetensors import safe_open
    from safetensors.torch import load_file
    setup()
    if layout not in ref.LAYOUTS:
        raise SystemExit(f"unknown layout {layout}; one of {list(ref.LAYOUTS)}")
    ckpt = Path(ckpt)
    st_file = ckpt / "model.safetensors"
    raw = load_file(str(st_file))
    with safe_open(str(st_file), framework="pt") as f:
        metadata = f.metadata()
    result = {**versions(), "checkpoint": str(ckpt), "layout": layout,
              "files": sorted(str(p.relative_to(ckpt)) for p in ckpt.rglob("*") if p.is_file()),
              "safetensors_metadata": metadata, "num_tensors": len(raw)}

    cfg, policy = ref.make_policy(layout)
    formula_sd = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    own = policy.state_dict()
    mapping, desc, renamed = cpp_to_running(raw, own)
    result["name_mapping"] = desc
    result["renamed_keys"] = renamed
    sd = {mapping[k]: v for k, v in raw.items()}
    result["lerobot_from_pretrained_key_fixing"] = {"as_written": lerobot_key_fixing(policy, raw),
                                                    "after_vision_rename": lerobot_key_fixing(policy, sd)}

    result["missing"] = sorted(set(own) - set(sd))
    result["unexpected"] = sorted(set(sd) - set(own))
    result["dtype_mismatches"] = sorted([k, dt(sd[k]), dt(own[k])] for k in set(sd) & set(own)
                                        if sd[k].dtype != own[k].dtype)
    result["shape_mismatches"] = sorted([k, list(sd[k].shape), list(own[k].shape)] for k in set(sd) & set(own)
                                        if sd[k].shape != own[k].shape)
    with torch.no_grad():
        for x in own.values():
            if x.is_floating_point():
                x.fill_(float("nan"))
    try:
        res = policy.load_state_dict(sd, strict=True)
        result["strict_load"] = {"ok": True, "missing": list(res.missing_keys), "unexpected": list(res.unexpected_keys)}
    except Exception as e:  # noqa: BLE001
        result["strict_load"] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:4000]}
    now = policy.state_dict()
    result["nan_after_load"] = sorted(k for k, x in now.items() if x.is_floating_point() and bool(torch.isnan(x).any()))
    differ = sorted(k for k in formula_sd if k in sd and not torch.equal(sd[k].to(formula_sd[k].dtype), formula_sd[k]))
    result["tensors_differing_from_formula_weights"] = {"count": len(differ), "first": differ[:12]}
    result["config_json"] = config_check(ckpt, layout)

    batch = ref.inputs(layout)
    noise = ref.t(300, (ref.B, 4, 8), 1.0)
    policy.eval()
    policy.reset()
    with torch.no_grad():
        chunk = policy.predict_action_chunk(ref.fresh(batch), noise=noise.clone())
    reference = json.loads(REFERENCE.read_text())["layouts"][layout]
    flat = ref.flat(chunk)
    finite = all(math.isfinite(v) for v in flat)
    result["chunk_shape"] = list(chunk.shape)
    result["chunk_dtype"] = dt(chunk)
    result["chunk"] = flat if finite else [v if math.isfinite(v) else str(v) for v in flat]
    result["chunk_finite"] = finite
    result["reference_chunk"] = reference["chunk"]
    if len(flat) != len(reference["chunk"]):
        result["max_abs_diff"] = None
    elif not finite:
        result["max_abs_diff"] = "nan"
    else:
        result["max_abs_diff"] = max(abs(a - b) for a, b in zip(flat, reference["chunk"]))
        result["max_abs_diff_rounded_7g"] = max(abs(a - b) for a, b in zip(ref.r7(flat), reference["chunk"]))
    result["max_abs_diff_note"] = ("pi_reference.json stores 7 significant digits, so identical weights give "
                                   "max_abs_diff ~1e-7 and max_abs_diff_rounded_7g 0")
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"{layout} {ckpt}: tensors {len(raw)}, `vision_model.` level dropped from {renamed} keys, "
          f"missing {len(result['missing'])}, unexpected {len(result['unexpected'])}, "
          f"dtype_mismatches {len(result['dtype_mismatches'])}, shape_mismatches {len(result['shape_mismatches'])}, "
          f"strict_load {'ok' if result['strict_load']['ok'] else 'FAILED'}, nan_after_load {len(result['nan_after_load'])}, "
          f"config.json read by LeRobot {result['config_json'].get('lerobot_reads_it')}, "
          f"chunk {result['chunk_shape']} {result['chunk_dtype']}, max_abs_diff {result['max_abs_diff']}, "
          f"rounded {result.get('max_abs_diff_rounded_7g')}", flush=True)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    elif len(sys.argv) >= 5 and sys.argv[1] == "load":
        load(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
