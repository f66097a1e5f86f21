#!/usr/bin/env python3
"""Writes tests/envs/data/pusht_reference.{json,bin}: episodes of the real gym_pusht PushTEnv, the
reference the C++ port (src/lerobot/envs/pusht.cpp) is tested against.

Needs gym_pusht (0.1.5) and what it imports: pymunk 6.x, pygame, opencv, shapely, numpy (gymnasium
is only used for gym.Env and spaces). Made on Debian 12 with /usr/bin/python3 3.11, pymunk 6.11.1
built from its source (cffi, its bundled Chipmunk2D fork at 7f091aa), pygame 2.6.1 built from its
source against Debian's SDL 2.26.5 (what LeRobot users get with gym_pusht's pygame>=2.5.2; Debian's
2.1.2 fills some polygon edges one pixel differently), Debian's python3-opencv 4.6,
python3-shapely 1.8.5 and python3-numpy 1.24, and gym_pusht at 5e2489b (0.1.5):

    PYTHONPATH=<pygame 2.6.1>:<pymunk>:<gym-pusht> /usr/bin/python3 scripts/pusht_reference/gym_pusht_reference.py

Each episode: a reset (a seed, or reset_to_state), then float32 actions from a scripted pusher that
drives the agent into the T, so contacts (and their drawn collision points) happen. Recorded after
the reset and after every step: agent position and velocity, block pose, reward, coverage,
is_success, terminated, and the 96x96 camera image (zlib-compressed, concatenated in the .bin).
Two more episodes observe the T's keypoints instead (obs_type environment_state_agent_pos).
"""
import json
import os
import zlib

import numpy as np
from gym_pusht.envs.pusht import PushTEnv

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "envs", "data")
STEPS = 40


def pusher(obs, info, t):
    """Aims past the block's centre, from the agent's side, wobbling, so the agent shoves the T."""
    agent = np.asarray(obs["agent_pos"], dtype=np.float64)
    block = np.asarray(info["block_pose"][:2], dtype=np.float64)
    d = block - agent
    n = np.linalg.norm(d) + 1e-9
    wobble = np.array([-d[1], d[0]]) / n * 25.0 * np.sin(0.7 * t)
    target = block + d / n * 40.0 + wobble
    return target.astype(np.float32)


def stay(obs, info, t):
    """Holds the agent where it starts."""
    return np.asarray([100.0, 100.0], dtype=np.float32)


def record(env, reset_kwargs, policy):
    obs, info = env.reset(**reset_kwargs)
    frames = []
    steps = []

    def snap(obs, info, reward, terminated, action):
        frames.append(zlib.compress(np.ascontiguousarray(obs["pixels"]).tobytes(), 9))
        steps.append({
            "action": None if action is None else [float(a) for a in action],
            "agent_pos": [float(v) for v in obs["agent_pos"]],
            "vel_agent": [float(v) for v in info["vel_agent"]],
            "block_pose": [float(v) for v in info["block_pose"]],
            "reward": float(reward),
            "coverage": float(info.get("coverage", -1.0)),
            "is_success": bool(info["is_success"]),
            "terminated": bool(terminated),
        })

    snap(obs, info, 0.0, False, None)
    for t in range(STEPS):
        action = policy(obs, info, t)
        obs, reward, terminated, _, info = env.step(action)
        snap(obs, info, reward, terminated, action)
        if terminated:
            break
    return steps, frames


def main():
    env = PushTEnv(obs_type="pixels_agent_pos")
    episodes, blobs = [], []
    cases = [({"seed": s}, pusher) for s in (0, 1, 42, 1000, 100000, 4294967295)]
    # The T set on the goal (gym_pusht sets the position, then turns the T about its centre of
    # gravity, so the position is the one that lands it there): a success on the first step.
    on_goal = [100.0, 100.0, 224.1801948466054, 242.81980515339467, float(np.pi / 4)]
    cases.append(({"options": {"reset_to_state": on_goal}}, stay))
    # Set beside the goal: no success, the agent held still.
    cases.append(({"options": {"reset_to_state": [100.0, 100.0, 256.0, 256.0, float(np.pi / 4)]}}, stay))
    for case, policy in cases:
        steps, frames = record(env, case, policy)
        episodes.append({"reset": case, "steps": steps, "frame_bytes": [len(f) for f in frames]})
        blobs.extend(frames)
        last = steps[-1]
        print(case, "steps", len(steps) - 1, "coverage", round(last["coverage"], 4), "success", last["is_success"])
    # obs_type environment_state_agent_pos: the T's keypoints after each push.
    kenv = PushTEnv(obs_type="environment_state_agent_pos")
    keypoint_episodes = []
    for seed in (5, 77):
        obs, info = kenv.reset(seed=seed)
        steps = [{"action": None, "environment_state": [float(v) for v in obs["environment_state"]],
                  "agent_pos": [float(v) for v in obs["agent_pos"]]}]
        for t in range(20):
            action = pusher(obs, info, t)
            obs, _, _, _, info = kenv.step(action)
            steps.append({"action": [float(a) for a in action],
                          "environment_state": [float(v) for v in obs["environment_state"]],
                          "agent_pos": [float(v) for v in obs["agent_pos"]]})
        keypoint_episodes.append({"seed": seed, "steps": steps})
    # The reset draws of numpy's RandomState for a few more seeds (states only).
    resets = {}
    for s in (2, 3, 7, 123456789, 2**31, 2**32 - 2):
        obs, info = env.reset(seed=s)
        resets[str(s)] = {"agent_pos": [float(v) for v in obs["agent_pos"]],
                          "block_pose": [float(v) for v in info["block_pose"]]}
    write_reference("pusht_reference", {"image_size": 96, "episodes": episodes, "keypoint_episodes": keypoint_episodes,
                                        "resets": resets}, blobs)


def write_reference(name, meta, blobs):
    """tests/envs/data/<name>.json (compact) and <name>.bin (the compressed frames, concatenated)."""
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(meta, f, indent=None, separators=(",", ":"))
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        for b in blobs:
            f.write(b)
    print("frames", len(blobs), "bytes", sum(len(b) for b in blobs))


if __name__ == "__main__":
    main()
