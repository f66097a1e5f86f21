#!/usr/bin/env python3
"""Records what LeRobot 0.6.2's π0.5 does with MEM observation memory (use_visual_memory,
use_proprioceptive_memory), for tests/policies/test_pi_mem_reference.cpp.

Imports pi_reference.py as a module and uses its patches (tiny Gemmas, tiny SigLIP), its weight fill,
its tokens, noise and flow time. One change to its tiny sizes: the SigLIP tower is 3 layers deep
(pr.VISION_TINY["num_hidden_layers"] = 3), so that with memory_temporal_attention_every 2 layer 0 is a
plain layer run on every frame, layer 1 the (last) space-time layer after which past frames are
dropped, and layer 2 a plain layer on the current frame only. MEM settings: memory_frames 3,
memory_stride 2, memory_temporal_attention_every 2.

Layouts (float32, pi_reference's TINY sizes, state 5, action 4, B = 2):
  - "mem": both memories, cameras top (3,32,32) and wrist (3,24,40: resize_with_pad per frame);
  - "mem_visual": visual memory only, camera top;
  - "mem_proprio": proprioceptive memory only, camera top (single frames).
Inputs: camera c t(100 + c, (B, 3, C, H, W), 0.5, 0.5) with `<camera>_is_pad` IMG_PAD[c]; state
t(200, (B, 3, 5)) with observation.state_is_pad STATE_PAD (visual-only: the (B, 5) state of
pi_reference); action t(201, (B, 4, 4)); pi_reference's tokens, noise t(300, (B,4,8)), time [0.3, 0.85].

Shim (beside pi_reference's): transformers 5.12's SiglipVisionModel has no `vision_model` level, which
LeRobot's embed_image reads for MEM; the script gives the tower itself under that name (vision_level_shim).

Recorded per layout: the state dict (names, shapes) and the keys save_pretrained writes; stages (each
preprocessed camera's sum and its frame mask, camera 0's embed_image (MEM's encode_video_with_mem and
the projector, in full), embed_prefix's sums and pad mask); model.forward's per-element losses; the
policy loss with sample_noise / sample_time patched, every parameter's gradient sum and abs-sum, the
parameters without one; predict_action_chunk(batch, noise=noise) (a temporal batch: no memory queue).
"mem" also records the inference memory: after reset(), _stack_inference_memory of 7 observations
(camera pixels and state all equal to the step number) and, after another reset(), one more: the
sampled values (step numbers) and the _is_pad masks; then with n_action_steps 1 (reset again) and
sample_noise patched to the noise, select_action on 4 observations (camera c t(500 + 10 s + c), state
t(600 + s)), the actions it returns. Globally: temporal_sinusoidal_embedding(3, 32) and
causal_temporal_mask for a (2, 3) frame mask (which entries are allowed).

    PYTHONPATH=<lerobot>/src:... python3 pi_mem_reference.py OUT.json   (docs/PYTHON_RUNS.md)
"""
import json
import os
import sys
import tempfile
import time as _time
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pi_reference as pr  # noqa: E402

from lerobot.policies.pi05 import memory as mem  # noqa: E402

pr.VISION_TINY["num_hidden_layers"] = 3
B, T = pr.B, 3
MEM = dict(memory_frames=3, memory_stride=2, memory_temporal_attention_every=2)
LAYOUTS = {
    "mem": dict(kind="pi05", cameras=pr.TWO_CAMS,
                cfg=dict(dtype="float32", use_visual_memory=True, use_proprioceptive_memory=True, **MEM)),
    "mem_visual": dict(kind="pi05", cameras=pr.ONE_CAM, cfg=dict(dtype="float32", use_visual_memory=True, **MEM)),
    "mem_proprio": dict(kind="pi05", cameras=pr.ONE_CAM,
                        cfg=dict(dtype="float32", use_proprioceptive_memory=True, **MEM)),
}
IMG_PAD = [[[True, False, False], [False, False, False]], [[False, False, False], [True, True, False]]]
STATE_PAD = [[True, True, False], [False, False, False]]
MEMORY_STEPS = 7
SELECT_STEPS = 4


def mem_inputs(layout):
    spec = pr.LAYOUTS[layout]
    batch = pr.inputs(layout)
    if spec["cfg"].get("use_visual_memory"):
        for c, (k, s) in enumerate(spec["cameras"].items()):
            batch[k] = pr.t(100 + c, (B, T, *s), 0.5, 0.5)
            batch[k + "_is_pad"] = torch.tensor(IMG_PAD[c])
    if spec["cfg"].get("use_proprioceptive_memory"):
        batch["observation.state"] = pr.t(200, (B, T, pr.STATE), 1.0)
        batch["observation.state_is_pad"] = torch.tensor(STATE_PAD)
    return batch


def observation(layout, step, value=None):
    """One robot observation (no history): cameras and state at `value`, or formula-filled."""
    spec = pr.LAYOUTS[layout]
    obs = {}
    for c, (k, s) in enumerate(spec["cameras"].items()):
        obs[k] = torch.full((B, *s), float(value)) if value is not None else pr.t(500 + 10 * step + c, (B, *s), 0.5, 0.5)
    obs["observation.state"] = torch.full((B, pr.STATE), float(value)) if value is not None else pr.t(600 + step, (B, pr.STATE))
    tokens = torch.tensor(pr.TOKENS, dtype=torch.int64)
    mask = tokens != 0
    mask[:, 0] = True
    obs["observation.language.tokens"] = tokens
    obs["observation.language.attention_mask"] = mask
    return obs


def vision_level_shim(pwe):
    """transformers 5.12's SiglipVisionModel has no `vision_model` level (its embeddings, encoder and
    post_layernorm sit on it directly); LeRobot 0.6.2 (transformers <5.6) reads
    vision_tower.vision_model in embed_image's MEM path. The tower is given itself under that name,
    in its __dict__ (not registered: the state dict is unchanged)."""
    tower = pwe.paligemma.model.vision_tower
    if not hasattr(tower, "vision_model"):
        tower.__dict__["vision_model"] = tower
        SHIM["vision_model_alias"] += 1


SHIM = {"vision_model_alias": 0}


def record(layout):
    cfg, policy = pr.make_policy(layout)
    model = policy.model
    pwe = model.paligemma_with_expert
    vision_level_shim(pwe)
    spec = pr.LAYOUTS[layout]
    out = {"config": {"tiny": {**{k: list(v) if isinstance(v, tuple) else v for k, v in pr.TINY.items()}, **spec["cfg"],
                               "gemma": pr.GEMMA_TINY, "vocab_size": pr.VOCAB,
                               "vision": {**pr.VISION_TINY, "projection_dim": pr.GEMMA_TINY["gemma_2b"]["width"],
                                          "image_size": 32},
                               "cameras": {k: list(s) for k, s in spec["cameras"].items()},
                               "state_dim": pr.STATE, "action_dim": pr.ACTION, "batch": B},
                      "include_state_in_prompt": not cfg.use_proprioceptive_memory,
                      "image_observation_delta_indices": cfg.image_observation_delta_indices,
                      "state_observation_delta_indices": cfg.state_observation_delta_indices}}
    sd = policy.state_dict()
    out["state_dict"] = [[n, list(x.shape), pr.dt(x)] for n, x in sd.items()]
    out["parameters"] = [[n, p.requires_grad] for n, p in policy.named_parameters()]
    out["peft_defaults"] = policy._get_default_peft_targets()
    with tempfile.TemporaryDirectory() as tmp:
        policy.save_pretrained(tmp)
        from safetensors import safe_open
        with safe_open(str(Path(tmp) / "model.safetensors"), framework="pt") as f:
            out["saved_keys"] = [[k, f.get_slice(k).get_dtype(), list(f.get_slice(k).get_shape())] for k in f.keys()]

    batch = mem_inputs(layout)
    noise = pr.t(300, (B, 4, 8), 1.0)
    time = torch.tensor(pr.TIME)
    tokens = batch["observation.language.tokens"]
    masks = batch["observation.language.attention_mask"]

    policy.train()
    st = {}
    with torch.no_grad():
        images, img_masks = policy._preprocess_images(pr.fresh(batch))
        states, state_masks = policy._prepare_memory_states(pr.fresh(batch))
        st["images"] = [pr.sums(im) for im in images]
        st["img_masks"] = [m.tolist() for m in img_masks]
        if states is not None:
            st["states"] = pr.sums(states)
            st["state_masks"] = state_masks.tolist()
        if images[0].ndim == 5:
            emb = pwe.embed_image(images[0], frame_mask=img_masks[0],
                                  temporal_attention_every=cfg.memory_temporal_attention_every)
        else:
            emb = pwe.embed_image(images[0])
        st["image0_embedding_shape"] = list(emb.shape)
        st["image0_embedding"] = pr.flat(emb)
        embs, pad, att = model.embed_prefix(images, img_masks, tokens, masks, states, state_masks)
        st["prefix"] = {**pr.sums(embs), "pad_masks": pad.int().tolist(), "att_masks": att.int().tolist()}
        actions = policy.prepare_action(pr.fresh(batch))
        losses = model.forward(images, img_masks, tokens, masks, actions, noise, time,
                               states=states, state_masks=state_masks)
    out["stages"] = st
    out["losses"] = pr.flat(losses)

    model.sample_noise = lambda shape, device: noise.clone()
    model.sample_time = lambda bsize, device: time.clone()
    policy.zero_grad(set_to_none=True)
    loss, loss_dict = policy.forward(pr.fresh(batch))
    loss.backward()
    out["loss"] = float(loss)
    out["grads"], out["no_grad"] = pr.gradient_sums(policy)
    policy.zero_grad(set_to_none=True)

    policy.eval()
    policy.reset()
    with torch.no_grad():
        out["chunk"] = pr.flat(policy.predict_action_chunk(pr.fresh(batch), noise=noise.clone()))

    if layout == "mem":
        memory = {"history_length": (cfg.memory_frames - 1) * cfg.memory_stride + 1, "steps": []}
        cam = next(iter(spec["cameras"]))
        policy.reset()
        for step in list(range(MEMORY_STEPS)) + ["reset"]:
            if step == "reset":
                policy.reset()
                step = 100
            res = policy._stack_inference_memory(observation(layout, 0, value=step))
            memory["steps"].append({"step": step,
                                    "state": res["observation.state"][0, :, 0].tolist(),
                                    "state_is_pad": res["observation.state_is_pad"][0].tolist(),
                                    "camera": res[cam][0, :, 0, 0, 0].tolist(),
                                    "camera_is_pad": res[cam + "_is_pad"][0].tolist(),
                                    "camera_shape": list(res[cam].shape)})
        out["memory"] = memory
        policy.config.n_action_steps = 1
        policy.reset()
        selected = []
        with torch.no_grad():
            for step in range(SELECT_STEPS):
                selected.append(pr.flat(policy.select_action(observation(layout, step))))
        out["select_action"] = selected
        policy.config.n_action_steps = pr.TINY["n_action_steps"]
    del model.sample_noise, model.sample_time
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "pi_mem_reference.json"
    torch.set_num_threads(max(1, torch.get_num_threads()))
    start = _time.time()
    import transformers
    result = {"torch": torch.__version__, "transformers": transformers.__version__,
              "img_pad": IMG_PAD, "state_pad": STATE_PAD, "layouts": {}}
    emb = mem.temporal_sinusoidal_embedding(3, 32, device="cpu", dtype=torch.float32)
    result["temporal_embedding"] = pr.flat(emb)
    frame_mask = torch.tensor([[False, True, True], [True, False, True]])
    allowed = mem.causal_temporal_mask(frame_mask, dtype=torch.float32, num_patches=1) == 0
    result["causal_mask"] = {"frame_mask": frame_mask.tolist(), "allowed": allowed[:, 0].tolist()}
    pr.patch()
    pr.patch_causal_mask()
    for layout, spec in LAYOUTS.items():
        pr.LAYOUTS[layout] = spec
        out = record(layout)
        result["layouts"][layout] = out
        print(layout, "done", round(_time.time() - start, 1), "loss", out["loss"], flush=True)
    pr.unpatch()
    result["shims"] = SHIM
    result["seconds"] = round(_time.time() - start, 1)
    with open(path, "w") as f:
        json.dump(pr.r7(result), f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
