#!/usr/bin/env python3
"""Records LeRobot's own π0 and π0.5 pre/post-processor pipelines, for tests/policies/test_pi_processors.cpp.

For a small PI0Config and PI05Config (2 cameras, state 5, action 4; tokenizer_max_length 12 for π0
and 24 for π0.5; stats made by a formula, q01/q99 included for π0.5's QUANTILES), and a π0.5 one
with max_state_dim 3 below the state's 5 and tokenizer_max_length 48 ("pi05_wide_state"), it builds
make_pi0_pre_post_processors / make_pi05_pre_post_processors, saves them with save_pretrained into
a temporary folder and records:
  - "files": every file save_pretrained wrote (the tokenizer/ folder's files included);
  - "preprocessor" / "postprocessor": the two JSON files as written;
  - "state_tensors": for each .safetensors file, its tensors (name -> flat values and shape);
  - "batch": the raw batch (images, state, action, task strings) and "pre": what the preprocessor
    makes of it (tokens, attention mask, normalized state / action / images), "post": what the
    postprocessor makes of the normalized action;
  - "reloaded_pre": the same preprocessing by the pipeline loaded back with from_pretrained.

PaliGemma's tokenizer ("google/paligemma-3b-pt-224") is gated, so AutoTokenizer.from_pretrained is
patched to load tests/policies/data/gemma_tokenizer (the reduced Gemma tokenizer, same model type
and ids) for that name. No other patch is needed for transformers 5.12.

    PYTHONPATH=<lerobot>/src:<draccus>:<huggingface_hub>/src:... python3 pi_processors_reference.py OUT.json
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file

import transformers

HERE = Path(__file__).resolve().parent
GEMMA_DIR = HERE.parent.parent / "tests" / "policies" / "data" / "gemma_tokenizer"
PALIGEMMA = "google/paligemma-3b-pt-224"

_orig_from_pretrained = transformers.AutoTokenizer.from_pretrained.__func__


def _from_pretrained(cls, name, *args, **kwargs):
    if str(name) == PALIGEMMA:
        name = str(GEMMA_DIR)
    return _orig_from_pretrained(cls, name, *args, **kwargs)


transformers.AutoTokenizer.from_pretrained = classmethod(_from_pretrained)

from lerobot.configs.types import FeatureType, PolicyFeature  # noqa: E402
from lerobot.policies.pi0.configuration_pi0 import PI0Config  # noqa: E402
from lerobot.policies.pi0.processor_pi0 import make_pi0_pre_post_processors  # noqa: E402
from lerobot.policies.pi05.configuration_pi05 import PI05Config  # noqa: E402
from lerobot.policies.pi05.processor_pi05 import make_pi05_pre_post_processors  # noqa: E402
from lerobot.processor import PolicyProcessorPipeline  # noqa: E402
from lerobot.processor.converters import (  # noqa: E402
    policy_action_to_transition,
    transition_to_policy_action,
)

IMG = (3, 4, 4)
STATE = 5
ACTION = 4
B = 2
T = 3
TASKS = ["pick up the red cube", "stack_the blocks\n"]


def features():
    return dict(
        input_features={
            "observation.images.top": PolicyFeature(type=FeatureType.VISUAL, shape=IMG),
            "observation.images.wrist": PolicyFeature(type=FeatureType.VISUAL, shape=IMG),
            "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(STATE,)),
        },
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(ACTION,))},
    )


def stats():
    """The formula both sides use: per key and element i (flat index), mean 0.1*i - 0.2,
    std 0.5 + 0.25*i, min -1 - 0.5*i, max 1 + 0.75*i, q01 -0.8 - 0.25*i, q99 0.9 + 0.5*i; images (3,1,1)."""
    def one(shape):
        n = 1
        for s in shape:
            n *= s
        i = torch.arange(n, dtype=torch.float32)
        make = lambda v: v.reshape(shape)  # noqa: E731
        return {
            "mean": make(0.1 * i - 0.2), "std": make(0.5 + 0.25 * i), "min": make(-1 - 0.5 * i),
            "max": make(1 + 0.75 * i), "q01": make(-0.8 - 0.25 * i), "q99": make(0.9 + 0.5 * i),
        }
    return {
        "observation.images.top": one((3, 1, 1)),
        "observation.images.wrist": one((3, 1, 1)),
        "observation.state": one((STATE,)),
        "action": one((ACTION,)),
    }


def raw_batch():
    g = torch.Generator().manual_seed(0)
    return {
        "observation.images.top": torch.rand((B,) + IMG, generator=g),
        "observation.images.wrist": torch.rand((B,) + IMG, generator=g),
        "observation.state": (torch.rand((B, STATE), generator=g) * 4 - 2),
        "action": (torch.rand((B, T, ACTION), generator=g) * 4 - 2),
        "task": list(TASKS),
    }


def tensor_json(t):
    t = t.detach().cpu()
    if t.dtype == torch.bool:
        t = t.to(torch.int64)
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": t.flatten().tolist()}


def batch_json(batch):
    return {k: (tensor_json(v) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}


def record(name, config, make):
    pre, post = make(config, dataset_stats=stats())
    batch = raw_batch()
    out_pre = pre(dict(batch))
    out_post = post(out_pre["action"].clone())
    with tempfile.TemporaryDirectory() as tmp:
        pre.save_pretrained(tmp)
        post.save_pretrained(tmp)
        files = sorted(str(p.relative_to(tmp)) for p in Path(tmp).rglob("*") if p.is_file())
        pre_json = json.loads((Path(tmp) / "policy_preprocessor.json").read_text())
        post_json = json.loads((Path(tmp) / "policy_postprocessor.json").read_text())
        state = {}
        for f in files:
            if f.endswith(".safetensors"):
                state[f] = {k: tensor_json(v) for k, v in sorted(load_file(os.path.join(tmp, f)).items())}
        reloaded = PolicyProcessorPipeline.from_pretrained(tmp, config_filename="policy_preprocessor.json")
        reloaded_post = PolicyProcessorPipeline.from_pretrained(
            tmp, config_filename="policy_postprocessor.json",
            to_transition=policy_action_to_transition, to_output=transition_to_policy_action)
        again = reloaded(dict(raw_batch()))
        again_post = reloaded_post(out_pre["action"].clone())
    keep = ("observation.language.tokens", "observation.language.attention_mask", "observation.state", "action",
            "observation.images.top", "observation.images.wrist")
    return {
        "type": name,
        "tokenizer_max_length": config.tokenizer_max_length,
        "max_state_dim": config.max_state_dim,
        "normalization_mapping": {k: v.value for k, v in config.normalization_mapping.items()},
        "files": files,
        "preprocessor": pre_json,
        "postprocessor": post_json,
        "state_tensors": state,
        "batch": batch_json(batch),
        "pre": {k: tensor_json(out_pre[k]) for k in keep},
        "post": tensor_json(out_post),
        "reloaded_pre": {k: tensor_json(again[k]) for k in keep},
        "reloaded_post": tensor_json(again_post),
    }


def main(out):
    pi0 = PI0Config(**features(), tokenizer_max_length=12, device="cpu", push_to_hub=False)
    pi05 = PI05Config(**features(), tokenizer_max_length=24, device="cpu", push_to_hub=False)
    wide = PI05Config(**features(), tokenizer_max_length=48, max_state_dim=3, device="cpu", push_to_hub=False)
    doc = {
        "source": "LeRobot 0.6.2: make_pi0_pre_post_processors, make_pi05_pre_post_processors, save_pretrained",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizer": "tests/policies/data/gemma_tokenizer (for google/paligemma-3b-pt-224)",
        "stats_formula": stats.__doc__.strip(),
        "pi0": record("pi0", pi0, make_pi0_pre_post_processors),
        "pi05": record("pi05", pi05, make_pi05_pre_post_processors),
        # max_state_dim 3 < the state's 5 (LeRobot's step writes every entry's bin), a longer
        # tokenizer_max_length so that all five bins fit in the tokens.
        "pi05_wide_state": record("pi05", wide, make_pi05_pre_post_processors),
    }
    Path(out).write_text(json.dumps(doc, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1])
