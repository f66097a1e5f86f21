#!/usr/bin/env python3
"""Records what LeRobot 0.6.2 + PEFT do for LoRA on SmolVLA, for tests/policies/test_lora_reference.cpp.

Builds the tiny formula-filled SmolVLA of smolvla_reference.py ("default" variant), wraps it as
lerobot_train.py does (policy.wrap_with_peft(peft_cli_overrides=dataclasses.asdict(PeftConfig(...))),
so SmolVLA's _get_default_peft_targets picks the modules) and records:
  - the targeted module names, the trainable parameter names and shapes, PEFT's lora scaling;
  - with every lora_A/lora_B filled from the formula (B non-zero, so the adapters matter): the loss
    for a given noise and time, gradient sums of some adapters, the action chunk for a given noise;
  - the adapter folder PeftModel.save_pretrained writes (adapter_config.json,
    adapter_model.safetensors) into OUT_DIR, with its key names and shapes in the JSON.

    python3 smolvla_lora_reference.py VLM_DIR OUT_DIR            # writes OUT_DIR/reference.json too
    python3 smolvla_lora_reference.py VLM_DIR --load ADAPTER_DIR  # PeftModel.from_pretrained of a C++-written
                                                                  # folder: prints its chunk as JSON

The peft package is not pinned by the project: run with PEFT's src/ on PYTHONPATH (docs/PYTHON_RUNS.md).
"""
import dataclasses
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smolvla_reference import B, flat, inputs, make_policy, t  # noqa: E402

from lerobot.configs.default import PeftConfig  # noqa: E402

R, ALPHA = 4, 8
LORA_SCALE = 0.3
REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/policies/data/smolvla_reference.json")


def batch_for(policy):
    v = json.load(open(REF))["variants"]["default"]
    return inputs(torch.tensor(v["tokens"]), torch.tensor(v["token_mask"], dtype=torch.bool))


def wrapped(vlm_dir):
    cfg, policy = make_policy(vlm_dir, "default")
    policy.config.pretrained_path = "formula-filled"  # LeRobot refuses PEFT without a pretrained path
    overrides = dataclasses.asdict(PeftConfig(r=R, lora_alpha=ALPHA))
    return cfg, policy, policy.wrap_with_peft(peft_cli_overrides=overrides)


def fill_lora(peft_model):
    names = sorted(n for n, _ in peft_model.named_parameters() if "lora_" in n)
    params = dict(peft_model.named_parameters())
    with torch.no_grad():
        for k, n in enumerate(names):
            p = params[n]
            p.copy_(t(p.numel(), 300 + k, LORA_SCALE, p.shape))
    return names


def chunk_of(policy, cfg):
    m = cfg.max_action_dim
    policy.eval()
    policy.reset()
    with torch.no_grad():
        return policy.predict_action_chunk(batch_for(policy), noise=t(B * 5 * m, 221, 1.0, (B, 5, m)))


def record(vlm_dir, out_dir):
    cfg, policy, peft_model = wrapped(vlm_dir)
    out = {"r": R, "lora_alpha": ALPHA, "lora_fill_scale": LORA_SCALE, "peft_version": __import__("peft").__version__}
    out["targeted_modules"] = sorted(peft_model.targeted_module_names)
    out["trainable"] = {n: list(p.shape) for n, p in peft_model.named_parameters() if p.requires_grad}
    layer = peft_model.base_model.model.model.state_proj
    out["scaling"] = float(layer.scaling["default"])
    # PEFT's initialisation: B zeros (so the wrapped policy starts as the base one), A nn.Linear's.
    out["b_all_zero_at_init"] = all(float(p.abs().sum()) == 0 for n, p in peft_model.named_parameters() if "lora_B" in n)
    m = cfg.max_action_dim
    with torch.no_grad():
        out["base_chunk"] = flat(chunk_of(policy, cfg))  # adapters at init: the base policy's chunk
    out["filled"] = fill_lora(peft_model)
    policy.train()
    noise = t(B * 5 * m, 220, 1.0, (B, 5, m))
    loss, _ = policy.forward(batch_for(policy), noise=noise, time=torch.tensor([0.3, 0.8]))
    loss.backward()
    out["loss"] = float(loss)
    out["grads"] = {n: float(p.grad.abs().sum()) for n, p in peft_model.named_parameters()
                    if p.requires_grad and p.grad is not None and (".layers.1." in n or "state_proj" in n)}
    out["frozen_with_grad"] = [n for n, p in peft_model.named_parameters() if not p.requires_grad and p.grad is not None]
    out["chunk"] = flat(chunk_of(policy, cfg))
    peft_model.save_pretrained(out_dir)
    from safetensors.torch import load_file
    saved = load_file(os.path.join(out_dir, "adapter_model.safetensors"))
    out["adapter_keys"] = {k: list(v.shape) for k, v in sorted(saved.items())}
    out["adapter_config"] = json.load(open(os.path.join(out_dir, "adapter_config.json")))
    out["use_peft"] = bool(getattr(peft_model.config, "use_peft", False))
    json.dump(out, open(os.path.join(out_dir, "reference.json"), "w"), indent=1)
    print("targets", len(out["targeted_modules"]), "loss", out["loss"], "chunk[:4]", out["chunk"][:4])


def load(vlm_dir, adapter_dir):
    from peft import PeftModel
    cfg, policy = make_policy(vlm_dir, "default")
    model = PeftModel.from_pretrained(policy, adapter_dir)
    chunk = chunk_of(model.base_model.model, cfg)
    print(json.dumps({"chunk": flat(chunk)}))


def main():
    vlm_dir = sys.argv[1]
    if sys.argv[2] == "--load":
        load(vlm_dir, sys.argv[3])
    else:
        os.makedirs(sys.argv[2], exist_ok=True)
        record(vlm_dir, sys.argv[2])


if __name__ == "__main__":
    main()
