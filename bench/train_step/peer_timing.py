"""Timing shared by the PyTorch peers (peer.py, peer_diffusion.py): warm-up, then `steps` calls
of `step`, each followed by a device synchronisation, and the print-out bench_train_step's
readers expect (ms median/mean/min, samples/s, the timed window for gpu_busy.py, peak memory)."""
import statistics
import time

import torch


def time_and_report(step, device, steps, warmup, batch_size, unit="step", per_sample=True):
    def wait():
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(warmup):
        step()
    wait()
    ms = []
    start = time.perf_counter()
    window_start = time.time()
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        wait()
        ms.append((time.perf_counter() - t0) * 1e3)
    total = (time.perf_counter() - start) * 1e3
    window_end = time.time()
    print(f"ms/{unit}: median {statistics.median(ms):.2f}  mean {total / steps:.2f}  min {min(ms):.2f}  "
          f"({steps} {unit}s after {warmup} warm-up)")
    if per_sample:
        print(f"samples/s: {1000.0 * batch_size / statistics.median(ms):.1f}")
    print(f"timed window (unix ms): {int(window_start * 1000)} {int(window_end * 1000)}")
    if device.type == "cuda":
        print(f"peak device memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB allocated")
