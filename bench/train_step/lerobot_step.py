#!/usr/bin/env python3
"""bench_train_step's training step run by Python LeRobot's own modelling code (imported, not
rewritten): LeRobot's ACTPolicy / DiffusionPolicy built at bench_train_step's configuration, the
optimizer and scheduler from the policy's presets as make_optimizer_and_scheduler builds them
(get_optim_params, get_optimizer_preset().build, get_scheduler_preset().build(opt, 100000 steps)),
and each step as LeRobot 0.6.2's lerobot_train.update_policy runs it on one process: policy.train(),
the forward under accelerate's autocast (torch.autocast bf16 for --mixed_precision=bf16; accelerate
itself is not imported: on one process without a grad scaler its autocast, backward and
clip_grad_norm_ are these torch calls), loss.backward(), clip_grad_norm_(policy.parameters(), the
preset's grad_clip_norm), optimizer.step(), optimizer.zero_grad(), lr_scheduler.step(), then the
loss, grad norm and lr read back as its metrics do. TF32 and cuDNN benchmark as LeRobot's train
script sets them (peer_common.prepare_device). The batch is made on the device, in the layout
bench_train_step's reach2d batch has after the processors (state 2, action 2, one camera
`observation.image`; ACT: chunk 100, the last 10 actions padded; Diffusion: 2 observation steps,
horizon 64), no pretrained backbone weights (bench_train_step passes
--policy.pretrained_backbone_weights=null).

LeRobot's source must be importable (scripts/gpu_offline/stage_lerobot_python.sh stages it with
what it imports into .dev/python):
  PYTHONPATH=.dev/python python3 bench/train_step/lerobot_step.py --policy=act --batch_size=8 --device=cuda
  PYTHONPATH=.dev/python python3 bench/train_step/lerobot_step.py --policy=diffusion --batch_size=64 --device=cuda
Print-out as peer.py's (ms/step median/mean/min, samples/s, parameters).
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import add_common_args, prepare_device, time_and_report  # noqa: E402

STEPS_IN_RUN = 100000  # bench_train_step's --steps: the scheduler's horizon
# Compiled packages LeRobot imports at module level that its ACT/Diffusion training step never
# calls: cv2 (lerobot.policies.groot's processor, through lerobot.policies' factory) and safetensors
# (lerobot.policies.pretrained: saving and loading). A machine without a package registry may lack
# them and they cannot be staged as pure Python, so an import-only stand-in takes their place there
# (any use raises); the header line names those used.
STANDINS = {"cv2": ["cv2"], "safetensors": ["safetensors", "safetensors.torch"]}


def install_standins():
    import importlib.machinery
    import importlib.util
    import types

    used = []
    for top, names in STANDINS.items():
        if importlib.util.find_spec(top) is not None:
            continue
        for name in names:
            m = types.ModuleType(name)
            m.__path__ = []  # a package, so its submodule imports resolve to the stand-ins
            m.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)

            def absent(attr, _name=name):
                if attr.startswith("__"):
                    raise AttributeError(attr)

                def call(*args, **kwargs):
                    raise RuntimeError(f"{_name}.{attr}: {_name} is not installed (lerobot_step.py stand-in)")
                return call
            m.__getattr__ = absent
            sys.modules[name] = m
        used.append(top)
    return used


def build(a, dev):
    from lerobot.configs.types import FeatureType, PolicyFeature

    s = a.image_size
    inputs = {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(a.state_dim,)),
              "observation.image": PolicyFeature(type=FeatureType.VISUAL, shape=(3, s, s))}
    outputs = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(a.action_dim,))}
    common = dict(input_features=inputs, output_features=outputs, device=dev.type, pretrained_backbone_weights=None)
    b = a.batch_size
    if a.policy == "act":
        from lerobot.policies.act.configuration_act import ACTConfig
        from lerobot.policies.act.modeling_act import ACTPolicy

        cfg = ACTConfig(**common)
        policy = ACTPolicy(cfg)
        chunk = cfg.chunk_size
        batch = {"observation.state": torch.randn(b, a.state_dim, device=dev),
                 "observation.image": torch.randn(b, 3, s, s, device=dev),
                 "action": torch.randn(b, chunk, a.action_dim, device=dev),
                 "action_is_pad": torch.zeros(b, chunk, dtype=torch.bool, device=dev)}
        batch["action_is_pad"][:, chunk - 10:] = True
    else:
        from lerobot.policies.diffusion.configuration_diffusion import DiffusionConfig
        from lerobot.policies.diffusion.modeling_diffusion import DiffusionPolicy

        cfg = DiffusionConfig(**common)
        policy = DiffusionPolicy(cfg)
        n, h = cfg.n_obs_steps, cfg.horizon
        batch = {"observation.state": torch.randn(b, n, a.state_dim, device=dev),
                 "observation.image": torch.randn(b, n, 3, s, s, device=dev),
                 "action": torch.randn(b, h, a.action_dim, device=dev),
                 "action_is_pad": torch.zeros(b, h, dtype=torch.bool, device=dev)}
    policy.to(dev)  # make_policy: policy.to(cfg.device)
    return (cfg, policy, batch) + preset_optimizer(cfg, policy)


def preset_optimizer(cfg, policy):
    """make_optimizer_and_scheduler with use_policy_training_preset (TrainPipelineConfig takes the
    presets): (optimizer, scheduler or None, grad_clip_norm)."""
    opt_cfg = cfg.get_optimizer_preset()
    sched_cfg = cfg.get_scheduler_preset()
    optimizer = opt_cfg.build(policy.get_optim_params())
    scheduler = sched_cfg.build(optimizer, STEPS_IN_RUN) if sched_cfg is not None else None
    return optimizer, scheduler, opt_cfg.grad_clip_norm


def update_policy_step(policy, batch, optimizer, scheduler, grad_clip_norm, dev, bf16, metrics):
    """lerobot_train.update_policy on one process, no accumulation, no sample weighter, as a function
    of no arguments (what time_and_report times); the loss, grad norm and lr go into `metrics`."""
    def step():
        policy.train()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):  # accelerator.autocast()
            loss, output_dict = policy(batch)
        loss.backward()  # accelerator.backward(loss)
        grad_norm = None
        if grad_clip_norm > 0:  # accelerator.clip_grad_norm_: unscale (no scaler here), then torch's
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), grad_clip_norm)
        optimizer.step()
        optimizer.zero_grad()
        if scheduler is not None:
            scheduler.step()
        metrics["loss"] = loss.item()
        if grad_norm is not None:
            metrics["grad_norm"] = grad_norm.item()
        metrics["lr"] = optimizer.param_groups[0]["lr"]
        return loss.detach()
    return step


def main():
    if sys.version_info < (3, 12):  # LeRobot 0.6's requires-python
        sys.exit(f"lerobot_step.py: LeRobot 0.6 needs Python >= 3.12; this is {sys.version.split()[0]}")
    ap = argparse.ArgumentParser()
    add_common_args(ap, batch_size=8)
    ap.add_argument("--policy", default="act", choices=["act", "diffusion"])
    ap.add_argument("--image_size", type=int, default=96)
    a = ap.parse_args()
    dev = prepare_device(a)
    standins = install_standins()
    import lerobot

    cfg, policy, batch, optimizer, scheduler, grad_clip_norm = build(a, dev)
    bf16 = a.mixed_precision == "bf16"
    metrics = {}
    step = update_policy_step(policy, batch, optimizer, scheduler, grad_clip_norm, dev, bf16, metrics)

    params = [p for p in policy.parameters() if p.requires_grad]
    n = sum(p.numel() for p in params)
    name = {"act": "ACT", "diffusion": "Diffusion"}[a.policy]
    where = os.path.dirname(os.path.dirname(lerobot.__file__))
    print(f"LeRobot's {name}Policy (lerobot from {where}) on PyTorch {torch.__version__} step: {n} parameters in "
          f"{len(params)} tensors, batch {a.batch_size}, {a.image_size}x{a.image_size} image, device {dev}, "
          f"mixed_precision {a.mixed_precision}, optimizer {type(optimizer).__name__}, "
          f"scheduler {type(scheduler).__name__ if scheduler else None}, clip {grad_clip_norm}")
    if standins:
        print(f"import-only stand-ins (not installed, unused by the step): {', '.join(standins)}")
    time_and_report(step, dev, a.steps, a.warmup, a.batch_size)
    print(f"loss: last step {metrics['loss']:.6f}  grad_norm {metrics.get('grad_norm', float('nan')):.4f}  "
          f"lr {metrics['lr']:.3g}")


if __name__ == "__main__":
    main()
