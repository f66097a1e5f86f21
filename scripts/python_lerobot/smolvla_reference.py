#!/usr/bin/env python3
"""Records what Python LeRobot's SmolVLA computes, for tests/policies/test_smolvla_reference.cpp.

Builds LeRobot's SmolVLAPolicy on the tiny backbone folder smolvla_tiny_vlm.py writes (the same
folder is kept in tests/policies/data/smolvla_tiny_vlm), fills every weight from a formula both
sides compute (so no weights file is kept), and records on inputs made the same way:
  - the state-dict names, shapes and dtypes, and which parameters train;
  - what LeRobot's preprocessor makes of two task strings (newline step + tokenizer step);
  - the training loss for a given noise and time, its logged values and some gradients;
  - the loss for torch.manual_seed(7) (noise and Beta(1.5, 1) time drawn by LeRobot);
  - the action chunk predict_action_chunk returns for a given noise (KV-cached denoising);
  - with real-time chunking (guided), the chunks for a previous chunk's leftover under each prefix
    schedule, and the prefix weights;
for three configurations: LeRobot's defaults (cross-attention every other layer, expert as deep as
the VLM) on two cameras plus one empty camera; a half-depth expert (self-attention in the first of four layers) with image special tokens and a
padded prefix; self-attention in every layer; and load_vlm_weights, with which LeRobot loads the
backbone in bfloat16 (and builds the expert in bfloat16 but for its cross-attention k/v
projections): the mixed-precision path of fine-tuning lerobot/smolvla_base; and adapt_to_pi_aloha
(14-dim state and action: the Aloha joint flips and gripper conversions). (Self-attention with a shallower expert is left out:
LeRobot's own denoising fails on it, torch.cat of an empty list.)

    python3 smolvla_reference.py VLM_DIR OUT.json
"""
import json
import sys

import numpy as np
import torch

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.smolvla.configuration_smolvla import SmolVLAConfig
from lerobot.policies.smolvla.modeling_smolvla import SmolVLAPolicy
from lerobot.policies.rtc.modeling_rtc import RTCProcessor
from lerobot.policies.smolvla.processor_smolvla import make_smolvla_pre_post_processors

BASE = dict(n_obs_steps=1, chunk_size=5, n_action_steps=5, max_state_dim=8, max_action_dim=8,
            resize_imgs_with_padding=(32, 32), empty_cameras=1, tokenizer_max_length=12, num_steps=3,
            num_vlm_layers=4, load_vlm_weights=False, device="cpu")
VARIANTS = {
    "default": {},
    "half_expert": dict(num_expert_layers=2, self_attn_every_n_layers=4, add_image_special_tokens=True, prefix_length=40, empty_cameras=0),
    "self_attn": dict(attention_mode="self_attn", empty_cameras=0),
    "bf16_backbone": dict(load_vlm_weights=True, empty_cameras=0),
    "aloha": dict(adapt_to_pi_aloha=True, empty_cameras=0, max_state_dim=16, max_action_dim=16),
}
# The Aloha conversion flips and converts joints 1, 2, 6, 8, 9 and 13: 14-dim state and action.
DIMS = {"aloha": (14, 14)}
STATE, ACTION = 3, 2
CAMERAS = {"observation.images.top": (3, 24, 40), "observation.images.wrist": (3, 32, 32)}
TASKS = ["Pick up the red cube and place it in the bin.", "stack 2 blocks\n"]
B = 2
# Weights of this size make the attention sharp enough that positions and masks change the loss
# (at 0.1 the softmax is nearly uniform and a wrong rotary offset goes unseen).
FILL_SCALE = 0.5


def formula(n, k, scale):
    i = np.arange(n, dtype=np.float64)
    return scale * np.sin(0.7 * i + 0.3 * k + 0.1)


def t(n, k, scale, shape):
    return torch.from_numpy(formula(n, k, scale)).float().view(*shape)


def fill(policy):
    sd = policy.state_dict()
    with torch.no_grad():
        for k, name in enumerate(sorted(sd)):
            x = sd[name]
            if x.is_floating_point():
                x.copy_(t(x.numel(), k, FILL_SCALE, x.shape))


def dims(variant):
    return DIMS.get(variant, (STATE, ACTION))


def make_policy(vlm_dir, variant):
    cfg = SmolVLAConfig(vlm_model_name=vlm_dir, **{**BASE, **VARIANTS[variant]})
    state, action = dims(variant)
    cfg.input_features = {k: PolicyFeature(type=FeatureType.VISUAL, shape=s) for k, s in CAMERAS.items()}
    cfg.input_features["observation.state"] = PolicyFeature(type=FeatureType.STATE, shape=(state,))
    cfg.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(action,))}
    policy = SmolVLAPolicy(cfg)
    fill(policy)
    return cfg, policy


def inputs(tokens, mask, variant="default"):
    state, action = dims(variant)
    batch = {k: 0.5 + 0.5 * t(B * int(np.prod(s)), 200 + i, 1.0, (B, *s)) for i, (k, s) in enumerate(CAMERAS.items())}
    batch["observation.state"] = t(B * state, 210, 1.0, (B, state))
    batch["action"] = t(B * 5 * action, 211, 1.0, (B, 5, action))
    pad = torch.zeros(B, 5, dtype=torch.bool)
    pad[1, 3:] = True
    batch["action_is_pad"] = pad
    batch["observation.language.tokens"] = tokens
    batch["observation.language.attention_mask"] = mask
    return batch


def flat(x):
    return [float(v) for v in x.detach().reshape(-1).tolist()]


def grad_sum(policy, name):
    p = dict(policy.named_parameters())[name]
    return None if p.grad is None else float(p.grad.sum())


def record(vlm_dir, variant):
    cfg, policy = make_policy(vlm_dir, variant)
    out = {"config": {k: list(v) if isinstance(v, tuple) else v for k, v in {**BASE, **VARIANTS[variant]}.items()},
           "state_dim": dims(variant)[0], "action_dim": dims(variant)[1]}
    m = cfg.max_action_dim
    out["keys"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
                   for k, v in policy.state_dict().items()}
    out["parameters"] = [n for n, _ in policy.named_parameters()]
    out["trainable"] = [n for n, p in policy.named_parameters() if p.requires_grad]

    # The preprocessor's language step: the task gets a newline, then the tokenizer (padding longest).
    pre, _ = make_smolvla_pre_post_processors(cfg, dataset_stats=None)
    from lerobot.processor.converters import create_transition
    from lerobot.processor import TransitionKey
    transition = create_transition(observation={"observation.state": torch.zeros(B, STATE)},
                                   complementary_data={"task": list(TASKS)})
    for step in pre.steps:
        name = type(step).__name__
        if name in ("NewLineTaskProcessorStep", "TokenizerProcessorStep"):
            transition = step(transition)
    o = transition[TransitionKey.OBSERVATION]
    tokens, mask = o["observation.language.tokens"], o["observation.language.attention_mask"]
    out["tasks"] = TASKS
    out["tokens"] = tokens.tolist()
    out["token_mask"] = mask.tolist()
    out["processor_steps"] = [type(s).__name__ for s in pre.steps]

    batch = inputs(tokens, mask, variant)

    def fresh():  # LeRobot's Aloha conversion writes into the batch's tensors: each call gets copies
        return {k: v.clone() for k, v in batch.items()}

    noise = t(B * 5 * m, 220, 1.0, (B, 5, m))
    time = torch.tensor([0.3, 0.8])
    policy.train()
    loss, info = policy.forward(fresh(), noise=noise, time=time)
    loss.backward()
    out["loss"] = float(loss)
    out["values"] = {k: float(v) for k, v in info.items()}
    out["grads"] = {n: grad_sum(policy, n) for n in [
        "model.action_out_proj.bias", "model.action_out_proj.weight", "model.state_proj.weight",
        "model.action_time_mlp_in.weight", "model.action_in_proj.weight",
        "model.vlm_with_expert.lm_expert.layers.0.self_attn.q_proj.weight",
        "model.vlm_with_expert.lm_expert.layers.1.self_attn.k_proj.weight",
        "model.vlm_with_expert.lm_expert.layers.1.mlp.down_proj.weight",
        "model.vlm_with_expert.lm_expert.norm.weight",
        "model.vlm_with_expert.vlm.model.text_model.layers.0.self_attn.q_proj.weight"]}
    out["action_out_proj_bias_grad"] = flat(policy.model.action_out_proj.bias.grad)

    policy.zero_grad()
    torch.manual_seed(7)
    loss, _ = policy.forward(fresh())
    out["seeded_loss"] = float(loss)

    policy.eval()
    policy.reset()
    with torch.no_grad():
        chunk = policy.predict_action_chunk(fresh(), noise=t(B * 5 * m, 221, 1.0, (B, 5, m)))
    out["chunk"] = flat(chunk)
    out["chunk_shape"] = list(chunk.shape)
    if variant in RTC_VARIANTS:
        out["rtc"] = record_rtc(policy, fresh, m)
    return out


# Real-time chunking (guided): the chunk denoised toward the previous chunk's leftover (4 steps of
# the real action dims, shorter and narrower than the chunk: LeRobot pads it), for each prefix
# schedule, and with an execution horizon given at the call (longer than the leftover: clipped).
RTC_VARIANTS = ("default", "aloha")
RTC_CASES = [dict(schedule=s, horizon=None) for s in ("ZEROS", "ONES", "LINEAR", "EXP")] + [
    dict(schedule="LINEAR", horizon=10)]


def record_rtc(policy, fresh, m):
    from lerobot.configs.types import RTCAttentionSchedule
    from lerobot.policies.rtc.configuration_rtc import RTCConfig
    action = policy.config.output_features["action"].shape[0]
    left = t(B * 4 * action, 230, 1.0, (B, 4, action))
    cases = []
    for case in RTC_CASES:
        policy.config.rtc_config = RTCConfig(prefix_attention_schedule=RTCAttentionSchedule(case["schedule"]),
                                             execution_horizon=3, max_guidance_weight=5.0)
        policy.init_rtc_processor()
        kwargs = dict(inference_delay=2, prev_chunk_left_over=left.clone())
        if case["horizon"] is not None:
            kwargs["execution_horizon"] = case["horizon"]
        with torch.no_grad():
            chunk = policy.predict_action_chunk(fresh(), noise=t(B * 5 * m, 221, 1.0, (B, 5, m)), **kwargs)
        cases.append({**case, "chunk": flat(chunk)})
    # No leftover yet (the first chunk): RTC changes nothing.
    with torch.no_grad():
        first = policy.predict_action_chunk(fresh(), noise=t(B * 5 * m, 221, 1.0, (B, 5, m)), inference_delay=2,
                                            prev_chunk_left_over=None)
    weights = {}
    for sched in ("ZEROS", "ONES", "LINEAR", "EXP"):
        proc = RTCProcessor(RTCConfig(prefix_attention_schedule=RTCAttentionSchedule(sched)))
        weights[sched] = [[start, end, total, flat(proc.get_prefix_weights(start, end, total))]
                          for start, end, total in ((2, 3, 5), (0, 4, 8), (3, 3, 6), (5, 2, 7), (1, 9, 6), (0, 0, 4))]
    policy.config.rtc_config = None
    policy.init_rtc_processor()
    return {"leftover": flat(left), "leftover_shape": list(left.shape), "inference_delay": 2, "execution_horizon": 3,
            "max_guidance_weight": 5.0, "cases": cases, "first_chunk": flat(first), "weights": weights}


def main():
    vlm_dir, path = sys.argv[1], sys.argv[2]
    out = {"fill_scale": FILL_SCALE, "state_dim": STATE, "action_dim": ACTION, "cameras": {k: list(v) for k, v in CAMERAS.items()},
           "batch": B, "variants": {v: record(vlm_dir, v) for v in VARIANTS}}
    json.dump(out, open(path, "w"), indent=1)
    for v, r in out["variants"].items():
        print(v, "loss", r["loss"], "seeded", r["seeded_loss"], "chunk[:4]", r["chunk"][:4])


if __name__ == "__main__":
    main()
