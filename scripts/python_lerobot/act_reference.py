#!/usr/bin/env python3
"""Records what Python LeRobot's ACT computes, for tests/policies/test_act_reference.cpp.

Builds small ACTPolicy instances, fills every weight from a formula both sides can compute (so no
weights file is kept), and records for each layout, on inputs made the same way:
  - the state-dict names, shapes and dtypes, and the sinusoidal VAE position buffer's sums;
  - the optimizer groups of get_optim_params (sizes and lr);
  - what LeRobot's pre/post-processors make of a raw batch and an action chunk;
  - the training loss for torch.manual_seed(SEED) (the VAE latent's noise), its logged values
    (l1_loss, kld_loss), and gradient sums; the normal draw that seed gives is recorded too;
  - the action chunk predict_action_chunk returns and the actions select_action returns.
Layout "default": post-norm, ReLU, VAE, two cameras, state and environment state, padded actions.
Layout "prenorm": pre-norm, GELU, ResNet-50 with a dilated last stage, one camera, no VAE, temporal ensembling.

    PYTHONPATH=<lerobot>/src:... python3 act_reference.py OUT.json
"""
import json
import sys

import numpy as np
import torch

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.act.configuration_act import ACTConfig
from lerobot.policies.act.modeling_act import ACTPolicy
from lerobot.policies.act.processor_act import make_act_pre_post_processors

BASE = dict(chunk_size=6, n_action_steps=4, dim_model=32, n_heads=4, dim_feedforward=64, n_encoder_layers=2,
            n_decoder_layers=2, n_vae_encoder_layers=2, latent_dim=8, dropout=0.0, kl_weight=10.0,
            pretrained_backbone_weights=None)
LAYOUTS = {
    "default": dict(BASE, cameras=["observation.images.top", "observation.images.wrist"], env_dim=5),
    "prenorm": dict(BASE, pre_norm=True, feedforward_activation="gelu", vision_backbone="resnet50",
                    replace_final_stride_with_dilation=True,
                    use_vae=False, n_action_steps=1, temporal_ensemble_coeff=0.01, kl_weight=3.0,
                    cameras=["observation.images.front"], env_dim=0),
}
STATE, ACTION, IMAGE = 4, 3, (3, 48, 64)
B = 2
SEED = 1234
GRADS = ["model.action_head.weight", "model.decoder.layers.1.linear2.weight", "model.decoder.norm.weight",
         "model.decoder_pos_embed.weight", "model.encoder.layers.0.self_attn.in_proj_weight",
         "model.encoder.layers.1.norm2.bias", "model.encoder_1d_feature_pos_embed.weight",
         "model.encoder_img_feat_input_proj.weight", "model.encoder_latent_input_proj.weight",
         "model.encoder_robot_state_input_proj.weight", "model.encoder_env_state_input_proj.bias",
         "model.backbone.conv1.weight", "model.backbone.layer1.0.conv1.weight", "model.backbone.layer4.1.conv2.weight",
         "model.backbone.layer3.0.downsample.0.weight", "model.vae_encoder.layers.1.linear1.weight",
         "model.vae_encoder_cls_embed.weight", "model.vae_encoder_latent_output_proj.weight",
         "model.vae_encoder_action_input_proj.weight", "model.vae_encoder_robot_state_input_proj.bias"]


def formula(n, k, scale):
    """scale sin(0.7 i + 0.3 k + 0.1 + 0.001 i^2), float64. The quadratic term keeps weight matrices
    from being rank 2 (with a phase linear in the flat index they are, and the chunk then moved by
    1e-6 when the state halved)."""
    i = np.arange(n, dtype=np.float64)
    return scale * np.sin(0.7 * i + 0.3 * k + 0.1 + 1e-3 * i * i)


def t(n_k, shape, scale=1.0, offset=0.0):
    n = int(np.prod(shape))
    return (offset + torch.from_numpy(formula(n, n_k, scale)).float()).view(*shape)


def keep_natural(key):
    return key.endswith(("running_mean", "running_var", "vae_encoder_pos_enc"))


def fill(policy):
    """Every floating tensor but the batch-norm statistics and the sinusoidal buffer: 0.1 sin(...),
    norm weights (1-D `weight`s) 1 + 0.1 sin(...) so the frozen ResNet keeps its signal."""
    sd = policy.state_dict()
    with torch.no_grad():
        for k, name in enumerate(sorted(sd)):
            x = sd[name]
            if not x.is_floating_point() or keep_natural(name):
                continue
            offset = 1.0 if (name.endswith("weight") and x.dim() == 1) else 0.0
            x.copy_(t(k, x.shape, 0.1, offset))


def features(layout):
    cfg = LAYOUTS[layout]
    inputs = {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(STATE,))}
    if cfg["env_dim"]:
        inputs["observation.environment_state"] = PolicyFeature(type=FeatureType.ENV, shape=(cfg["env_dim"],))
    for cam in cfg["cameras"]:
        inputs[cam] = PolicyFeature(type=FeatureType.VISUAL, shape=IMAGE)
    return inputs, {"action": PolicyFeature(type=FeatureType.ACTION, shape=(ACTION,))}


def make_policy(layout):
    cfg = ACTConfig(**{k: v for k, v in LAYOUTS[layout].items() if k not in ("cameras", "env_dim")})
    cfg.input_features, cfg.output_features = features(layout)
    policy = ACTPolicy(cfg)
    fill(policy)
    return cfg, policy


def inputs(layout):
    """A normalized-looking training batch: state, environment state, cameras, a chunk of actions
    whose last two steps are padding in the second row."""
    cfg = LAYOUTS[layout]
    T = cfg["chunk_size"]
    batch = {"observation.state": t(101, (B, STATE)),
             "action": t(103, (B, T, ACTION)),
             "action_is_pad": torch.zeros(B, T, dtype=torch.bool)}
    batch["action_is_pad"][1, -2:] = True
    if cfg["env_dim"]:
        batch["observation.environment_state"] = t(104, (B, cfg["env_dim"]))
    for c, cam in enumerate(cfg["cameras"]):
        batch[cam] = t(110 + c, (B, *IMAGE), 0.5, 0.5)
    return batch


def stats(layout):
    """Dataset statistics by formula (std and max - min kept away from 0)."""
    inputs_, outputs = features(layout)
    out = {}
    for j, (key, ft) in enumerate({**inputs_, **outputs}.items()):
        shape = (3, 1, 1) if ft.type == FeatureType.VISUAL else tuple(ft.shape)
        out[key] = {"mean": t(200 + j, shape, 0.3), "std": t(220 + j, shape, 0.2, 0.6),
                    "min": t(240 + j, shape, 0.3, -1.0), "max": t(260 + j, shape, 0.3, 1.0)}
    return out


def flat(x):
    return [float(v) for v in x.detach().reshape(-1).tolist()]


def record(layout):
    cfg, policy = make_policy(layout)
    out = {"config": {k: v for k, v in LAYOUTS[layout].items()},
           "state_dim": STATE, "action_dim": ACTION, "image_shape": list(IMAGE), "batch": B, "seed": SEED}
    sd = policy.state_dict()
    out["keys"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")} for k, v in sd.items()}
    if "model.vae_encoder_pos_enc" in sd:
        pe = sd["model.vae_encoder_pos_enc"].double()
        out["vae_encoder_pos_enc"] = {"sum": float(pe.sum()), "abs_sum": float(pe.abs().sum()),
                                      "row1": flat(pe[0, 1])}
    groups = policy.get_optim_params()
    out["optim_groups"] = [{"size": len(g["params"]), "lr": g.get("lr")} for g in groups]

    # Processors: LeRobot's normalizer on a raw batch, its unnormalizer on an action chunk.
    pre, post = make_act_pre_post_processors(cfg, dataset_stats=stats(layout))
    raw = {k: v for k, v in inputs(layout).items() if k != "action_is_pad"}
    normalized = pre(dict(raw))
    out["processor_steps"] = [type(s).__name__ for s in pre.steps] + [type(s).__name__ for s in post.steps]
    out["preprocessed"] = {k: {"sum": float(normalized[k].double().sum()), "first": flat(normalized[k].reshape(-1)[:8])}
                           for k in raw}
    out["postprocessed_action"] = flat(post(t(120, (B, cfg.chunk_size, ACTION))))

    # The normal draw the seed gives (the VAE's reparameterization noise, (B, latent_dim)).
    torch.manual_seed(SEED)
    out["seed_randn"] = flat(torch.randn(B, cfg.latent_dim))

    # Training loss and gradients.
    policy.train()
    torch.manual_seed(SEED)
    loss, info = policy.forward(inputs(layout))
    loss.backward()
    out["loss"] = float(loss)
    out["values"] = {k: float(v) for k, v in info.items()}
    params = dict(policy.named_parameters())
    out["grads"] = {n: {"sum": float(params[n].grad.sum()), "abs_sum": float(params[n].grad.abs().sum())}
                    for n in GRADS if n in params and params[n].grad is not None}
    out["no_grad"] = sorted(n for n, p in params.items() if p.grad is None)
    out["action_head_bias_grad"] = flat(policy.model.action_head.bias.grad)

    # Inference: the chunk (z = 0) and select_action over a few observations.
    policy.eval()
    obs = {k: v for k, v in inputs(layout).items() if k.startswith("observation")}
    with torch.no_grad():
        out["chunk"] = flat(policy.predict_action_chunk(dict(obs)))
        policy.reset()
        actions = []
        for step in range(5):
            o = {k: v * (1 + 0.1 * step) if k == "observation.state" else v for k, v in obs.items()}
            actions.append(flat(policy.select_action(o)))
    out["select_actions"] = actions
    print(layout, "loss", out["loss"], out["values"])
    return out


def main():
    out = {layout: record(layout) for layout in LAYOUTS}
    json.dump(out, open(sys.argv[1], "w"), indent=1)
    print("wrote", sys.argv[1])


if __name__ == "__main__":
    main()
