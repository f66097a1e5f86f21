#!/usr/bin/env python3
"""Writes tests/envs/data/pusht_render_reference.{json,bin}: frames of the real gym_pusht's render(),
the view LeRobot's evaluation videos show (the 512x512 surface resized to visualization_width x
visualization_height, a red cross where the last action pointed), for PushT.RenderedViewMatchesGymPusht.

Same set-up as gym_pusht_reference.py (pymunk 6.11.1, pygame 2.6.1 built from source, Debian's
OpenCV 4.6, gym_pusht 0.1.5):

    PYTHONPATH=<pygame 2.6.1>:<pymunk>:<gym-pusht> /usr/bin/python3 scripts/pusht_reference/gym_pusht_render_reference.py

For each view size: one env, seed 7, the scripted pusher of gym_pusht_reference.py for 12 steps,
then an action off the arena (its cross partly or wholly off the image), then a reset with seed 8
(gym_pusht keeps the last action across a reset, so the cross stays). The first frame, after the
first reset, has no cross (a fresh env has no last action). Frames are zlib-compressed RGB HWC.
"""
import zlib

import numpy as np
from gym_pusht.envs.pusht import PushTEnv

from gym_pusht_reference import pusher, write_reference

# (width, height): LeRobot's 384x384, a non-square view (x is scaled by the height there), gym's
# 96x96 (a one-pixel cross), and gym_pusht's own default 680x680.
SIZES = [(384, 384), (120, 200), (96, 96), (680, 680)]
KEEP = {0, 1, 5, 12, 13, 14}  # frames compared (0: after the first reset; 14: after the second)


def main():
    views, blobs = [], []
    for width, height in SIZES:
        env = PushTEnv(obs_type="pixels_agent_pos", visualization_width=width, visualization_height=height)
        obs, info = env.reset(seed=7)
        actions, frames = [], {}

        def snap(index):
            if index in KEEP:
                img = env.render()
                assert img.shape == (height, width, 3)
                blob = zlib.compress(np.ascontiguousarray(img).tobytes(), 9)
                frames[str(index)] = len(blob)
                blobs.append(blob)

        snap(0)
        for t in range(12):
            action = pusher(obs, info, t)
            obs, _, _, _, info = env.step(action)
            actions.append([float(a) for a in action])
            snap(t + 1)
        off = np.array([-9.5, 530.25], np.float32)
        env.step(off)
        actions.append([float(a) for a in off])
        snap(13)
        env.reset(seed=8)
        snap(14)
        views.append({"width": width, "height": height, "first_seed": 7, "second_seed": 8, "actions": actions,
                      "frame_bytes": frames})
        print(width, height, "frames", len(frames))
    write_reference("pusht_render_reference", {"views": views}, blobs)


if __name__ == "__main__":
    main()
