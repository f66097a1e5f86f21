#!/usr/bin/env python3
"""Records LeRobot's own PI0Config and PI05Config, for tests/policies/test_pi_configs.cpp.

For each config (LeRobot's defaults, and one variant of each with most fields changed) it records:
  - "config": what PreTrainedConfig._save_pretrained writes as config.json (draccus.encode against
    PreTrainedConfig, so "type" comes first), after validate_features() (empty cameras, the padded
    state and action features it adds);
  - "optimizer" / "scheduler": get_optimizer_preset() / get_scheduler_preset() encoded by draccus
    against their base classes (OptimizerConfig / LRSchedulerConfig: "type" first);
  - the delta indices the config gives the sampler;
  - "errors": settings __post_init__ refuses, with LeRobot's message.

    PYTHONPATH=<lerobot>/src:<draccus>:... python3 pi_configs_reference.py OUT.json
"""
import json
import sys

import draccus

from lerobot.configs.policies import PreTrainedConfig
from lerobot.configs.types import FeatureType, NormalizationMode, PolicyFeature
from lerobot.optim.optimizers import OptimizerConfig
from lerobot.optim.schedulers import LRSchedulerConfig
from lerobot.policies.pi0.configuration_pi0 import PI0Config
from lerobot.policies.pi05.configuration_pi05 import PI05Config
from lerobot.policies.rtc.configuration_rtc import RTCConfig


def features():
    return dict(
        input_features={
            "observation.images.top": PolicyFeature(type=FeatureType.VISUAL, shape=(3, 96, 128)),
            "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(7,)),
        },
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(7,))},
    )


PI0_VARIANT = dict(
    features(), paligemma_variant="gemma_300m", action_expert_variant="gemma_2b", dtype="bfloat16",
    chunk_size=20, n_action_steps=8, max_state_dim=24, max_action_dim=16, num_inference_steps=5,
    time_sampling_beta_alpha=2.0, time_sampling_beta_beta=1.5, time_sampling_scale=0.9, time_sampling_offset=0.05,
    min_period=0.01, max_period=2.0, use_relative_actions=True, relative_exclude_joints=["gripper", "wrist_roll"],
    action_feature_names=[f"joint_{i}" for i in range(6)] + ["gripper"],
    rtc_config=RTCConfig(execution_horizon=8, max_guidance_weight=5.0), image_resolution=(192, 256),
    empty_cameras=2, gradient_checkpointing=True, compile_mode="reduce-overhead", device="cpu",
    freeze_vision_encoder=True, train_expert_only=True, optimizer_lr=1e-4, optimizer_betas=(0.8, 0.9),
    optimizer_eps=1e-6, optimizer_weight_decay=0.001, optimizer_grad_clip_norm=0.5, scheduler_warmup_steps=100,
    scheduler_decay_steps=3000, scheduler_decay_lr=1e-6, tokenizer_max_length=64, use_amp=True, push_to_hub=False,
    repo_id="user/pi0_test", tags=["a", "b"], license="mit", private=True,
)
PI05_VARIANT = dict(
    features(), dtype="bfloat16", chunk_size=16, n_action_steps=10, use_visual_memory=True,
    use_proprioceptive_memory=True, memory_frames=3, memory_stride=10, memory_temporal_attention_every=2,
    max_state_dim=8, max_action_dim=8, num_inference_steps=4, use_relative_actions=True, relative_exclude_joints=[],
    rtc_config=RTCConfig(mode="trained", execution_horizon=6, prefix_attention_schedule="EXP"),
    rtc_training_max_delay=5, image_resolution=(256, 256), empty_cameras=1, tokenizer_max_length=120,
    normalization_mapping={"VISUAL": NormalizationMode.IDENTITY, "STATE": NormalizationMode.MEAN_STD,
                           "ACTION": NormalizationMode.MIN_MAX},
    gradient_checkpointing=True, freeze_vision_encoder=True, optimizer_lr=5e-5, scheduler_decay_steps=10000,
    push_to_hub=False,
)

ERRORS = {
    "pi0": [dict(chunk_size=10, n_action_steps=11), dict(paligemma_variant="gemma_7b"),
            dict(action_expert_variant="gemma_1b"), dict(dtype="float16")],
    "pi05": [dict(chunk_size=10, n_action_steps=11), dict(chunk_size=10, n_action_steps=5, rtc_training_max_delay=10), dict(rtc_training_max_delay=-1),
             dict(paligemma_variant="gemma_7b"), dict(action_expert_variant="x"), dict(dtype="fp16"),
             dict(memory_frames=0), dict(memory_stride=0), dict(memory_temporal_attention_every=0)],
}


def record(cls, kwargs):
    cfg = cls(**kwargs)
    cfg.validate_features()
    out = {
        "config": draccus.encode(cfg, PreTrainedConfig),
        "optimizer": draccus.encode(cfg.get_optimizer_preset(), OptimizerConfig),
        "scheduler": draccus.encode(cfg.get_scheduler_preset(), LRSchedulerConfig),
        "observation_delta_indices": cfg.observation_delta_indices,
        "action_delta_indices": cfg.action_delta_indices,
    }
    if cls is PI05Config:
        out["image_observation_delta_indices"] = cfg.image_observation_delta_indices
        out["state_observation_delta_indices"] = cfg.state_observation_delta_indices
    return out


def errors(cls, cases):
    out = []
    for kw in cases:
        try:
            cls(**kw)
            out.append({"kwargs": kw, "error": None})
        except ValueError as e:
            out.append({"kwargs": kw, "error": str(e)})
    return out


def main():
    result = {
        "pi0": {"default": record(PI0Config, features()), "variant": record(PI0Config, PI0_VARIANT),
                "bare_default": record(PI0Config, {}), "errors": errors(PI0Config, ERRORS["pi0"])},
        "pi05": {"default": record(PI05Config, features()), "variant": record(PI05Config, PI05_VARIANT),
                 "bare_default": record(PI05Config, {}), "errors": errors(PI05Config, ERRORS["pi05"])},
    }
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
