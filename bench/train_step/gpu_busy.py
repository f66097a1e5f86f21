#!/usr/bin/env python3
"""Runs a benchmark command and reports how busy the GPU was during its timed steps.

  python3 gpu_busy.py -- build/bench/train_step/bench_train_step --policy.device=cuda --steps=200

NVML's utilization (the share of time in which at least one kernel ran, as nvidia-smi's
utilization.gpu) is sampled every 20 ms while the command runs. The command prints
`timed window (unix ms): START END` (bench_train_step does); the samples taken inside that window
are averaged, so set-up and warm-up (GPU idle while the dataset is made) do not count. Prints the
command's own output, then `gpu busy: N% of the timed window (K samples)`.
"""
import re
import subprocess
import sys
import threading
import time

try:
    import pynvml  # nvidia-ml-py
except ImportError:  # pragma: no cover - machine without NVML's Python binding
    pynvml = None


def main():
    args = sys.argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sys.exit("usage: gpu_busy.py -- COMMAND [ARGS...]")
    samples = []  # (unix seconds, percent)
    stop = threading.Event()

    def sample():
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        while not stop.is_set():
            samples.append((time.time(), pynvml.nvmlDeviceGetUtilizationRates(handle).gpu))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True) if pynvml else None
    if sampler:
        sampler.start()
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stop.set()
    if sampler:
        sampler.join(timeout=2)
    sys.stdout.write(proc.stdout)
    m = re.search(r"timed window \(unix ms\): (\d+) (\d+)", proc.stdout)
    if not pynvml:
        print("gpu busy: unknown (no pynvml)")
    elif not m:
        print("gpu busy: unknown (the command printed no timed window)")
    else:
        start, end = int(m.group(1)) / 1000.0, int(m.group(2)) / 1000.0
        # NVML averages over its own sample period (about 1/6 s): skip the first period.
        inside = [u for t, u in samples if start + 0.2 <= t <= end]
        if inside:
            print(f"gpu busy: {sum(inside) / len(inside):.0f}% of the timed window ({len(inside)} samples, "
                  f"{end - start:.1f} s)")
        else:
            print(f"gpu busy: unknown (no sample inside the {end - start:.2f} s window: time more steps)")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
