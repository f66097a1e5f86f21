#!/usr/bin/env python3
"""bench/pusht_env's peer: gym_pusht's PushTEnv (obs_type pixels_agent_pos) stepped by the same pusher
on seeds 0..episodes-1, 40 actions each; prints the median ms per env.step() (physics, reward and the
96x96 camera, as an evaluation steps it), then the median ms per env.render() (LeRobot's 384x384 view
for the evaluation videos, with the action cross). Needs gym_pusht and its dependencies (pymunk, pygame, opencv,
shapely). Usage: peer.py [episodes=30]"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pusht_reference"))
from gym_pusht.envs.pusht import PushTEnv  # noqa: E402
from gym_pusht_reference import pusher  # noqa: E402  (the reference episodes' pusher)


def main():
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    env = PushTEnv(obs_type="pixels_agent_pos", visualization_width=384, visualization_height=384)
    per_episode, per_frame = [], []
    for e in range(-2, episodes):
        obs, info = env.reset(seed=max(e, 0))
        total = render = 0.0
        for t in range(40):
            action = pusher(obs, info, t)
            t0 = time.perf_counter()
            obs, _, _, _, info = env.step(action)
            total += time.perf_counter() - t0
            t0 = time.perf_counter()
            env.render()
            render += time.perf_counter() - t0
        if e >= 0:
            per_episode.append(total * 1000 / 40)
            per_frame.append(render * 1000 / 40)
    print(f"gym_pusht step with camera: median {statistics.median(per_episode):.4f} ms/step ({episodes} episodes x 40 actions)")
    print(f"gym_pusht rendered view (render(), 384x384): median {statistics.median(per_frame):.4f} ms/frame")


if __name__ == "__main__":
    main()
