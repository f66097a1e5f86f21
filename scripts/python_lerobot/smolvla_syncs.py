#!/usr/bin/env python3
"""Counts the host reads of one LeRobot SmolVLA training forward + backward (CPU), on the tiny
backbone of the tests (the reads do not depend on the sizes).

    python3 smolvla_syncs.py VLM_DIR
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import smolvla_reference as R  # noqa: E402

cfg, p = R.make_policy(sys.argv[1], "default")
tokens = torch.randint(0, 300, (R.B, 12))
batch = R.inputs(tokens, torch.ones(R.B, 12, dtype=torch.bool))
p.train()
for _ in range(2):  # the second is counted
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        loss, info = p.forward(dict(batch))
        loss.backward()
        loss.item()  # the train loop's loss.item() for its meter
    p.zero_grad()
names = [e.name for e in prof.events()]
print(f"aten::_local_scalar_dense x{names.count('aten::_local_scalar_dense')} "
      f"(loss_dict: {sorted(info)})")
