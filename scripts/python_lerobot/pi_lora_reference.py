#!/usr/bin/env python3
"""Records what LeRobot 0.6.2 + PEFT do for LoRA on π0 and π0.5, for tests/policies/test_pi_lora_reference.cpp.

Builds the tiny formula-filled π0 ("pi0") and π0.5 ("pi05", float32; "pi05_bf16", LeRobot's bfloat16
mix) layouts of pi_reference.py (its patches, fill and batch), wraps each as lerobot_train.py does
with --peft.r=R --peft.lora_alpha=ALPHA (policy.wrap_with_peft(peft_cli_overrides=dataclasses.asdict(PeftConfig(...))), so the policy's own
_get_default_peft_targets picks the modules) and records per layout:
  - default_targets: what _get_default_peft_targets returns;
  - the targeted module names, the trainable parameter names and shapes, PEFT's lora scaling, and
    whether every lora_B starts at zero; the chunk for the fixed noise with the adapters at init;
  - with every lora_A/lora_B filled (sorted by PEFT's live names, k-th gets t(300 + k, shape, 0.3)):
    the policy-level loss with LeRobot's sample_noise / sample_time patched to pi_reference's noise
    and time, every trainable parameter's gradient sum and abs-sum, the frozen parameters that got a
    gradient (none expected), and the chunk for the fixed noise (3 Euler steps);
  - the adapter folder PeftModel.save_pretrained writes into OUT_DIR/<layout>/ (adapter_config.json,
    adapter_model.safetensors), with its key names, shapes and dtypes in the JSON.

    python3 pi_lora_reference.py OUT_DIR                      # writes OUT_DIR/reference.json too
    python3 pi_lora_reference.py --load LAYOUT ADAPTER_DIR    # PeftModel.from_pretrained of a C++-written
                                                              # folder on that layout: prints its chunk

Run with LeRobot's and PEFT's src/ on PYTHONPATH (docs/PYTHON_RUNS.md); peft is not pinned by the project.
"""
import dataclasses
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pi_reference as pr  # noqa: E402

from lerobot.configs.default import PeftConfig  # noqa: E402

R, ALPHA = 4, 8
LORA_SCALE = 0.3
LAYOUTS = ("pi0", "pi05", "pi05_bf16")


def noise():
    return pr.t(300, (pr.B, 4, 8), 1.0)


def wrapped(layout):
    cfg, policy = pr.make_policy(layout)
    policy.config.pretrained_path = "formula-filled"  # LeRobot refuses PEFT without a pretrained path
    defaults = policy._get_default_peft_targets()
    overrides = dataclasses.asdict(PeftConfig(r=R, lora_alpha=ALPHA))
    return cfg, policy, defaults, policy.wrap_with_peft(peft_cli_overrides=overrides)


def fill_lora(peft_model):
    params = dict(peft_model.named_parameters())
    names = sorted(n for n in params if "lora_" in n)
    with torch.no_grad():
        for k, n in enumerate(names):
            params[n].copy_(pr.t(300 + k, tuple(params[n].shape), LORA_SCALE))
    return names


def chunk_of(policy, batch):
    policy.eval()
    policy.reset()
    with torch.no_grad():
        return policy.predict_action_chunk(pr.fresh(batch), noise=noise())


def record(layout, out_dir):
    cfg, policy, defaults, peft_model = wrapped(layout)
    batch = pr.inputs(layout)
    out = {"r": R, "lora_alpha": ALPHA, "lora_fill_scale": LORA_SCALE, "default_targets": defaults}
    out["targeted_modules"] = sorted(peft_model.targeted_module_names)
    out["trainable"] = {n: list(p.shape) for n, p in peft_model.named_parameters() if p.requires_grad}
    out["num_trainable"] = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    out["num_parameters"] = sum(p.numel() for p in peft_model.parameters())
    out["scaling"] = float(policy.model.action_in_proj.scaling["default"])
    out["b_all_zero_at_init"] = all(float(p.abs().sum()) == 0 for n, p in peft_model.named_parameters() if "lora_B" in n)
    out["base_chunk"] = pr.flat(chunk_of(policy, batch))  # adapters at init: the base policy's chunk
    out["filled"] = fill_lora(peft_model)

    model = policy.model
    model.sample_noise = lambda shape, device: noise()
    model.sample_time = lambda bsize, device: torch.tensor(pr.TIME)
    policy.train()
    policy.zero_grad(set_to_none=True)
    loss, _ = policy.forward(pr.fresh(batch))
    loss.backward()
    out["loss"] = float(loss)
    grads = {}
    for n, p in peft_model.named_parameters():
        if p.requires_grad and p.grad is not None:
            g = p.grad.detach().double()
            grads[n] = {"sum": float(g.sum()), "abs_sum": float(g.abs().sum())}
    out["grads"] = grads
    out["trainable_without_grad"] = sorted(n for n, p in peft_model.named_parameters() if p.requires_grad and p.grad is None)
    out["frozen_with_grad"] = sorted(n for n, p in peft_model.named_parameters() if not p.requires_grad and p.grad is not None)
    policy.zero_grad(set_to_none=True)
    del model.sample_noise, model.sample_time
    out["chunk"] = pr.flat(chunk_of(policy, batch))

    folder = os.path.join(out_dir, layout)
    peft_model.save_pretrained(folder)
    readme = os.path.join(folder, "README.md")  # PEFT's generic card; LeRobot replaces it, the tests need none
    if os.path.exists(readme):
        os.remove(readme)
    from safetensors import safe_open
    with safe_open(os.path.join(folder, "adapter_model.safetensors"), framework="pt") as f:
        out["adapter_keys"] = {k: [f.get_slice(k).get_dtype(), list(f.get_slice(k).get_shape())] for k in sorted(f.keys())}
    out["adapter_config"] = json.load(open(os.path.join(folder, "adapter_config.json")))
    out["use_peft"] = bool(getattr(peft_model.config, "use_peft", False))
    return out


def load(layout, adapter_dir):
    from peft import PeftModel
    pr.patch()
    pr.patch_causal_mask()
    _, policy = pr.make_policy(layout)
    model = PeftModel.from_pretrained(policy, adapter_dir)
    print(json.dumps({"chunk": pr.flat(chunk_of(model.base_model.model, pr.inputs(layout)))}))


def main():
    if sys.argv[1] == "--load":
        load(sys.argv[2], sys.argv[3])
        return
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    pr.patch()
    pr.patch_causal_mask()
    import peft
    result = {"peft_version": peft.__version__, "torch": torch.__version__, "layouts": {}}
    for layout in LAYOUTS:
        out = record(layout, out_dir)
        result["layouts"][layout] = out
        print(layout, "targets", len(out["targeted_modules"]), "trainable", out["num_trainable"], "of",
              out["num_parameters"], "loss", out["loss"], "chunk[:3]", out["chunk"][:3], flush=True)
    pr.unpatch()
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(pr.r7(result), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
