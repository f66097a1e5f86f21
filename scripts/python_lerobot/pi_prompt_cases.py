#!/usr/bin/env python3
"""Writes tests/policies/data/pi_prompt_cases.json: the prompts LeRobot's own π0/π0.5 steps build.

The C++ prompt functions (src/lerobot/policies/pi_prompt.*) must build the strings LeRobot 0.6.2's
Pi05PrepareStateTokenizerProcessorStep and Pi0NewLineProcessor put in the transition before its
TokenizerProcessorStep (which needs PaliGemma's gated tokenizer, so it is not run here). Each case
is a batch of tasks and a normalized state (float32, (B, D) or (B, T, D)); the state values sit
on, just below and just above bin edges, outside [-1, 1], at ±inf and NaN.

    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=<lerobot>/src:<draccus>:<huggingface_hub>/src \\
        python3 pi_prompt_cases.py OUT.json
"""
import json
import sys

import numpy as np
import torch

from lerobot.lerobot_types import TransitionKey
from lerobot.policies.pi0.processor_pi0 import Pi0NewLineProcessor
from lerobot.policies.pi05.processor_pi05 import Pi05PrepareStateTokenizerProcessorStep
from lerobot.utils.constants import OBS_STATE

TASKS = [
    "pick up the cube",
    "  Pick_up_the_red_cube \n",
    "stack\nthe blocks\t",
    "\u3000full-width space\u00a0",
    "\x1cfile separator\x1f",
    "zero\u200bwidth stays",
    "_leading underscore_",
    "",
    "\n",
    "café – naïve ✓",
    "ends with newline\n",
]

edge = 1.0 / 128.0
values = [
    -1.0, -1.0000001, 1.0, 0.9921875, np.nextafter(np.float32(0.9921875), np.float32(0)), 0.0, -0.0,
    np.nextafter(np.float32(0), np.float32(-1)), 1e-30, -1e-30, -edge, -edge + 1e-7, 0.5, -0.5,
    2.0, -2.0, float("inf"), float("-inf"), float("nan"), 0.123456, -0.987654, 0.3,
]


def run_pi05(tasks, state, include_state=True):
    step = Pi05PrepareStateTokenizerProcessorStep(include_state_in_prompt=include_state)
    transition = {
        TransitionKey.OBSERVATION: {OBS_STATE: state},
        TransitionKey.COMPLEMENTARY_DATA: {"task": list(tasks)},
    }
    return step(transition)[TransitionKey.COMPLEMENTARY_DATA]["task"]


def run_pi0(tasks):
    step = Pi0NewLineProcessor()
    return step.complementary_data({"task": list(tasks)})["task"]


def main(out):
    cases = []
    n = len(TASKS)
    state2 = torch.tensor([[values[(i * 5 + d) % len(values)] for d in range(8)] for i in range(n)], dtype=torch.float32)
    cases.append({"tasks": TASKS, "state": state2.tolist(), "include_state": True, "prompts": run_pi05(TASKS, state2)})
    state3 = torch.tensor([[[0.1 * t - 0.3 + 0.01 * d for d in range(6)] for t in range(3)] for _ in range(2)],
                          dtype=torch.float32)
    cases.append({"tasks": TASKS[:2], "state": state3.tolist(), "include_state": True,
                  "prompts": run_pi05(TASKS[:2], state3)})
    cases.append({"tasks": TASKS, "state": state2.tolist(), "include_state": False,
                  "prompts": run_pi05(TASKS, state2, include_state=False)})
    # Every value alone, so each bin is pinned by itself.
    single = torch.tensor([values], dtype=torch.float32)
    cases.append({"tasks": ["bins"], "state": single.tolist(), "include_state": True,
                  "prompts": run_pi05(["bins"], single)})
    doc = {
        "source": "LeRobot 0.6.2 (7427f3180): Pi05PrepareStateTokenizerProcessorStep, Pi0NewLineProcessor",
        "numpy": np.__version__,
        "torch": torch.__version__,
        "pi05": cases,
        "pi0": {"tasks": TASKS, "prompts": run_pi0(TASKS)},
    }
    # NaN/inf are not JSON: states are written with them as strings.
    def encode(x):
        if isinstance(x, float) and not np.isfinite(x):
            return "nan" if np.isnan(x) else ("inf" if x > 0 else "-inf")
        if isinstance(x, list):
            return [encode(v) for v in x]
        return x
    for c in doc["pi05"]:
        c["state"] = encode(c["state"])
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
