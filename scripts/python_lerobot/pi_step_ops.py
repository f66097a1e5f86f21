#!/usr/bin/env python3
"""Counts the ATen operators and host syncs of one LeRobot 0.6.2 π0.5 (PI05Policy) or π0 (PI0Policy)
training step on the CPU, at full widths with fewer layers, for comparison with the C++ port's
bench/step_ops (docs/BENCHMARKS.md, "π0.5 and π0 (session 23)").

The step is lerobot_train.update_policy's with one process and no AMP: policy(batch) ->
loss.backward() -> torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0) (what accelerate's
clip_grad_norm_ calls) -> torch.optim.AdamW.step() (LeRobot's preset: lr 2.5e-5, betas (0.9, 0.95),
eps 1e-8, weight decay 0.01, over policy.parameters()) -> zero_grad() -> scheduler (a LambdaLR: no
operators) -> loss.item() and grad_norm.item() (the loop's metrics). clip and AdamW are run with
foreach=True: PyTorch's default on CUDA (on a CPU it would pick the per-tensor loops), i.e. what a
GPU step pays. The batch is what the preprocessor hands the policy (tokens already made), so the
processors are not counted, as in bench_step_ops.

Sizes: LeRobot only knows the full Gemma variants, so (as pi_reference.py does) get_gemma_config is
monkeypatched in both modeling modules to the full widths with --depth layers (gemma_2b: 2048 wide,
MLP 16384, 8 heads, 1 KV head, head 256; gemma_300m: 1024, 4096, 8, 1, 256), and the PaliGemma class
to a subclass that sets the SigLIP tower to --vision_layers layers (1152 wide, MLP 4304, 16 heads,
patch 14; 224x224 images: 256 tokens) and the vocabulary to --vocab (257,152 by default, LeRobot's).

Counting: torch.profiler (CPU) over the step, i.e. ATen's RecordFunction like the C++ OpCounter:
  ops   = events of scope FUNCTION (dispatcher operators) with no FUNCTION-scope ancestor (top-level:
          the ones a step launches; autograd nodes are BACKWARD_FUNCTION scope, so the operators
          inside them count, as in the C++ counter);
  syncs = aten::_local_scalar_dense (item()), aten::nonzero, aten::equal at any depth (the C++
          counter's list; device-to-host copies need a CUDA tensor, none here), plus, reported
          apart, the Python-level host reads that on a GPU copy a device tensor to the host
          without an ATen sync on the CPU (Tensor.cpu() / .numpy() / .tolist() calls).
The first step (optimizer state initialisation) is not counted; the second is.

    chroot ... python3 pi_step_ops.py --kind=pi05 --depth=1 --vision_layers=1 [--batch=2] [--top=30]
"""
import argparse
import collections
import json
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.policies.pi0 import modeling_pi0
from lerobot.policies.pi0.configuration_pi0 import PI0Config
from lerobot.policies.pi05 import modeling_pi05
from lerobot.policies.pi05.configuration_pi05 import PI05Config

ap = argparse.ArgumentParser()
ap.add_argument("--kind", default="pi05", choices=["pi05", "pi0"])
ap.add_argument("--depth", type=int, default=1)
ap.add_argument("--vision_layers", type=int, default=1)
ap.add_argument("--batch", type=int, default=2)
ap.add_argument("--vocab", type=int, default=257152)
ap.add_argument("--dtype", default="float32")
ap.add_argument("--top", type=int, default=0)
ap.add_argument("--json", default="")
args = ap.parse_args()

GEMMA = {"gemma_2b": dict(width=2048, depth=args.depth, mlp_dim=16384, num_heads=8, num_kv_heads=1, head_dim=256),
         "gemma_300m": dict(width=1024, depth=args.depth, mlp_dim=4096, num_heads=8, num_kv_heads=1, head_dim=256)}
VISION = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=args.vision_layers, num_attention_heads=16,
              patch_size=14)
STATE, ACTION, CAMERA = 2, 2, "observation.image"  # reach2d, as the C++ bench's dataset


def patch():
    for m in (modeling_pi0, modeling_pi05):
        real_pali, real_map, gemma_config = m.PaliGemmaForConditionalGenerationWithPiGemma, m.CONFIG_MAPPING, m.GemmaConfig

        def get_gemma_config(variant, _cls=gemma_config):
            return _cls(**GEMMA[variant])

        class SizedPaliGemma(real_pali):
            def __init__(self, config):
                config.text_config.vocab_size = args.vocab
                for k, v in VISION.items():
                    setattr(config.vision_config, k, v)
                config.vision_config.projection_dim = config.text_config.hidden_size
                super().__init__(config)

        class SizedConfigMapping:
            def __init__(self, real):
                self.real = real

            def __getitem__(self, key):
                if key == "gemma":
                    return lambda **kw: self.real["gemma"](**{**kw, "vocab_size": args.vocab})
                return self.real[key]

        m.get_gemma_config = get_gemma_config
        m.PaliGemmaForConditionalGenerationWithPiGemma = SizedPaliGemma
        m.CONFIG_MAPPING = SizedConfigMapping(real_map)


HOST_READS = collections.Counter()


def count_host_reads():
    for name in ("cpu", "numpy", "tolist"):
        real = getattr(torch.Tensor, name)

        def wrapper(self, *a, _real=real, _name=name, **kw):
            HOST_READS[_name] += 1
            return _real(self, *a, **kw)

        setattr(torch.Tensor, name, wrapper)


T0 = time.time()


def progress(what):
    print(f"[{time.time() - T0:7.1f} s] {what}", file=sys.stderr, flush=True)


patch()
torch.manual_seed(0)
cls_cfg, cls_pol = (PI0Config, modeling_pi0.PI0Policy) if args.kind == "pi0" else (PI05Config, modeling_pi05.PI05Policy)
cfg = cls_cfg(device="cpu", dtype=args.dtype)
cfg.input_features = {CAMERA: PolicyFeature(type=FeatureType.VISUAL, shape=(3, 224, 224)),
                      "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(STATE,))}
cfg.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(ACTION,))}
policy = cls_pol(cfg)
policy.train()
n_tensors = sum(1 for p in policy.parameters() if p.requires_grad)
n_params = sum(p.numel() for p in policy.parameters())

B, L = args.batch, cfg.tokenizer_max_length


def make_batch():
    tokens = torch.randint(1, min(247978, args.vocab), (B, L))
    mask = torch.zeros(B, L, dtype=torch.bool)
    mask[:, :40] = True  # a prompt of 40 tokens, the rest padding (the count does not depend on it)
    return {CAMERA: torch.rand(B, 3, 224, 224), "observation.state": torch.randn(B, STATE),
            "action": torch.randn(B, cfg.chunk_size, ACTION), "action_is_pad": torch.zeros(B, cfg.chunk_size, dtype=torch.bool),
            "observation.language.tokens": tokens, "observation.language.attention_mask": mask}


optimizer = torch.optim.AdamW(policy.parameters(), lr=cfg.optimizer_lr, betas=cfg.optimizer_betas, eps=cfg.optimizer_eps,
                              weight_decay=cfg.optimizer_weight_decay, foreach=True)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)


def step(batch):
    loss, output_dict = policy(batch)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.optimizer_grad_clip_norm,
                                               error_if_nonfinite=False, foreach=True)
    optimizer.step()
    optimizer.zero_grad()
    scheduler.step()
    loss.item()
    grad_norm.item()


SYNC_OPS = {"aten::_local_scalar_dense", "aten::nonzero", "aten::equal"}

progress("built")
step(make_batch())  # initialises the optimizer state: not counted
batch = make_batch()
progress("first step")
count_host_reads()
with profile(activities=[ProfilerActivity.CPU]) as prof:
    step(batch)


def top_function(e):
    """The outermost FUNCTION-scope ancestor of e (e itself when it has none)."""
    top, p = (e if e.scope == 0 else None), e.cpu_parent
    while p is not None:
        if p.scope == 0:
            top = p
        p = p.cpu_parent
    return top


progress("counted step")
ops, by_name, syncs, sites = 0, collections.Counter(), 0, collections.Counter()
for e in prof.events():
    if e.scope != 0:
        continue
    t = top_function(e)
    if t is e:
        ops += 1
        by_name[e.name] += 1
    if e.name in SYNC_OPS:
        syncs += 1
        sites[t.name] += 1

result = {"kind": args.kind, "torch": torch.__version__, "depth": args.depth, "vision_layers": args.vision_layers,
          "batch": B, "tokens": L, "chunk": cfg.chunk_size, "dtype": args.dtype, "vocab": args.vocab,
          "parameters": n_params, "trainable_tensors": n_tensors, "ops": ops, "syncs": syncs,
          "sync_sites": dict(sites), "python_host_reads": dict(HOST_READS), "top": by_name.most_common(args.top)}
print(f"LeRobot {args.kind}: vision layers {args.vision_layers}, gemma depth {args.depth}, batch {B}, "
      f"{n_params:,} parameters in {n_tensors} trainable tensors, torch {torch.__version__}")
print(f"ops/step {ops}  syncs/step {syncs}  sites: {', '.join(f'{k} x{v}' for k, v in sites.items()) or 'none'}")
print(f"Python host reads (device-to-host copies on a GPU): {dict(HOST_READS)}")
if args.top:
    print("most dispatched operators of the step:")
    for name, n in by_name.most_common(args.top):
        print(f"  {n:6d}  {name}")
if args.json:
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
sys.stdout.flush()
