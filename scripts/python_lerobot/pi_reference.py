#!/usr/bin/env python3
"""Records what Python LeRobot's π0 (PI0Policy) and π0.5 (PI05Policy) compute at tiny sizes, for the
C++ port's reference tests (tests/policies/data/pi_reference.json).

LeRobot only knows the full-size Gemma variants, so the script monkeypatches (does not rewrite)
three names in BOTH module namespaces lerobot.policies.pi0.modeling_pi0 and
lerobot.policies.pi05.modeling_pi05:
  - get_gemma_config: "gemma_2b" -> GemmaConfig(width=64, depth=2, mlp_dim=128, num_heads=8,
    num_kv_heads=1, head_dim=16); "gemma_300m" -> GemmaConfig(width=32, depth=2, mlp_dim=64,
    num_heads=8, num_kv_heads=1, head_dim=16) (the module's own GemmaConfig class; num_heads stays 8
    because compute_layer_complete hard-codes 1 * 8 * head_dim);
  - PaliGemmaForConditionalGenerationWithPiGemma: a subclass whose __init__ first sets
    text_config.vocab_size = 512 and the SigLIP vision_config to hidden_size 32, intermediate_size 64,
    2 layers, 2 heads, patch_size 8, projection_dim = text hidden size, then calls the real __init__;
  - CONFIG_MAPPING: CONFIG_MAPPING["paligemma"] is the real one, CONFIG_MAPPING["gemma"](**kw) calls
    the real one with vocab_size forced to 512.
One compatibility shim, in lerobot.policies.pi_gemma: LeRobot 0.6.2 pins transformers <5.6 and its
PiGemmaModel.forward passes cache_position= to transformers' create_causal_mask, which 5.12 no longer
accepts (TypeError on every KV-cached prefix pass, i.e. predict_action_chunk). The shim drops that
argument (5.12's docstring calls it "deprecated and unused"); LeRobot always passes a prepared 4D mask,
which create_causal_mask returns as-is (the shim records that it did: "causal_mask_passthrough").
Training (model.forward) never reaches it.
Every tiny layout uses image_resolution (32, 32) (16 patches of 8x8 per camera), chunk_size 4,
n_action_steps 4, max_state_dim 8, max_action_dim 8, tokenizer_max_length 6, num_inference_steps 3,
state dim 5, action dim 4, batch 2, device cpu. Layouts:
  - "pi0": PI0Config float32, cameras top (3,32,32) and wrist (3,24,40: resize_with_pad), 1 empty camera;
  - "pi05": PI05Config float32, same cameras, no empty camera;
  - "pi05_bf16": PI05Config dtype bfloat16, freeze_vision_encoder, camera top only;
  - "pi0_expert_only": PI0Config float32, train_expert_only, camera top only;
  - "pi05_wide_state": PI05Config float32, camera top only, max_state_dim 3 (< the state's 5);
  - "pi05_rtc_trained": PI05Config float32, camera top only, rtc_training_max_delay 2.
Every floating state-dict entry (k = its index in the sorted list of ALL state-dict names) is filled
with t(k, shape, scale, offset) (formula below, ACT's): offset 1 for 1-D "...weight" entries (norms),
scale 0.5 for q_proj/k_proj weights (sharp attention), else 0.1; copied into the existing tensors
(bf16 parameters round from float32). Inputs: camera c: t(100 + c, (B,3,H,W), 0.5, 0.5); state
t(200, (B,5)); action t(201, (B,4,4)); noise t(300, (B,4,8)); time [0.3, 0.85]; tokens
[[2,17,301,45,9,0],[2,88,7,0,0,0]] with mask tokens != 0 (first column kept True). The batch is fed
to the policy directly (no processors).

Recorded per layout:
  - config (tiny settings and LeRobot's config fields), state-dict names/shapes/dtypes, parameters
    and requires_grad, tied (state-dict names sharing storage), num_parameters, and the keys/dtypes/
    shapes save_pretrained writes to model.safetensors;
  - stages with the fixed noise/time: camera 0's preprocessed image sum and its image embedding
    (embed_image, full), the language embedding sums, embed_prefix / embed_suffix outputs
    (sums and masks; π0.5's adarms_cond), and for pi05_bf16 each stage's dtype;
  - losses: model.forward's per-element losses (B,4,8); the policy-level forward loss and loss_dict
    with sample_noise / sample_time patched to the fixed noise/time, then every parameter's gradient
    sum and abs-sum after backward, and the parameters left without a gradient;
  - chunk: predict_action_chunk(batch, noise=noise) (3 steps) and with num_steps=1.
  - pi05_rtc_trained only ("rtc"): the policy-level forward runs after torch.manual_seed(RTC_SEED),
    and the prefix mask _sample_training_rtc_prefix_mask returned there is recorded (prefix_mask,
    delays), so the loss/loss_dict/grads above are for that mask; model.forward's per-element losses
    with that mask (losses); then rtc_config RTCConfig(mode="trained") with init_rtc_processor(), and
    predict_action_chunk(batch, noise=noise, inference_delay=2, prev_chunk_left_over=t(400, (B,3,4)))
    (chunk), and with inference_delay=0 (chunk_delay0: no hard prefix, the plain chunk).
Global records:
  - full_size: PI0Pytorch / PI05Pytorch built with the REAL sizes on the meta device (before any
    patching): parameter counts (parameters() and state_dict()), a breakdown by prefix, and the first
    and last 12 state-dict names;
  - fix_keys: what _fix_pytorch_state_dict_keys makes of a fixed set of checkpoint keys (pi0, pi05);
  - wide_state_pi0: PI0Policy with max_state_dim 3 (else layout pi0_expert_only) on the 5-dim state:
    the exception its forward raises (pad_vector leaves a wider state as it is for state_proj).

    PYTHONPATH=<accelerate>/src:<lerobot>/src:... python3 pi_reference.py OUT.json

The committed tests/policies/data/pi_reference.json got "pi05_rtc_trained" (and the new
causal_mask_passthrough count) from a later run merged into it: that run's other layouts equal the
committed ones except some vision-tower LayerNorm gradient sums of pi0/pi05/pi05_wide_state, off
by at most 1e-7 absolute (two runs of it agreed with each other exactly); those were left as they were.
"""
import dataclasses
import json
import math
import sys
import tempfile
import time as _time
from pathlib import Path

import numpy as np
import torch

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.pi0 import modeling_pi0
from lerobot.policies.pi0.configuration_pi0 import PI0Config
from lerobot.policies.pi05 import modeling_pi05
from lerobot.policies.pi05.configuration_pi05 import PI05Config

B = 2
STATE, ACTION = 5, 4
TINY = dict(image_resolution=(32, 32), chunk_size=4, n_action_steps=4, max_state_dim=8, max_action_dim=8,
            tokenizer_max_length=6, num_inference_steps=3, device="cpu")
GEMMA_TINY = {"gemma_2b": dict(width=64, depth=2, mlp_dim=128, num_heads=8, num_kv_heads=1, head_dim=16),
              "gemma_300m": dict(width=32, depth=2, mlp_dim=64, num_heads=8, num_kv_heads=1, head_dim=16)}
VOCAB = 512
VISION_TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, patch_size=8)
TWO_CAMS = {"observation.images.top": (3, 32, 32), "observation.images.wrist": (3, 24, 40)}
ONE_CAM = {"observation.images.top": (3, 32, 32)}
LAYOUTS = {
    "pi0": dict(kind="pi0", cameras=TWO_CAMS, cfg=dict(dtype="float32", empty_cameras=1)),
    "pi05": dict(kind="pi05", cameras=TWO_CAMS, cfg=dict(dtype="float32", empty_cameras=0)),
    "pi05_bf16": dict(kind="pi05", cameras=ONE_CAM, cfg=dict(dtype="bfloat16", freeze_vision_encoder=True)),
    "pi0_expert_only": dict(kind="pi0", cameras=ONE_CAM, cfg=dict(dtype="float32", train_expert_only=True)),
    # The state (5) wider than max_state_dim: π0.5 reads it only as prompt text and takes it.
    "pi05_wide_state": dict(kind="pi05", cameras=ONE_CAM, cfg=dict(dtype="float32", max_state_dim=3)),
    # Training-time RTC: a clean action prefix of 0..2 steps per sample (drawn with torch.randint).
    "pi05_rtc_trained": dict(kind="pi05", cameras=ONE_CAM, cfg=dict(dtype="float32", rtc_training_max_delay=2)),
}
RTC_SEED = 5  # torch.manual_seed before the policy-level forward of pi05_rtc_trained (its delays)
RTC_PREV = (B, 3, 4)  # prev_chunk_left_over t(400, RTC_PREV) for the trained-mode chunk, inference_delay 2
TOKENS = [[2, 17, 301, 45, 9, 0], [2, 88, 7, 0, 0, 0]]
TIME = [0.3, 0.85]
FIX_KEYS = ["paligemma_with_expert.paligemma.lm_head.weight",
            "paligemma_with_expert.gemma_expert.model.layers.0.input_layernorm.weight",
            "paligemma_with_expert.gemma_expert.model.norm.weight",
            "time_mlp_in.weight", "action_time_mlp_out.bias", "state_proj.weight",
            "paligemma_with_expert.paligemma.model.vision_tower.vision_model.embeddings.patch_embedding.weight"]
MODULES = (modeling_pi0, modeling_pi05)


def formula(n, k, scale):
    """scale sin(0.7 i + 0.3 k + 0.1 + 0.001 i^2), float64. The quadratic term keeps weight matrices
    from being rank 2 (with a phase linear in the flat index they are, and the chunk then moved by
    1e-6 when the state halved)."""
    i = np.arange(n, dtype=np.float64)
    return scale * np.sin(0.7 * i + 0.3 * k + 0.1 + 1e-3 * i * i)


def t(n_k, shape, scale=1.0, offset=0.0):
    n = int(np.prod(shape))
    return (offset + torch.from_numpy(formula(n, n_k, scale)).float()).view(*shape)


def fill(policy):
    sd = policy.state_dict()
    with torch.no_grad():
        for k, name in enumerate(sorted(sd)):
            x = sd[name]
            if not x.is_floating_point():
                continue
            offset = 1.0 if (name.endswith("weight") and x.dim() == 1) else 0.0
            scale = 0.5 if name.endswith(("q_proj.weight", "k_proj.weight")) else 0.1
            x.copy_(t(k, x.shape, scale, offset))


# ---------------------------------------------------------------- patches
REAL = {m: (m.get_gemma_config, m.PaliGemmaForConditionalGenerationWithPiGemma, m.CONFIG_MAPPING) for m in MODULES}


def patch():
    for m in MODULES:
        real_get, real_pali, real_map = REAL[m]
        gemma_config = m.GemmaConfig

        def get_gemma_config(variant, _cls=gemma_config):
            if variant not in GEMMA_TINY:
                raise ValueError(f"Unknown variant: {variant}")
            return _cls(**GEMMA_TINY[variant])

        class TinyPaliGemma(real_pali):
            def __init__(self, config):
                config.text_config.vocab_size = VOCAB
                for k, v in VISION_TINY.items():
                    setattr(config.vision_config, k, v)
                config.vision_config.projection_dim = config.text_config.hidden_size
                super().__init__(config)

        class TinyConfigMapping:
            def __init__(self, real):
                self.real = real

            def __getitem__(self, key):
                if key == "gemma":
                    return lambda **kw: self.real["gemma"](**{**kw, "vocab_size": VOCAB})
                return self.real[key]

        m.get_gemma_config = get_gemma_config
        m.PaliGemmaForConditionalGenerationWithPiGemma = TinyPaliGemma
        m.CONFIG_MAPPING = TinyConfigMapping(real_map)


MASK_CALLS = {"calls": 0, "passthrough": 0}


def patch_causal_mask():
    from lerobot.policies import pi_gemma
    real = pi_gemma.create_causal_mask

    def create_causal_mask(*args, cache_position=None, **kw):
        mask = real(*args, **kw)
        MASK_CALLS["calls"] += 1
        MASK_CALLS["passthrough"] += int(mask is kw.get("attention_mask"))
        return mask

    pi_gemma.create_causal_mask = create_causal_mask


def unpatch():
    for m in MODULES:
        m.get_gemma_config, m.PaliGemmaForConditionalGenerationWithPiGemma, m.CONFIG_MAPPING = REAL[m]


# ---------------------------------------------------------------- helpers
def r7(x):
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return str(x)
        return float(f"{x:.7g}")
    if isinstance(x, dict):
        return {k: r7(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [r7(v) for v in x]
    return x


def flat(x):
    return [float(v) for v in x.detach().float().reshape(-1).tolist()]


def dt(x):
    return str(x.dtype).replace("torch.", "")


def sums(x):
    x = x.detach().double()
    return {"sum": float(x.sum()), "abs_sum": float(x.abs().sum()), "shape": list(x.shape)}


def gradient_sums(policy):
    """Each parameter's gradient as {sum, abs_sum} (float64), and the sorted names without one."""
    grads, no_grad = {}, []
    for n, p in policy.named_parameters():
        if p.grad is None:
            no_grad.append(n)
        else:
            g = p.grad.detach().double()
            grads[n] = {"sum": float(g.sum()), "abs_sum": float(g.abs().sum())}
    return grads, sorted(no_grad)


def jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(e, (bool, int, float, str)) for e in v):
        return list(v)
    if hasattr(v, "value") and isinstance(getattr(v, "value"), str):  # enums
        return v.value
    return None


def tied_pairs(sd):
    seen, pairs = {}, []
    for name, x in sd.items():
        key = (x.untyped_storage().data_ptr(), x.storage_offset(), tuple(x.shape))
        if key in seen:
            pairs.append([seen[key], name])
        else:
            seen[key] = name
    return pairs


def make_policy(layout):
    spec = LAYOUTS[layout]
    cls_cfg, cls_pol = (PI0Config, modeling_pi0.PI0Policy) if spec["kind"] == "pi0" else (PI05Config, modeling_pi05.PI05Policy)
    cfg = cls_cfg(**{**TINY, **spec["cfg"]})
    cfg.input_features = {k: PolicyFeature(type=FeatureType.VISUAL, shape=s) for k, s in spec["cameras"].items()}
    cfg.input_features["observation.state"] = PolicyFeature(type=FeatureType.STATE, shape=(STATE,))
    cfg.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(ACTION,))}
    policy = cls_pol(cfg)
    fill(policy)
    return cfg, policy


def inputs(layout):
    batch = {}
    for c, (k, s) in enumerate(LAYOUTS[layout]["cameras"].items()):
        batch[k] = t(100 + c, (B, *s), 0.5, 0.5)
    batch["observation.state"] = t(200, (B, STATE), 1.0)
    batch["action"] = t(201, (B, 4, ACTION), 1.0)
    tokens = torch.tensor(TOKENS, dtype=torch.int64)
    mask = tokens != 0
    mask[:, 0] = True
    batch["observation.language.tokens"] = tokens
    batch["observation.language.attention_mask"] = mask
    return batch


def fresh(batch):
    return {k: v.clone() for k, v in batch.items()}


# ---------------------------------------------------------------- per layout
def record(layout):
    spec = LAYOUTS[layout]
    pi0 = spec["kind"] == "pi0"
    cfg, policy = make_policy(layout)
    model = policy.model
    pwe = model.paligemma_with_expert
    out = {"kind": spec["kind"],
           "config": {"tiny": {**{k: list(v) if isinstance(v, tuple) else v for k, v in TINY.items()}, **spec["cfg"],
                               "gemma": GEMMA_TINY, "vocab_size": VOCAB,
                               "vision": {**VISION_TINY, "projection_dim": GEMMA_TINY["gemma_2b"]["width"],
                                          "image_size": 32},
                               "cameras": {k: list(s) for k, s in spec["cameras"].items()},
                               "state_dim": STATE, "action_dim": ACTION, "batch": B},
                      "policy": {f.name: jsonable(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)
                                 if jsonable(getattr(cfg, f.name)) is not None or getattr(cfg, f.name) is None},
                      "image_features": list(cfg.image_features),
                      "hf_text_config": {k: jsonable(v) for k, v in pwe.paligemma.config.text_config.to_dict().items()
                                         if jsonable(v) is not None},
                      "hf_vision_config": {k: jsonable(v) for k, v in pwe.paligemma.config.vision_config.to_dict().items()
                                           if jsonable(v) is not None},
                      "hf_expert_config": {k: jsonable(v) for k, v in pwe.gemma_expert.config.to_dict().items()
                                           if jsonable(v) is not None}}}
    sd = policy.state_dict()
    out["state_dict"] = [[n, list(x.shape), dt(x)] for n, x in sd.items()]
    out["parameters"] = [[n, p.requires_grad] for n, p in policy.named_parameters()]
    out["tied"] = tied_pairs(sd)
    out["num_parameters"] = sum(p.numel() for p in policy.parameters())
    out["lm_head_tied_to_embed_tokens"] = (
        pwe.paligemma.lm_head.weight.data_ptr() == pwe.paligemma.model.language_model.embed_tokens.weight.data_ptr())
    out["embed_scale"] = float(pwe.paligemma.model.language_model.embed_tokens.embed_scale)

    with tempfile.TemporaryDirectory() as tmp:
        try:
            policy.save_pretrained(tmp)
            from safetensors import safe_open
            with safe_open(str(Path(tmp) / "model.safetensors"), framework="pt") as f:
                keys = []
                for k in f.keys():
                    sl = f.get_slice(k)
                    keys.append([k, sl.get_dtype(), list(sl.get_shape())])
                out["saved_keys"] = keys
                out["saved_metadata"] = f.metadata()
            out["saved_files"] = sorted(p.name for p in Path(tmp).iterdir())
        except Exception as e:  # noqa: BLE001
            out["saved_keys_error"] = f"{type(e).__name__}: {e}"

    batch = inputs(layout)
    noise = t(300, (B, 4, 8), 1.0)
    time = torch.tensor(TIME)
    tokens = batch["observation.language.tokens"]
    masks = batch["observation.language.attention_mask"]

    # Stages
    policy.train()
    st, dtypes = {}, {}
    with torch.no_grad():
        images, img_masks = policy._preprocess_images(fresh(batch))
        st["num_images"] = len(images)
        st["img_masks"] = [m.tolist() for m in img_masks]
        st["image0"] = sums(images[0])
        st["images"] = [sums(im) for im in images]
        dtypes["image0"] = dt(images[0])
        emb = pwe.embed_image(images[0])
        st["image0_embedding_shape"] = list(emb.shape)
        st["image0_embedding"] = flat(emb)
        dtypes["image0_embedding"] = dt(emb)
        lang = pwe.embed_language_tokens(tokens)
        st["language_embedding"] = sums(lang)
        dtypes["language_embedding"] = dt(lang)
        embs, pad, att = model.embed_prefix(images, img_masks, tokens, masks)
        st["prefix"] = {**sums(embs), "pad_masks": pad.int().tolist(), "att_masks": att.int().tolist()}
        dtypes["prefix_embs"] = dt(embs)
        actions = policy.prepare_action(fresh(batch))
        if pi0:
            state = policy.prepare_state(fresh(batch))
            st["state_padded"] = flat(state)
            x_t = time[:, None, None] * noise + (1 - time[:, None, None]) * actions
            s_embs, s_pad, s_att, cond = model.embed_suffix(state, x_t, time)
        else:
            x_t, model_time = modeling_pi05._build_flow_matching_inputs(actions, noise, time, None)
            s_embs, s_pad, s_att, cond = model.embed_suffix(x_t, model_time)
        st["x_t"] = sums(x_t)
        st["suffix"] = {**sums(s_embs), "pad_masks": s_pad.int().tolist(), "att_masks": s_att.float().tolist()}
        dtypes["suffix_embs"] = dt(s_embs)
        if cond is not None:
            st["adarms_cond"] = sums(cond)
            dtypes["adarms_cond"] = dt(cond)
        if pi0:
            losses = model.forward(images, img_masks, tokens, masks, state, actions, noise, time)
        else:
            losses = model.forward(images, img_masks, tokens, masks, actions, noise, time)
        dtypes["losses"] = dt(losses)
    out["stages"] = st
    if layout == "pi05_bf16":
        out["stage_dtypes"] = dtypes
        out["param_dtypes"] = sorted({dt(p) for p in policy.parameters()})
    out["losses_shape"] = list(losses.shape)
    out["losses"] = flat(losses)

    # Policy-level loss and gradients
    model.sample_noise = lambda shape, device: noise.clone()
    model.sample_time = lambda bsize, device: time.clone()
    policy.zero_grad(set_to_none=True)
    rtc = {}
    if getattr(cfg, "rtc_training_max_delay", 0) > 0:
        real_sampler = modeling_pi05._sample_training_rtc_prefix_mask

        def recording_sampler(*a, **kw):
            m = real_sampler(*a, **kw)
            rtc["prefix_mask"] = m.tolist()
            rtc["delays"] = m.sum(1).tolist()
            return m
        modeling_pi05._sample_training_rtc_prefix_mask = recording_sampler
        torch.manual_seed(RTC_SEED)
    loss, loss_dict = policy.forward(fresh(batch))
    if getattr(cfg, "rtc_training_max_delay", 0) > 0:
        modeling_pi05._sample_training_rtc_prefix_mask = real_sampler
    loss.backward()
    out["loss"] = {"loss": float(loss), "loss_dict": {k: v for k, v in loss_dict.items()}, "dtype": dt(loss)}
    out["grads"], out["no_grad"] = gradient_sums(policy)
    policy.zero_grad(set_to_none=True)
    del model.sample_noise, model.sample_time

    # Action chunks
    policy.eval()
    policy.reset()
    with torch.no_grad():
        chunk = policy.predict_action_chunk(fresh(batch), noise=noise.clone())
        out["chunk_shape"] = list(chunk.shape)
        out["chunk"] = flat(chunk)
        out["chunk_dtype"] = dt(chunk)
        chunk1 = policy.predict_action_chunk(fresh(batch), noise=noise.clone(), num_steps=1)
        out["chunk_steps1"] = flat(chunk1)

    if rtc:
        with torch.no_grad():
            images, img_masks = policy._preprocess_images(fresh(batch))
            actions = policy.prepare_action(fresh(batch))
            mask = torch.tensor(rtc["prefix_mask"], dtype=torch.bool)
            rtc["losses"] = flat(model.forward(images, img_masks, tokens, masks, actions, noise, time, prefix_mask=mask))
            from lerobot.policies.rtc.configuration_rtc import RTCConfig
            policy.config.rtc_config = RTCConfig(enabled=True, mode="trained")
            policy.init_rtc_processor()
            prev = t(400, RTC_PREV, 1.0)
            rtc["prev_chunk_left_over"] = flat(prev)
            policy.reset()
            rtc["chunk"] = flat(policy.predict_action_chunk(fresh(batch), noise=noise.clone(), inference_delay=2,
                                                            prev_chunk_left_over=prev.clone()))
            rtc["chunk_delay0"] = flat(policy.predict_action_chunk(fresh(batch), noise=noise.clone(), inference_delay=0,
                                                                   prev_chunk_left_over=prev.clone()))
            policy.config.rtc_config = None
            policy.init_rtc_processor()
        out["rtc"] = rtc

    fix = None
    if layout in ("pi0", "pi05"):
        sd_in = {k: torch.zeros(1) for k in FIX_KEYS}
        fix = sorted(policy._fix_pytorch_state_dict_keys(sd_in, policy.config))
    return out, fix


# ---------------------------------------------------------------- full size
PREFIXES = ["paligemma.model.vision_tower", "paligemma.model.multi_modal_projector",
            "paligemma.model.language_model.embed_tokens", "paligemma.model.language_model.layers",
            "paligemma.lm_head", "gemma_expert.model.layers", "gemma_expert.lm_head"]


def bucket(name):
    short = name.removeprefix("paligemma_with_expert.")
    for p in PREFIXES:
        if short.startswith(p + ".") or short == p:
            return p
    return "other"


def full_size():
    out = {}
    for kind, cfg_cls, model_cls in (("pi0", PI0Config, modeling_pi0.PI0Pytorch),
                                     ("pi05", PI05Config, modeling_pi05.PI05Pytorch)):
        try:
            cfg = cfg_cls(device="cpu")
            with torch.device("meta"):
                model = model_cls(cfg)
            params = dict(model.named_parameters())
            sd = model.state_dict()
            by_p, by_sd = {}, {}
            for n, p in params.items():
                by_p[bucket(n)] = by_p.get(bucket(n), 0) + p.numel()
            for n, x in sd.items():
                by_sd[bucket(n)] = by_sd.get(bucket(n), 0) + x.numel()
            names = list(sd)
            out[kind] = {"method": "meta device",
                         "config": {"paligemma_variant": cfg.paligemma_variant,
                                    "action_expert_variant": cfg.action_expert_variant,
                                    "image_resolution": list(cfg.image_resolution),
                                    "max_state_dim": cfg.max_state_dim, "max_action_dim": cfg.max_action_dim},
                         "num_parameters": sum(p.numel() for p in model.parameters()),
                         "num_state_dict": sum(x.numel() for x in sd.values()),
                         "state_dict_entries": len(sd), "parameter_entries": len(params),
                         "by_prefix_parameters": by_p, "by_prefix_state_dict": by_sd,
                         "vision_config": {k: getattr(model.paligemma_with_expert.paligemma.config.vision_config, k)
                                           for k in ("hidden_size", "intermediate_size", "num_hidden_layers",
                                                     "num_attention_heads", "patch_size", "image_size",
                                                     "projection_dim")},
                         "vocab_size": model.paligemma_with_expert.paligemma.config.text_config.vocab_size,
                         "expert_vocab_size": model.paligemma_with_expert.gemma_expert.config.vocab_size,
                         "first_names": names[:12], "last_names": names[-12:]}
            del model
        except Exception as e:  # noqa: BLE001
            out[kind] = {"method": "failed", "error": f"{type(e).__name__}: {e}"}
    return out


def wide_state_pi0():
    """π0 with a state wider than max_state_dim: what LeRobot's forward raises (or its loss)."""
    LAYOUTS["_pi0_wide"] = dict(kind="pi0", cameras=ONE_CAM, cfg=dict(dtype="float32", max_state_dim=3))
    try:
        cfg, policy = make_policy("_pi0_wide")
        batch = inputs("_pi0_wide")
        try:
            loss, _ = policy.forward(fresh(batch))
            return {"max_state_dim": 3, "state_dim": STATE, "raised": False, "loss": float(loss)}
        except Exception as e:  # noqa: BLE001
            return {"max_state_dim": 3, "state_dim": STATE, "raised": True, "error": f"{type(e).__name__}: {e}"}
    finally:
        del LAYOUTS["_pi0_wide"]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "pi_reference.json"
    torch.set_num_threads(max(1, torch.get_num_threads()))
    start = _time.time()
    import lerobot
    pyproject = Path(lerobot.__file__).resolve().parents[2] / "pyproject.toml"
    version = next((line.split('"')[1] for line in pyproject.read_text().splitlines()
                    if line.startswith("version")), None) if pyproject.exists() else None
    result = {"lerobot_version": version, "torch": torch.__version__}
    import transformers
    result["transformers"] = transformers.__version__
    unpatch()
    patch_causal_mask()
    result["full_size"] = full_size()
    print("full size done", _time.time() - start, flush=True)
    patch()
    result["layouts"], result["fix_keys"] = {}, {}
    for layout in LAYOUTS:
        out, fix = record(layout)
        result["layouts"][layout] = out
        if fix is not None:
            result["fix_keys"][layout] = {"input": FIX_KEYS, "output": fix}
        print(layout, "done", _time.time() - start, "loss", out["loss"]["loss"], flush=True)
    result["wide_state_pi0"] = wide_state_pi0()
    unpatch()
    result["causal_mask_passthrough"] = MASK_CALLS
    result["seconds"] = round(_time.time() - start, 1)
    with open(path, "w") as f:
        json.dump(r7(result), f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
