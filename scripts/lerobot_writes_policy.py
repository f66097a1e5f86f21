#!/usr/bin/env python3
"""Writes a small Diffusion or VQ-BeT policy with LeRobot's own save_pretrained and processors, and
the chunk LeRobot predicts with it.

The reverse of scripts/check_python_lerobot.py: LeRobot writes, lerobot-cpp reads.

    PYTHONPATH=... python3 scripts/lerobot_writes_policy.py diffusion|vqbet OUT obs.safetensors SEED
    lerobot-cpp infer --policy.path=OUT --observation=obs.safetensors --seed=SEED --output=cpp.safetensors

then compare OUT/python_chunk.safetensors with cpp.safetensors ("action", (chunk, 2)).
obs.safetensors holds observation.image (64, 64, 3) uint8 and observation.state (2,) float.
Seeding just before the prediction makes both draw the same DDPM noise (Diffusion) or sample the
same codes (VQ-BeT, whose VQ-VAE is marked discretized, as after its phase 1) on the CPU.
"""
import sys

import torch
from safetensors.torch import load_file, save_file

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.factory import make_pre_post_processors


def make(kind, features):
    common = dict(features, pretrained_backbone_weights=None, device="cpu", push_to_hub=False)
    if kind == "diffusion":
        from lerobot.policies.diffusion.configuration_diffusion import DiffusionConfig
        from lerobot.policies.diffusion.modeling_diffusion import DiffusionPolicy
        cfg = DiffusionConfig(down_dims=(32, 64), diffusion_step_embed_dim=32, num_inference_steps=10,
                              crop_shape=(56, 56), **common)
        return cfg, DiffusionPolicy(cfg)
    from lerobot.policies.vqbet.configuration_vqbet import VQBeTConfig
    from lerobot.policies.vqbet.modeling_vqbet import VQBeTPolicy
    cfg = VQBeTConfig(n_obs_steps=3, crop_shape=(56, 56), gpt_n_layer=2, gpt_hidden_dim=64, gpt_input_dim=64,
                      gpt_output_dim=64, vqvae_embedding_dim=32, **common)
    policy = VQBeTPolicy(cfg)
    policy.vqbet.action_head.vqvae_model.discretized.fill_(True)
    policy.vqbet.action_head.vqvae_model.vq_layer.freeze_codebook.fill_(True)
    return cfg, policy


kind, out, obs_path, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.manual_seed(0)
cfg, policy = make(kind, dict(
    input_features={"observation.image": PolicyFeature(FeatureType.VISUAL, (3, 64, 64)),
                    "observation.state": PolicyFeature(FeatureType.STATE, (2,))},
    output_features={"action": PolicyFeature(FeatureType.ACTION, (2,))}))
stats = {"observation.image": {"mean": torch.rand(3, 1, 1), "std": torch.rand(3, 1, 1) + 0.5},
         "observation.state": {"min": -torch.rand(2), "max": torch.rand(2) + 1},
         "action": {"min": -torch.rand(2) - 1, "max": torch.rand(2) + 1}}
pre, post = make_pre_post_processors(cfg, dataset_stats=stats)
policy.save_pretrained(out)
pre.save_pretrained(out)
post.save_pretrained(out)
policy.eval()
obs = {k: (v.float() / 255).permute(2, 0, 1) if v.dtype == torch.uint8 else v for k, v in load_file(obs_path).items()}
with torch.no_grad():
    batch = pre(obs)
    torch.manual_seed(seed)
    policy.reset()
    first = policy.select_action(dict(batch))
    chunk = post(torch.stack([first] + list(policy._queues["action"]), dim=1))[0]
save_file({"action": chunk.contiguous()}, out + "/python_chunk.safetensors")
print("python chunk", tuple(chunk.shape), chunk[0].tolist())
