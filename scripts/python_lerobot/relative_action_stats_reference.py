#!/usr/bin/env python3
"""Records LeRobot 0.6.2's compute_relative_action_stats on small arrays, for
tests/train/test_relative_action_stats.cpp (what `lerobot-edit-dataset --operation.type
recompute_stats --operation.relative_action true` puts in stats.json["action"]).

The arrays are built here (a seeded numpy generator): five episodes of different lengths, one of
them shorter than the chunk so none of its starts is valid and every episode's last chunk_size-1
starts are dropped; the state is wider than the action. For each case the JSON holds the inputs
("action", "state", "episode_index", "names", "exclude_joints", "chunk_size"), LeRobot's mask
(RelativeActionsProcessorStep._build_mask), its valid starts (_get_valid_chunk_starts) and the
stats it returns (float32 sums, 5000-bin histogram quantiles).

lerobot/datasets/__init__.py requires the `datasets` and `av` packages, which the reference chroot
lacks; compute_stats.py itself needs neither, so the package is stood in by an empty module whose
__path__ is the real folder and compute_stats is imported from it (its io_utils import is stubbed:
only image stats use it). hf_dataset is a plain dict of columns, which is all the function indexes.

    PYTHONPATH=<lerobot>/src:<draccus>:... python3 relative_action_stats_reference.py OUT.json
"""
import json
import sys
import types
from pathlib import Path

import numpy as np

import lerobot

pkg = types.ModuleType("lerobot.datasets")
pkg.__path__ = [str(Path(lerobot.__file__).parent / "datasets")]
sys.modules["lerobot.datasets"] = pkg
io_utils = types.ModuleType("lerobot.datasets.io_utils")
io_utils.load_image_as_numpy = None
sys.modules["lerobot.datasets.io_utils"] = io_utils

from lerobot.datasets import compute_stats as cs  # noqa: E402
from lerobot.processor import RelativeActionsProcessorStep  # noqa: E402

LENGTHS = [40, 3, 65, 17, 28]


def arrays(seed, action_dim, state_dim):
    rng = np.random.default_rng(seed)
    n = sum(LENGTHS)
    episode_index = np.concatenate([np.full(l, e) for e, l in enumerate(LENGTHS)]).astype(np.int64)
    # A slowly moving state (a random walk per episode) and actions near the next states, offset.
    state = np.cumsum(rng.normal(0, 0.1, (n, state_dim)), axis=0) + rng.uniform(-2, 2, state_dim)
    action = state[:, :action_dim] + rng.normal(0.05, 0.2, (n, action_dim)) + np.arange(action_dim) * 0.5
    return action.astype(np.float32), state.astype(np.float32), episode_index


def case(name, seed, names, exclude, chunk_size, action_dim, state_dim):
    action, state, episode_index = arrays(seed, action_dim, state_dim)
    features = {"action": {"dtype": "float32", "shape": [action_dim], "names": names}}
    hf = {"action": action.tolist(), "observation.state": state.tolist(), "episode_index": episode_index.tolist()}
    stats = cs.compute_relative_action_stats(hf, features, chunk_size=chunk_size, exclude_joints=exclude)
    mask = RelativeActionsProcessorStep(enabled=True, exclude_joints=exclude or [], action_names=names)._build_mask(action_dim)
    return {
        "name": name,
        "names": names,
        "exclude_joints": exclude,
        "chunk_size": chunk_size,
        "action": action.tolist(),
        "state": state.tolist(),
        "episode_index": episode_index.tolist(),
        "mask": [bool(m) for m in mask],
        "valid_starts": cs._get_valid_chunk_starts(episode_index, chunk_size).tolist(),
        "stats": {k: np.asarray(v).astype(np.float64).tolist() for k, v in stats.items()},
    }


def generated(n_frames, scale_from):
    """Arrays from integer arithmetic the C++ test repeats exactly (no RNG to port): episodes of
    lengths cycling 37, 1, 90, 12; values ((i * a + d * b) mod 10007) / 10007 - 0.5, times 3 from
    frame `scale_from` on, so the second batch of 50 000 chunks widens the range and LeRobot's
    histograms are re-binned."""
    cycle = [37, 1, 90, 12]
    lengths, total = [], 0
    while total < n_frames:
        lengths.append(min(cycle[len(lengths) % 4], n_frames - total))
        total += lengths[-1]
    episode_index = np.concatenate([np.full(l, e) for e, l in enumerate(lengths)]).astype(np.int64)
    i = np.arange(n_frames, dtype=np.int64)[:, None]
    d = np.arange(2, dtype=np.int64)[None, :]
    scale = np.where(i >= scale_from, 3.0, 1.0)
    action = ((((i * 7919 + d * 104729) % 10007) / 10007.0 - 0.5) * scale).astype(np.float32)
    state = ((((i * 3571 + d * 65537) % 10007) / 10007.0 - 0.5) * scale).astype(np.float32)
    return action, state, episode_index


def generated_case(n_frames, scale_from):
    action, state, episode_index = generated(n_frames, scale_from)
    names, exclude, chunk_size = ["a", "grip"], ["grip"], 2
    features = {"action": {"dtype": "float32", "shape": [2], "names": names}}
    hf = {"action": action, "observation.state": state, "episode_index": episode_index}
    stats = cs.compute_relative_action_stats(hf, features, chunk_size=chunk_size, exclude_joints=exclude)
    starts = cs._get_valid_chunk_starts(episode_index, chunk_size)
    return {
        "name": "two_batches",
        "generated": {"n_frames": n_frames, "scale_from": scale_from},
        "names": names,
        "exclude_joints": exclude,
        "chunk_size": chunk_size,
        "num_valid_starts": int(len(starts)),
        "stats": {k: np.asarray(v).astype(np.float64).tolist() for k, v in stats.items()},
    }


def main():
    out = Path(sys.argv[1])
    cases = [
        # "gripper" matches "Gripper_left" (lower-cased substring): that dimension stays absolute.
        case("exclude_gripper", 3, ["shoulder", "elbow", "Gripper_left", "wrist"], ["gripper"], 8, 4, 6),
        # No names: every dimension is relative; a longer chunk drops the 17-frame episode too.
        case("all_relative", 5, None, None, 20, 3, 3),
    ]
    # More than LeRobot's 50 000 chunks a batch: its histograms are re-binned when batch 2 widens the range.
    cases.append(generated_case(56000, 53000))
    out.write_text(json.dumps({"lerobot_version": "0.6.2", "lengths": LENGTHS, "cases": cases}) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
