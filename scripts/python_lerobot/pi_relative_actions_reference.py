#!/usr/bin/env python3
"""Records LeRobot's own π0/π0.5 pipelines with relative actions on, for tests/policies/test_pi_relative_actions.cpp.

The config, stats, raw batch and tokenizer patch are pi_processors_reference.py's (imported from
beside this file). For each case (use_relative_actions=True with a relative_exclude_joints and
action_feature_names) it builds make_pi0_pre_post_processors / make_pi05_pre_post_processors,
saves them with save_pretrained into a temporary folder and records:
  - "mask": the relative step's _build_mask for the action width;
  - "preprocessor" / "postprocessor": the two JSON files as written; "files": the files written;
  - "pre": the preprocessed (relative, then normalized) action and normalized state of the raw batch;
    "post": the postprocessor on that action (the cached state is the batch's);
  - "model_action" (a fixed normalized (B, T, A) chunk) and "post_model": the postprocessor on it;
  - "observation": a second raw observation (state only, no action, and the tasks), "post_after_observation":
    the postprocessor on "model_step" (a fixed normalized (B, A) action) after the preprocessor saw
    that observation: the state it adds is the LAST preprocessed observation's, as in LeRobot's
    eval/record loops, where a queued action is made absolute with the current step's state;
  - "reloaded_post_after_observation": the same with the saved folder loaded back
    (PolicyProcessorPipeline.from_pretrained, wired by factory._reconnect_relative_absolute_steps);
  - "config": the config.json PreTrainedConfig._save_pretrained writes (action_feature_names).

    PYTHONPATH=<lerobot>/src:<draccus>:<huggingface_hub>/src:... python3 pi_relative_actions_reference.py OUT.json
"""
import json
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pi_processors_reference as base  # noqa: E402  (patches AutoTokenizer for PaliGemma's name)

from lerobot.policies.factory import _reconnect_relative_absolute_steps  # noqa: E402
from lerobot.policies.pi0.configuration_pi0 import PI0Config  # noqa: E402
from lerobot.policies.pi0.processor_pi0 import make_pi0_pre_post_processors  # noqa: E402
from lerobot.policies.pi05.configuration_pi05 import PI05Config  # noqa: E402
from lerobot.policies.pi05.processor_pi05 import make_pi05_pre_post_processors  # noqa: E402
from lerobot.processor import PolicyProcessorPipeline, RelativeActionsProcessorStep  # noqa: E402
from lerobot.processor.converters import (  # noqa: E402
    policy_action_to_transition,
    transition_to_policy_action,
)


def fixed(shape, scale):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) * scale - 0.5).reshape(shape)


def observation():
    g = torch.Generator().manual_seed(1)
    b = base.raw_batch()
    del b["action"]
    b["observation.state"] = torch.rand((base.B, base.STATE), generator=g) * 6 - 3
    return b


def record(name, config, make):
    pre, post = make(config, dataset_stats=base.stats())
    rel = next(s for s in pre.steps if isinstance(s, RelativeActionsProcessorStep))
    batch = base.raw_batch()
    out_pre = pre(dict(batch))
    out_post = post(out_pre["action"].clone())
    model_action = fixed((base.B, base.T, base.ACTION), 0.07)
    post_model = post(model_action.clone())
    obs = observation()
    pre(dict(obs))
    model_step = fixed((base.B, base.ACTION), 0.13)
    post_step = post(model_step.clone())
    with tempfile.TemporaryDirectory() as tmp:
        pre.save_pretrained(tmp)
        post.save_pretrained(tmp)
        config._save_pretrained(Path(tmp))
        files = sorted(str(p.relative_to(tmp)) for p in Path(tmp).rglob("*") if p.is_file())
        pre_json = json.loads((Path(tmp) / "policy_preprocessor.json").read_text())
        post_json = json.loads((Path(tmp) / "policy_postprocessor.json").read_text())
        config_json = json.loads((Path(tmp) / "config.json").read_text())
        reloaded = PolicyProcessorPipeline.from_pretrained(tmp, config_filename="policy_preprocessor.json")
        reloaded_post = PolicyProcessorPipeline.from_pretrained(
            tmp, config_filename="policy_postprocessor.json",
            to_transition=policy_action_to_transition, to_output=transition_to_policy_action)
        _reconnect_relative_absolute_steps(reloaded, reloaded_post)
        reloaded(dict(obs))
        again_post = reloaded_post(model_step.clone())
    return {
        "type": name,
        "tokenizer_max_length": config.tokenizer_max_length,
        "max_state_dim": config.max_state_dim,
        "relative_exclude_joints": config.relative_exclude_joints,
        "action_feature_names": config.action_feature_names,
        "mask": rel._build_mask(base.ACTION),
        "files": [f for f in files if f != "config.json"],
        "preprocessor": pre_json,
        "postprocessor": post_json,
        "config": config_json,
        "batch": base.batch_json(batch),
        "pre": {k: base.tensor_json(out_pre[k]) for k in ("action", "observation.state")},
        "post": base.tensor_json(out_post),
        "model_action": base.tensor_json(model_action),
        "post_model": base.tensor_json(post_model),
        "observation": base.batch_json(obs),
        "model_step": base.tensor_json(model_step),
        "post_after_observation": base.tensor_json(post_step),
        "reloaded_post_after_observation": base.tensor_json(again_post),
    }


def main(out):
    common = dict(**base.features(), device="cpu", push_to_hub=False, use_relative_actions=True)
    # Exact name, lower-cased: the gripper stays absolute.
    pi0 = PI0Config(**common, tokenizer_max_length=12, relative_exclude_joints=["Gripper"],
                    action_feature_names=["shoulder", "elbow", "wrist", "gripper"])
    # A substring: "wrist" excludes "wrist_roll" (and the gripper is relative here).
    pi05 = PI05Config(**common, tokenizer_max_length=24, relative_exclude_joints=["wrist"],
                      action_feature_names=["shoulder_pan", "elbow_flex", "wrist_roll", "gripper"])
    # No action names: every dimension relative, whatever exclude_joints says.
    pi0_unnamed = PI0Config(**common, tokenizer_max_length=12, relative_exclude_joints=["gripper"])
    # Fewer names than action dims: the rest relative.
    pi05_short = PI05Config(**common, tokenizer_max_length=24, relative_exclude_joints=["gripper", "elbow"],
                            action_feature_names=["elbow", "gripper"])
    doc = {
        "source": "LeRobot 0.6.2: RelativeActionsProcessorStep / AbsoluteActionsProcessorStep through "
                  "make_pi0_pre_post_processors, make_pi05_pre_post_processors, save_pretrained",
        "torch": torch.__version__,
        "stats_formula": base.stats.__doc__.strip(),
        "pi0_relative": record("pi0", pi0, make_pi0_pre_post_processors),
        "pi05_relative_substring": record("pi05", pi05, make_pi05_pre_post_processors),
        "pi0_relative_unnamed": record("pi0", pi0_unnamed, make_pi0_pre_post_processors),
        "pi05_relative_short_names": record("pi05", pi05_short, make_pi05_pre_post_processors),
    }
    Path(out).write_text(json.dumps(doc, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1])
