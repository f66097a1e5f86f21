#!/usr/bin/env python3
"""Records what Python LeRobot's VQ-BeT computes, for tests/policies/test_vqbet_reference.cpp.

Builds a small VQBeTPolicy, fills every weight from a formula both sides can compute (so no weights
file is kept), and records on inputs made the same way:
  - the state-dict names, shapes and dtypes;
  - the three optimizer groups of get_optim_params (names, lr, weight decay);
  - phase 1: the VQ-VAE loss, its logged values, a gradient sum, and the codebooks after the
    EMA update of one training forward;
  - phase 2 (discretized): the GPT's training loss, its logged values and gradient sums;
  - rollout: the actions select_action returns over six observations.
The code sampling runs at a temperature of 1e-4, so torch.multinomial picks the most likely code.

    PYTHONPATH=<lerobot>/src:... python3 vqbet_reference.py OUT.json
"""
import json
import math
import sys

import numpy as np
import torch

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.vqbet.configuration_vqbet import VQBeTConfig
from lerobot.policies.vqbet.modeling_vqbet import VQBeTPolicy

CFG = dict(n_obs_steps=3, n_action_pred_token=2, action_chunk_size=2, crop_shape=(32, 40), crop_is_random=False,
           pretrained_backbone_weights=None, n_vqvae_training_steps=2, vqvae_n_embed=4, vqvae_embedding_dim=8,
           vqvae_enc_hidden_dim=16, gpt_block_size=16, gpt_input_dim=24, gpt_output_dim=20, gpt_n_layer=2,
           gpt_n_head=2, gpt_hidden_dim=32, dropout=0.0, offset_loss_weight=100.0, bet_softmax_temperature=1e-4)
STATE, ACTION, IMAGE = 3, 2, (3, 40, 48)
B = 2


def formula(n, k, scale):
    i = np.arange(n, dtype=np.float64)
    return scale * np.sin(0.7 * i + 0.3 * k + 0.1)


def keep_natural(key):
    return key.endswith(("running_mean", "running_var", "pos_grid", ".attn.bias", "initted", "cluster_size",
                         "embed_avg"))


def fill(policy):
    sd = policy.state_dict()
    with torch.no_grad():
        for k, name in enumerate(sorted(sd)):
            t = sd[name]
            if not t.is_floating_point() or keep_natural(name):
                continue
            t.copy_(torch.from_numpy(formula(t.numel(), k, 0.1)).float().view(t.shape))
        for name in sd:
            if name.endswith("embed_avg"):
                sd[name].copy_(sd[name[: -len("embed_avg")] + "embed"])


def inputs():
    L = CFG["n_obs_steps"] + CFG["n_action_pred_token"] + CFG["action_chunk_size"] - 2
    n = CFG["n_obs_steps"]
    state = torch.from_numpy(formula(B * n * STATE, 101, 1.0)).float().view(B, n, STATE)
    image = 0.5 + 0.5 * torch.from_numpy(formula(B * n * math.prod(IMAGE), 102, 1.0)).float().view(B, n, *IMAGE)
    action = torch.from_numpy(formula(B * L * ACTION, 103, 1.0)).float().view(B, L, ACTION)
    return {"observation.state": state, "observation.image": image, "action": action,
            "action_is_pad": torch.zeros(B, L, dtype=torch.bool)}


def check_margin(module, args, logits):
    """The sampling is deterministic only when the best code's logit leads the next by far more
    than the temperature."""
    top2 = logits.detach().view(logits.shape[0], 2, -1).topk(2, dim=-1).values
    gap = float((top2[..., 0] - top2[..., 1]).min())
    assert gap > 50 * CFG["bet_softmax_temperature"], f"code logits too close ({gap}): change the formula"


def make_policy(discretized):
    cfg = VQBeTConfig(**CFG)
    cfg.input_features = {"observation.image": PolicyFeature(type=FeatureType.VISUAL, shape=IMAGE),
                          "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(STATE,))}
    cfg.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(ACTION,))}
    policy = VQBeTPolicy(cfg)
    fill(policy)
    policy.vqbet.action_head.map_to_cbet_preds_bin.register_forward_hook(check_margin)
    if discretized:
        policy.vqbet.action_head.vqvae_model.discretized.fill_(True)
        policy.vqbet.action_head.vqvae_model.vq_layer.freeze_codebook.fill_(True)
    return policy


def flat(t):
    return [float(x) for x in t.detach().reshape(-1).tolist()]


def main():
    out = {"config": {k: list(v) if isinstance(v, tuple) else v for k, v in CFG.items()},
           "state_dim": STATE, "action_dim": ACTION, "image_shape": list(IMAGE), "batch": B}
    policy = make_policy(False)
    out["keys"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
                   for k, v in policy.state_dict().items()}
    names = {id(p): n for n, p in policy.named_parameters()}
    out["optim_groups"] = [{"names": [names[id(p)] for p in g["params"]], "lr": g.get("lr"),
                            "weight_decay": g.get("weight_decay")} for g in policy.get_optim_params()]

    # Phase 1: one training forward of the VQ-VAE.
    policy.train()
    loss, info = policy.forward(inputs())
    loss.backward()
    vq = policy.vqbet.action_head.vqvae_model
    out["phase1"] = {
        "loss": float(loss), "values": {k: float(v) for k, v in info.items()},
        "encoder0_weight_grad_sum": float(vq.encoder[0].weight.grad.sum()),
        "decoder4_bias_grad": flat(vq.decoder[4].bias.grad),
        "embed": [flat(layer._codebook.embed) for layer in vq.vq_layer.layers],
        "cluster_size": [flat(layer._codebook.cluster_size) for layer in vq.vq_layer.layers],
        "discretized_after": bool(vq.discretized.item())}

    # Phase 2: the GPT's loss with the VQ-VAE frozen.
    policy = make_policy(True)
    policy.train()
    loss, info = policy.forward(inputs())
    loss.backward()
    m = policy.vqbet
    out["phase2"] = {
        "loss": float(loss), "values": {k: float(v) for k, v in info.items()},
        "wte_weight_grad_sum": float(m.policy.transformer.wte.weight.grad.sum()),
        "wte_weight_grad_abs_sum": float(m.policy.transformer.wte.weight.grad.abs().sum()),
        "action_token_grad": flat(m.action_token.grad),
        "bin_bias_grad": flat(m.action_head.map_to_cbet_preds_bin[0].bias.grad),
        "rgb_out_bias_grad": flat(m.rgb_encoder.out.bias.grad),
        "vqvae_encoder_has_grad": vq.encoder[0].weight.grad is not None and
        policy.vqbet.action_head.vqvae_model.encoder[0].weight.grad is not None}

    # Rollout: select_action over six observations (a chunk every action_chunk_size calls).
    policy = make_policy(True)
    policy.eval()
    policy.reset()
    batch = inputs()
    actions = []
    with torch.no_grad():
        for t in range(6):
            s = t % CFG["n_obs_steps"]
            obs = {"observation.state": batch["observation.state"][:, s] * (1 + 0.1 * t),
                   "observation.image": batch["observation.image"][:, s]}
            actions.append(flat(policy.select_action(obs)))
    out["rollout_actions"] = actions
    json.dump(out, open(sys.argv[1], "w"), indent=1)
    print("wrote", sys.argv[1], "phase1 loss", out["phase1"]["loss"], "phase2 loss", out["phase2"]["loss"])


if __name__ == "__main__":
    main()
