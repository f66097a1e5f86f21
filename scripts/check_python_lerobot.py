#!/usr/bin/env python3
"""Checks a lerobot.cpp checkpoint against Python LeRobot itself.

Loads PRETRAINED_DIR the way LeRobot does (PreTrainedConfig / <Policy>.from_pretrained with strict
weights, TrainPipelineConfig.from_pretrained, make_pre_post_processors), runs the policy on the
observation in OBS (a safetensors file, as `lerobot-cpp infer --observation` reads it) and compares
the predicted action chunk with the one `lerobot-cpp infer --output` wrote to CPP_ACTIONS.

    lerobot-cpp infer --policy.path=DIR --observation=obs.safetensors --output=cpp.safetensors
    PYTHONPATH=<lerobot checkout>/src python3 scripts/check_python_lerobot.py DIR obs.safetensors cpp.safetensors

A LoRA checkpoint (config.json use_peft: true, adapter_config.json) is loaded as LeRobot's make_policy
loads one: the base from base_model_name_or_path, then PeftModel.from_pretrained.

Needs LeRobot and its Python dependencies (not installable on the CI machines: no PyPI); exits 0
when the largest difference is within --atol.
"""
import argparse
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pretrained_dir")
    ap.add_argument("observation")
    ap.add_argument("cpp_actions")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=None,
                    help="torch.manual_seed just before the prediction (as `lerobot-cpp infer --seed`): "
                         "a sampling policy such as Diffusion then draws the same noise on the CPU")
    ap.add_argument("--task", default=None,
                    help="the task in words, for a policy that reads it (SmolVLA), as `lerobot-cpp infer --task`")
    args = ap.parse_args()

    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.configs.train import TrainPipelineConfig
    from lerobot.policies.factory import get_policy_class, make_pre_post_processors

    config = PreTrainedConfig.from_pretrained(args.pretrained_dir)
    if getattr(config, "use_peft", False):
        # A LoRA (--peft.*) checkpoint, as LeRobot's make_policy loads one: the base policy named
        # by adapter_config.json (with this config), then PEFT's adapters on it. Needs PEFT's src/
        # on PYTHONPATH (docs/PYTHON_RUNS.md).
        from peft import PeftConfig, PeftModel

        peft_config = PeftConfig.from_pretrained(args.pretrained_dir)
        base = get_policy_class(config.type).from_pretrained(peft_config.base_model_name_or_path, config=config)
        policy = PeftModel.from_pretrained(base, args.pretrained_dir, config=peft_config, is_trainable=True)
        print(f"PEFT: base {peft_config.base_model_name_or_path}, {len(policy.targeted_module_names)} modules with "
              f"LoRA r={peft_config.r} alpha={peft_config.lora_alpha}")
    else:
        policy = get_policy_class(config.type).from_pretrained(args.pretrained_dir)
    policy.eval()
    print(f"policy: {type(policy).__name__}, {sum(p.numel() for p in policy.parameters())} parameters, "
          f"inputs {list(config.input_features)}")
    if (Path(args.pretrained_dir) / "train_config.json").exists():  # a training checkpoint
        train_cfg = TrainPipelineConfig.from_pretrained(args.pretrained_dir)
        print(f"train_config.json: policy {train_cfg.policy.type}, batch_size {train_cfg.batch_size}, "
              f"steps {train_cfg.steps}, env {train_cfg.env}")
    pre, post = make_pre_post_processors(config, pretrained_path=args.pretrained_dir)

    observation = {}
    for key, t in load_file(args.observation).items():
        if t.dtype == torch.uint8:  # camera frame as a robot gives it: HWC or CHW, 0..255
            if t.shape[-1] in (1, 3, 4) and t.shape[0] not in (1, 3, 4):
                t = t.permute(2, 0, 1)
            t = t.float() / 255.0
        observation[key] = t
    if args.task is not None:
        observation["task"] = args.task
    with torch.no_grad():
        batch = pre(observation)
        if args.seed is not None:
            torch.manual_seed(args.seed)
        if hasattr(policy, "_queues") and "action" in policy._queues and config.type != "act":
            # Diffusion: predict_action_chunk takes a stacked history only; one observation goes
            # through select_action, which fills the history with copies of it (as `infer` does) and
            # queues the chunk it predicts.
            policy.reset()
            first = policy.select_action(dict(batch))
            chunk = post(torch.stack([first] + list(policy._queues["action"]), dim=1))
        else:
            chunk = post(policy.predict_action_chunk(batch))
    ours = load_file(args.cpp_actions)["action"]
    theirs = chunk.reshape(ours.shape).to(ours.dtype)
    diff = (theirs - ours).abs().max().item()
    scale = theirs.abs().max().item()
    print(f"action chunk {tuple(theirs.shape)}: first action Python {theirs[0].tolist()}, "
          f"lerobot-cpp {ours[0].tolist()}")
    print(f"max |Python - lerobot-cpp| = {diff:.3g} (largest action {scale:.3g}, tolerance {args.atol:g})")
    return 0 if diff <= args.atol else 1


if __name__ == "__main__":
    sys.exit(main())
