#!/usr/bin/env python3
"""Reference drawings of cv2.line and cv2.drawMarker(MARKER_CROSS) (LINE_8) for
tests/envs/test_cv_draw.cpp, the test of src/lerobot/envs/cv_draw.cpp.

How it was run (Debian bookworm: python3-opencv 4.6.0, python3-numpy 1.24.2):
    /usr/bin/python3 scripts/pusht_reference/make_cv_draw_reference.py
It writes tests/envs/data/cv_draw_reference.json (each case: image size, channels, colour, the call's
arguments; one line each) and cv_draw_reference.bin (per case, the zlib-compressed bit mask of the pixels the call
painted, numpy.packbits order: row-major, most significant bit first; the offsets are in the json).
Each case draws once on a zero image with a colour whose every channel is non-zero, so the mask says
everything: OpenCV's LINE_8 drawing only ever writes the colour itself (checked here).
"""
import json
import os
import zlib

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "envs", "data")


def coordinate(rs, extent):
    """Mostly near the image, sometimes exactly on its border, now and then far outside."""
    u = rs.random_sample()
    if u < 0.75:
        return int(rs.randint(-24, extent + 24))
    if u < 0.9:
        return int(rs.choice([0, extent - 1, extent, -1]))
    return int(rs.choice([-1, 1]) * rs.randint(100, 40000))


def thickness(rs):
    u = rs.random_sample()
    if u < 0.3:
        return 1  # OpenCV 4.6 asserts thickness > 0 (later 4.x draw 0 as 1, as cv_line does)
    if u < 0.85:
        return int(rs.randint(2, 10))
    return int(rs.randint(10, 41))


def cases(rs):
    out = []
    for _ in range(1200):
        h, w = int(rs.randint(1, 97)), int(rs.randint(1, 97))
        args = [coordinate(rs, w), coordinate(rs, h), coordinate(rs, w), coordinate(rs, h)]
        if rs.random_sample() < 0.05:  # a single point
            args[2:] = args[:2]
        out.append({"kind": "line", "h": h, "w": w, "args": args, "thickness": thickness(rs)})
    for _ in range(400):
        h, w = int(rs.randint(1, 129)), int(rs.randint(1, 129))
        args = [coordinate(rs, w), coordinate(rs, h), int(rs.randint(0, 65))]
        out.append({"kind": "marker", "h": h, "w": w, "args": args, "thickness": thickness(rs)})
    # gym_pusht's marker: markerSize int(8 / 96 * render_size), thickness int(1 / 96 * render_size),
    # at (action / 512 * [height, width]).astype(int32), on LeRobot's 384x384 view and others.
    for h, w in [(384, 384)] * 24 + [(96, 96)] * 4 + [(200, 120)] * 4 + [(680, 680)] * 4:
        size = min(h, w)
        action = rs.uniform(-20, 532, size=2).astype(np.float32)
        x, y = (action / 512 * [h, w]).astype(np.int32)
        out.append({"kind": "marker", "h": h, "w": w, "args": [int(x), int(y), int(8 / 96 * size)],
                    "thickness": int(1 / 96 * size)})
    for c in out:
        c["channels"] = int(rs.choice([1, 3, 4]))
        c["color"] = [int(v) for v in rs.randint(1, 256, size=c["channels"])]
    return out


def draw(c):
    img = np.zeros((c["h"], c["w"], c["channels"]), np.uint8)
    color = tuple(c["color"]) + (0,) * (4 - c["channels"])
    a = c["args"]
    if c["kind"] == "line":
        cv2.line(img, (a[0], a[1]), (a[2], a[3]), color, c["thickness"], cv2.LINE_8)
    else:
        cv2.drawMarker(img, (a[0], a[1]), color, markerType=cv2.MARKER_CROSS, markerSize=a[2],
                       thickness=c["thickness"])
    painted = img.any(axis=2)
    assert (img[painted] == np.array(c["color"], np.uint8)).all(), "a pixel that is not the colour"
    assert (img[~painted] == 0).all()
    return painted


def main():
    rs = np.random.RandomState(2026)
    all_cases = cases(rs)
    blob = bytearray()
    painted_total = 0
    for c in all_cases:
        mask = draw(c)
        painted_total += int(mask.sum())
        packed = zlib.compress(np.packbits(mask.reshape(-1)).tobytes(), 9)
        c["mask_offset"], c["mask_bytes"], c["painted"] = len(blob), len(packed), int(mask.sum())
        blob += packed
    # One array per case: kind (0 line: x0 y0 x1 y1; 1 cross marker: x y markerSize), height,
    # width, channels, thickness, the arguments, the colour, then the mask's offset and size in the
    # .bin and how many pixels it paints.
    rows = [[0 if c["kind"] == "line" else 1, c["h"], c["w"], c["channels"], c["thickness"], c["args"], c["color"],
             c["mask_offset"], c["mask_bytes"], c["painted"]] for c in all_cases]
    with open(os.path.join(DATA, "cv_draw_reference.json"), "w") as f:
        f.write('{"opencv":"%s","cases":[\n' % cv2.__version__)
        f.write(",\n".join(json.dumps(r, separators=(",", ":")) for r in rows))
        f.write("\n]}\n")
    with open(os.path.join(DATA, "cv_draw_reference.bin"), "wb") as f:
        f.write(blob)
    print(len(all_cases), "cases,", painted_total, "painted pixels,", len(blob), "bytes of masks")


if __name__ == "__main__":
    main()
