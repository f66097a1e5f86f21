#!/usr/bin/env python3
"""Counts the host reads of one LeRobot VQ-BeT training forward + backward in each phase (CPU)."""
import torch
from torch.profiler import profile, ProfilerActivity
from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.vqbet.configuration_vqbet import VQBeTConfig
from lerobot.policies.vqbet.modeling_vqbet import VQBeTPolicy

cfg = VQBeTConfig(pretrained_backbone_weights=None, crop_is_random=False, n_vqvae_training_steps=1)
cfg.input_features = {"observation.image": PolicyFeature(FeatureType.VISUAL, (3, 96, 96)),
                      "observation.state": PolicyFeature(FeatureType.STATE, (2,))}
cfg.output_features = {"action": PolicyFeature(FeatureType.ACTION, (2,))}
p = VQBeTPolicy(cfg)
p.train()
B, n = 8, cfg.n_obs_steps
L = n + cfg.n_action_pred_token + cfg.action_chunk_size - 2
batch = {"observation.state": torch.randn(B, n, 2), "observation.image": torch.rand(B, n, 3, 96, 96),
         "action": torch.randn(B, L, 2), "action_is_pad": torch.zeros(B, L, dtype=torch.bool)}
for phase in (1, 2):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        loss, info = p.forward(dict(batch))
        loss.backward()
        loss.item()  # the train loop's loss.item() for its meter
    names = [e.name for e in prof.events()]
    print(f"phase {phase}: aten::_local_scalar_dense x{names.count('aten::_local_scalar_dense')}, "
          f"aten::unique* x{sum(1 for x in names if x.startswith('aten::_unique') or x == 'aten::unique_dim')}")
    p.zero_grad()
