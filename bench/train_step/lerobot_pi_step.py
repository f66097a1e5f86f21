#!/usr/bin/env python3
"""bench_train_step's π0.5 / π0 training step run by Python LeRobot's own modelling code (imported,
not rewritten; issue #39's benchmark): LeRobot 0.6.2's PI05Policy / PI0Policy built from its config
at full size (PaliGemma gemma_2b + SigLIP So400m/14, action expert gemma_300m, vocabulary 257,152),
with the config's dtype (default here bfloat16) and gradient_checkpointing (default here true), the
freeze/train flags at LeRobot's defaults (freeze_vision_encoder false, train_expert_only false: the
whole model trains), the optimizer and scheduler from the policy's presets as
make_optimizer_and_scheduler builds them (AdamW lr 2.5e-5 betas (0.9, 0.95) over get_optim_params(),
cosine_decay_with_warmup over 100,000 steps, clip 1.0), and each step as lerobot_train.update_policy
runs it on one process: lerobot_step.py's step (autocast only for --mixed_precision=bf16, LeRobot's
default for π being none: the weights' dtype decides).

The batch is made on the device as LeRobot's preprocessor hands it to the policy, in the layout
bench_train_step's reach2d batch has (so ours and LeRobot's step the same shapes):
  - one camera `observation.image` of --image_size (default 224, π's image_resolution: no resize)
    in [0, 1], plus --empty_cameras (default 2) slots LeRobot fills with -1 images and false masks
    (PI05Config.empty_cameras; SigLIP embeds them all: 3 x 256 image tokens, as the published bases'
    three cameras);
  - observation.state (2, padded to max_state_dim 32 by the model; π0.5 reads it only through the
    prompt), action chunk 50 x 2 (padded to 32), action_is_pad false;
  - observation.language.tokens / attention_mask of tokenizer_max_length (π0.5 200, π0 48): token
    ids fed directly (no tokenizer), the first --prompt_tokens valid, the rest padding.
--depth / --vision_layers / --vocab shrink the model (full widths, fewer Gemma / SigLIP layers, a
smaller vocabulary: the same monkeypatches as scripts/python_lerobot/pi_step_ops.py) for a CPU
smoke run; without them the model is LeRobot's full size.

LeRobot's source, transformers and what they import must be importable
(scripts/gpu_offline/stage_lerobot_python.sh stages them into .dev/python):
  PYTHONPATH=.dev/python python3 bench/train_step/lerobot_pi_step.py --policy=pi05 --batch_size=8 --device=cuda
  (gpu_check.sh's bench phase: batch 8 and 32, bf16 weights, gradient checkpointing)
CPU smoke run (reference chroot, docs/PYTHON_RUNS.md):
  python3 bench/train_step/lerobot_pi_step.py --policy=pi05 --device=cpu --depth=1 --vision_layers=1 \
    --vocab=1024 --batch_size=1 --steps=2 --warmup=1
Print-out as lerobot_step.py's (ms/step median/mean/min, samples/s, parameters, loss).
"""
import argparse
import importlib.metadata
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lerobot_step  # noqa: E402  (its stand-in mechanism)
from peer_common import add_common_args, prepare_device, time_and_report  # noqa: E402

# Compiled packages transformers (which π's modelling code imports: Gemma, PaliGemma, SigLIP)
# needs at import time and that π's training step never calls, for a machine without them (they
# cannot be staged as pure Python):
#   - safetensors: already lerobot_step.py's import-only stand-in; transformers' modeling_utils
#     imports it and its dependency_versions_check asks importlib.metadata for its version;
#   - regex: transformers compiles patterns with it at import (utils/auto_docstring.py) and
#     version-checks it; only its tokenizers' Python code uses it otherwise. Where it is absent the
#     standard library's `re` takes its name (the import-time patterns are plain `re` syntax).
#   - tokenizers: transformers 5 imports it at import (integrations/ggml.py, through
#     configuration_utils) and uses its classes in annotations (AddedToken | str); π's step feeds
#     token ids and never tokenizes: an import-only stand-in whose names are classes that raise
#     when instantiated.
# Each stand-in also answers importlib.metadata with the lowest version transformers' table
# (dependency_versions_table.py) accepts.
TOKENIZERS = ["tokenizers"] + [f"tokenizers.{m}" for m in (
    "decoders", "normalizers", "pre_tokenizers", "processors", "models", "trainers", "implementations")]


def install_class_standins(names):
    """Import-only modules whose every public name is a class that raises when instantiated."""
    import importlib.machinery
    import types

    for name in names:
        m = types.ModuleType(name)
        m.__path__ = []
        m.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        made = {}

        def absent(attr, _name=name, _made=made):
            if attr.startswith("__"):
                raise AttributeError(attr)
            if attr not in _made:
                def new(cls, *args, **kwargs):
                    raise RuntimeError(f"{_name}.{attr}: {_name} is not installed (lerobot_pi_step.py stand-in)")
                _made[attr] = type(attr, (), {"__new__": new, "__module__": _name})
            return _made[attr]
        m.__getattr__ = absent
        sys.modules[name] = m


def standin_version(name):
    """The lowest version transformers' dependency table accepts for `name` (read, not imported)."""
    import importlib.util
    import re
    spec = importlib.util.find_spec("transformers")
    for d in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(d, "dependency_versions_table.py")
        if os.path.exists(path):
            m = re.search(r'"%s": "%s([^"]*)"' % (re.escape(name), re.escape(name)), open(path).read())
            low = re.search(r"(?:>=|==)([0-9][0-9.]*[0-9])", m.group(1)) if m else None
            return low.group(1) if low else "999"
    return "999"


def install_standin_metadata(names):
    """importlib.metadata distributions for the stand-ins (transformers' import-time version check)."""
    versions = {n: standin_version(n) for n in names}
    class StandinDistribution(importlib.metadata.Distribution):
        def __init__(self, name):
            self._name = name

        def read_text(self, filename):
            if filename in ("METADATA", "PKG-INFO"):
                return f"Metadata-Version: 2.1\nName: {self._name}\nVersion: {versions[self._name]}\n"
            return None

        def locate_file(self, path):
            return path

    class StandinFinder:
        @staticmethod
        def find_spec(*args, **kwargs):
            return None

        @staticmethod
        def find_distributions(context=importlib.metadata.DistributionFinder.Context()):
            want = context.name
            for n in names:
                if want is None or want.replace("-", "_").lower() == n:
                    yield StandinDistribution(n)

    sys.meta_path.append(StandinFinder)


def patch_sizes(a, modeling):
    """--depth / --vision_layers / --vocab: full widths, fewer layers (pi_step_ops.py's patches)."""
    if a.depth:
        real_get = modeling.get_gemma_config

        def get_gemma_config(variant):
            c = real_get(variant)
            c.depth = a.depth
            return c
        modeling.get_gemma_config = get_gemma_config
    if a.vision_layers or a.vocab:
        real_pali, real_map = modeling.PaliGemmaForConditionalGenerationWithPiGemma, modeling.CONFIG_MAPPING

        class SizedPaliGemma(real_pali):
            def __init__(self, config):
                if a.vocab:
                    config.text_config.vocab_size = a.vocab
                if a.vision_layers:
                    config.vision_config.num_hidden_layers = a.vision_layers
                super().__init__(config)

        class SizedConfigMapping:
            def __getitem__(self, key):
                if key == "gemma" and a.vocab:
                    return lambda **kw: real_map["gemma"](**{**kw, "vocab_size": a.vocab})
                return real_map[key]
        modeling.PaliGemmaForConditionalGenerationWithPiGemma = SizedPaliGemma
        modeling.CONFIG_MAPPING = SizedConfigMapping()


def build(a, dev):
    from lerobot.configs.types import FeatureType, PolicyFeature

    if a.policy == "pi05":
        from lerobot.policies.pi05 import modeling_pi05 as modeling
        from lerobot.policies.pi05.configuration_pi05 import PI05Config as Config
        policy_cls = modeling.PI05Policy
    else:
        from lerobot.policies.pi0 import modeling_pi0 as modeling
        from lerobot.policies.pi0.configuration_pi0 import PI0Config as Config
        policy_cls = modeling.PI0Policy
    patch_sizes(a, modeling)
    s = a.image_size
    cfg = Config(device=dev.type, dtype=a.dtype, gradient_checkpointing=a.gradient_checkpointing,
                 empty_cameras=a.empty_cameras)
    cfg.input_features = {"observation.image": PolicyFeature(type=FeatureType.VISUAL, shape=(3, s, s)),
                          "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(a.state_dim,))}
    cfg.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(a.action_dim,))}
    policy = policy_cls(cfg)  # validate_features (the empty camera slots); moves itself to cfg.device
    policy.to(dev)  # make_policy: policy.to(cfg.device)
    b, chunk, length = a.batch_size, cfg.chunk_size, cfg.tokenizer_max_length
    vocab = a.vocab or 257152
    tokens = torch.randint(1, min(247978, vocab), (b, length), device=dev)  # Gemma's text ids (the reduced tokenizer's range)
    mask = torch.zeros(b, length, dtype=torch.bool, device=dev)
    mask[:, :min(a.prompt_tokens, length)] = True
    tokens[~mask] = 0  # <pad>
    batch = {"observation.image": torch.rand(b, 3, s, s, device=dev),
             "observation.state": torch.randn(b, a.state_dim, device=dev),
             "action": torch.randn(b, chunk, a.action_dim, device=dev),
             "action_is_pad": torch.zeros(b, chunk, dtype=torch.bool, device=dev),
             "observation.language.tokens": tokens, "observation.language.attention_mask": mask}
    return (cfg, policy, batch) + lerobot_step.preset_optimizer(cfg, policy)


def main():
    if sys.version_info < (3, 12):  # LeRobot 0.6's requires-python
        sys.exit(f"lerobot_pi_step.py: LeRobot 0.6 needs Python >= 3.12; this is {sys.version.split()[0]}")
    ap = argparse.ArgumentParser()
    add_common_args(ap, batch_size=8)
    ap.add_argument("--policy", default="pi05", choices=["pi05", "pi0"])
    ap.add_argument("--image_size", type=int, default=224)
    ap.add_argument("--empty_cameras", type=int, default=2)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    ap.add_argument("--gradient_checkpointing", default="true", choices=["true", "false"])
    ap.add_argument("--prompt_tokens", type=int, default=40, help="valid tokens of the prompt (the rest padding)")
    ap.add_argument("--depth", type=int, default=0, help="Gemma layers of both variants (0: LeRobot's 18)")
    ap.add_argument("--vision_layers", type=int, default=0, help="SigLIP layers (0: LeRobot's 27)")
    ap.add_argument("--vocab", type=int, default=0, help="vocabulary (0: LeRobot's 257,152)")
    a = ap.parse_args()
    a.gradient_checkpointing = a.gradient_checkpointing == "true"
    dev = prepare_device(a)
    standins = lerobot_step.install_standins()
    import importlib.util
    import re
    if importlib.util.find_spec("regex") is None:
        sys.modules["regex"] = re
        standins.append("regex")
    if importlib.util.find_spec("tokenizers") is None:
        install_class_standins(TOKENIZERS)
        standins.append("tokenizers")
    if standins:
        install_standin_metadata(standins)
    import lerobot
    import transformers

    cfg, policy, batch, optimizer, scheduler, grad_clip_norm = build(a, dev)
    bf16 = a.mixed_precision == "bf16"
    metrics = {}
    step = lerobot_step.update_policy_step(policy, batch, optimizer, scheduler, grad_clip_norm, dev, bf16, metrics)

    params = [p for p in policy.parameters() if p.requires_grad]
    n = sum(p.numel() for p in params)
    dtypes = sorted({str(p.dtype).replace("torch.", "") for p in params})
    name = {"pi05": "PI05", "pi0": "PI0"}[a.policy]
    where = os.path.dirname(os.path.dirname(lerobot.__file__))
    sizes = "full size" if not (a.depth or a.vision_layers or a.vocab) else (
        f"reduced: depth {a.depth or 18}, vision_layers {a.vision_layers or 27}, vocab {a.vocab or 257152}")
    cams = len(cfg.image_features)
    print(f"LeRobot's {name}Policy (lerobot from {where}, transformers {transformers.__version__}) on PyTorch "
          f"{torch.__version__} step: {n} parameters in {len(params)} tensors ({'/'.join(dtypes)}), {sizes}, "
          f"batch {a.batch_size}, {cams} cameras ({a.empty_cameras} empty) {a.image_size}x{a.image_size}, "
          f"{cfg.tokenizer_max_length} tokens, chunk {cfg.chunk_size}, device {dev}, dtype {cfg.dtype}, "
          f"gradient_checkpointing {cfg.gradient_checkpointing}, mixed_precision {a.mixed_precision}, "
          f"optimizer {type(optimizer).__name__}, scheduler {type(scheduler).__name__ if scheduler else None}, "
          f"clip {grad_clip_norm}", flush=True)
    if standins:
        print(f"import-only stand-ins (not installed, unused by the step): {', '.join(standins)}"
              f"{' (regex: the standard library re)' if 'regex' in standins else ''}")
    time_and_report(step, dev, a.steps, a.warmup, a.batch_size)
    print(f"loss: last step {metrics['loss']:.6f}  grad_norm {metrics.get('grad_norm', float('nan')):.4f}  "
          f"lr {metrics['lr']:.3g}")


if __name__ == "__main__":
    main()
