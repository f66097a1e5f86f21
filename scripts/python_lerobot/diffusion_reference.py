#!/usr/bin/env python3
"""Records what Python LeRobot's Diffusion Policy computes, for tests/policies/test_diffusion_reference.cpp.

Builds small DiffusionPolicy instances, fills every weight from a formula both sides can compute (so
no weights file is kept), and records for each layout, on inputs made the same way:
  - the state-dict names, shapes and dtypes, and the batch-norm statistics of a fresh policy
    (LeRobot's construction dry run moves them);
  - what LeRobot's pre/post-processors make of a raw batch and an action chunk;
  - the training loss (the noise-prediction MSE, or the sample MSE) for torch.manual_seed(SEED),
    with the crop offsets, noise and timesteps that seed gives (captured as LeRobot draws them),
    gradient sums and the batch-norm statistics after the step;
  - the chunk predict_action_chunk returns for a given x_T (DDPM's per-step noise from the seed),
    and the actions select_action returns over six observations after torch.manual_seed(SEED + 1).
Layout "ddpm": two cameras with their own encoders, BatchNorm, a random crop, environment state,
epsilon prediction, DDPM. Layout "ddim": two cameras through one encoder, GroupNorm, resize then
random crop, sample prediction, DDIM, linear betas, no FiLM scale, loss masked on padding.

    PYTHONPATH=<lerobot>/src:<diffusers>/src:<folder with diffusers-*.dist-info>:... \
        python3 diffusion_reference.py OUT.json
"""
import json
import sys

import numpy as np
import torch

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.diffusion.configuration_diffusion import DiffusionConfig
from lerobot.policies.diffusion.modeling_diffusion import DiffusionPolicy
from lerobot.policies.diffusion.processor_diffusion import make_diffusion_pre_post_processors

BASE = dict(n_obs_steps=2, horizon=8, n_action_steps=4, pretrained_backbone_weights=None, down_dims=[16, 32],
            kernel_size=3, n_groups=4, diffusion_step_embed_dim=16, spatial_softmax_num_keypoints=8,
            num_inference_steps=10)
LAYOUTS = {
    "ddpm": dict(BASE, crop_shape=[48, 56], crop_is_random=True, env_dim=4,
                 cameras=["observation.images.top", "observation.images.wrist"]),
    "ddim": dict(BASE, down_dims=[16, 32, 64], resize_shape=[52, 60], crop_ratio=0.9, use_group_norm=True,
                 use_separate_rgb_encoder_per_camera=False, prediction_type="sample", noise_scheduler_type="DDIM",
                 beta_schedule="linear", num_inference_steps=5, use_film_scale_modulation=False,
                 clip_sample_range=0.8, do_mask_loss_for_padding=True, env_dim=0,
                 cameras=["observation.images.left", "observation.images.right"]),
}
STATE, ACTION, IMAGE = 3, 2, (3, 56, 64)
B = 2
SEED = 4321
GRADS = ["diffusion.unet.final_conv.1.weight", "diffusion.unet.final_conv.0.block.1.weight",
         "diffusion.unet.diffusion_step_encoder.1.weight", "diffusion.unet.diffusion_step_encoder.3.bias",
         "diffusion.unet.down_modules.0.0.conv1.block.0.weight", "diffusion.unet.down_modules.0.0.cond_encoder.1.weight",
         "diffusion.unet.down_modules.0.0.residual_conv.weight", "diffusion.unet.down_modules.0.2.weight",
         "diffusion.unet.down_modules.1.1.conv2.block.1.bias", "diffusion.unet.mid_modules.1.conv2.block.0.weight",
         "diffusion.unet.up_modules.0.0.residual_conv.weight", "diffusion.unet.up_modules.0.2.weight",
         "diffusion.rgb_encoder.0.out.weight", "diffusion.rgb_encoder.1.pool.nets.weight",
         "diffusion.rgb_encoder.0.backbone.0.weight", "diffusion.rgb_encoder.1.backbone.1.weight",
         "diffusion.rgb_encoder.1.backbone.7.1.conv2.weight", "diffusion.rgb_encoder.out.bias",
         "diffusion.rgb_encoder.pool.nets.weight", "diffusion.rgb_encoder.backbone.0.weight",
         "diffusion.rgb_encoder.backbone.5.0.downsample.1.weight", "diffusion.rgb_encoder.backbone.7.1.conv2.weight"]


def formula(n, k, scale):
    """scale sin(0.7 i + 0.3 k + 0.1 + 0.001 i^2), float64; the quadratic term keeps weight matrices
    from being rank 2 (see act_reference.py)."""
    i = np.arange(n, dtype=np.float64)
    return scale * np.sin(0.7 * i + 0.3 * k + 0.1 + 1e-3 * i * i)


def t(n_k, shape, scale=1.0, offset=0.0):
    n = int(np.prod(shape))
    return (offset + torch.from_numpy(formula(n, n_k, scale)).float()).view(*shape)


def keep_natural(key):
    return key.endswith(("running_mean", "running_var", "pos_grid"))


def fill(policy):
    """Every floating tensor but the batch-norm statistics and the keypoint grid: 0.1 sin(...),
    norm weights (1-D `weight`s) 1 + 0.1 sin(...)."""
    sd = policy.state_dict()
    with torch.no_grad():
        for k, name in enumerate(sorted(sd)):
            x = sd[name]
            if not x.is_floating_point() or keep_natural(name):
                continue
            offset = 1.0 if (name.endswith("weight") and x.dim() == 1) else 0.0
            x.copy_(t(k, x.shape, 0.1, offset))


def config_fields(layout):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in LAYOUTS[layout].items()
            if k not in ("cameras", "env_dim")}


def features(layout):
    cfg = LAYOUTS[layout]
    inputs = {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(STATE,))}
    if cfg["env_dim"]:
        inputs["observation.environment_state"] = PolicyFeature(type=FeatureType.ENV, shape=(cfg["env_dim"],))
    for cam in cfg["cameras"]:
        inputs[cam] = PolicyFeature(type=FeatureType.VISUAL, shape=IMAGE)
    return inputs, {"action": PolicyFeature(type=FeatureType.ACTION, shape=(ACTION,))}


def make_policy(layout):
    cfg = DiffusionConfig(**config_fields(layout))
    cfg.input_features, cfg.output_features = features(layout)
    policy = DiffusionPolicy(cfg)
    fill(policy)
    return cfg, policy


def inputs(layout):
    """A normalized-looking training batch with n_obs_steps of observations and horizon actions, the
    last three of the second row padding."""
    cfg = LAYOUTS[layout]
    n, h = cfg["n_obs_steps"], cfg["horizon"]
    batch = {"observation.state": t(101, (B, n, STATE)),
             "action": t(103, (B, h, ACTION)),
             "action_is_pad": torch.zeros(B, h, dtype=torch.bool)}
    batch["action_is_pad"][1, -3:] = True
    if cfg["env_dim"]:
        batch["observation.environment_state"] = t(104, (B, n, cfg["env_dim"]))
    for c, cam in enumerate(cfg["cameras"]):
        batch[cam] = t(110 + c, (B, n, *IMAGE), 0.5, 0.5)
    return batch


def stats(layout):
    inputs_, outputs = features(layout)
    out = {}
    for j, (key, ft) in enumerate({**inputs_, **outputs}.items()):
        shape = (3, 1, 1) if ft.type == FeatureType.VISUAL else tuple(ft.shape)
        out[key] = {"mean": t(200 + j, shape, 0.3), "std": t(220 + j, shape, 0.2, 0.6),
                    "min": t(240 + j, shape, 0.3, -1.0), "max": t(260 + j, shape, 0.3, 1.0)}
    return out


def flat(x):
    return [float(v) for v in x.detach().reshape(-1).tolist()]


def norm_stats(policy):
    """Sums of every running_mean / running_var and every num_batches_tracked value."""
    sd = policy.state_dict()
    pick = lambda suffix: [v for k, v in sd.items() if k.endswith(suffix)]
    return {"running_mean_sum": float(sum(v.double().sum() for v in pick("running_mean"))),
            "running_var_sum": float(sum(v.double().sum() for v in pick("running_var"))),
            "num_batches_tracked": sorted({int(v) for v in pick("num_batches_tracked")})}


def record(layout):
    cfg, policy = make_policy(layout)
    out = {"config": LAYOUTS[layout], "crop_shape": list(cfg.crop_shape) if cfg.crop_shape else None,
           "state_dim": STATE, "action_dim": ACTION, "image_shape": list(IMAGE), "batch": B, "seed": SEED}
    sd = policy.state_dict()
    out["keys"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")} for k, v in sd.items()}
    out["optim_params"] = len(list(policy.get_optim_params()))
    out["fresh_norm_stats"] = norm_stats(policy)
    sched = policy.diffusion.noise_scheduler
    out["alphas_cumprod"] = flat(sched.alphas_cumprod)

    # Processors: LeRobot's normalizer on a raw (one-step) batch, its unnormalizer on a chunk.
    pre, post = make_diffusion_pre_post_processors(cfg, dataset_stats=stats(layout))
    raw = {k: (v[:, -1] if k.startswith("observation") else v) for k, v in inputs(layout).items()
           if k != "action_is_pad"}
    normalized = pre(dict(raw))
    out["processor_steps"] = [type(s).__name__ for s in pre.steps] + [type(s).__name__ for s in post.steps]
    out["preprocessed"] = {k: {"sum": float(normalized[k].double().sum()), "first": flat(normalized[k].reshape(-1)[:8])}
                           for k in raw}
    out["postprocessed_action"] = flat(post(t(120, (B, cfg.n_action_steps, ACTION))))

    # Training loss: the noise and timesteps are captured where LeRobot adds the noise.
    drawn = {}
    add_noise = sched.add_noise

    def capture(original, noise, timesteps):
        drawn["noise"], drawn["timesteps"] = noise.clone(), timesteps.clone()
        return add_noise(original, noise, timesteps)

    sched.add_noise = capture
    policy.train()
    torch.manual_seed(SEED)
    loss, _ = policy.forward(inputs(layout))
    loss.backward()
    sched.add_noise = add_noise
    out["noise"] = flat(drawn["noise"])
    out["timesteps"] = [int(v) for v in drawn["timesteps"]]
    out["loss"] = float(loss)
    params = dict(policy.named_parameters())
    out["grads"] = {n: {"sum": float(params[n].grad.sum()), "abs_sum": float(params[n].grad.abs().sum())}
                    for n in GRADS if n in params}
    out["no_grad"] = sorted(n for n, p in params.items() if p.grad is None)
    out["final_conv_bias_grad"] = flat(policy.diffusion.unet.final_conv[1].bias.grad)
    out["trained_norm_stats"] = norm_stats(policy)

    # Inference on a fresh policy: a chunk from a given x_T, then select_action over six observations.
    cfg, policy = make_policy(layout)
    policy.eval()
    obs = {k: v for k, v in inputs(layout).items() if k.startswith("observation")}
    x_t = t(130, (B, cfg.horizon, ACTION))
    with torch.no_grad():
        torch.manual_seed(SEED)
        out["chunk"] = flat(policy.predict_action_chunk(dict(obs), noise=x_t))
        policy.reset()
        torch.manual_seed(SEED + 1)
        actions = []
        for step in range(6):
            o = {k: (v[:, step % cfg.n_obs_steps] * (1 + 0.1 * step) if k == "observation.state"
                     else v[:, step % cfg.n_obs_steps]) for k, v in obs.items()}
            actions.append(flat(policy.select_action(o)))
    out["select_actions"] = actions
    print(layout, "loss", out["loss"], "timesteps", out["timesteps"])
    return out


def main():
    out = {layout: record(layout) for layout in LAYOUTS}
    json.dump(out, open(sys.argv[1], "w"), indent=1)
    print("wrote", sys.argv[1])


if __name__ == "__main__":
    main()
