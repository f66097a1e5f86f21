"""What the PyTorch peers (peer.py, peer_diffusion.py) share: their common flags, the device set up
as LeRobot's train script sets it, and the timing: warm-up, then `steps` calls of `step`, each
followed by a device synchronisation, with the print-out bench_train_step's readers expect
(ms median/mean/min, samples/s, the timed window for gpu_busy.py, peak memory)."""
import statistics
import time

import torch


def add_common_args(ap, batch_size):
    ap.add_argument("--batch_size", type=int, default=batch_size)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--mixed_precision", default="no", choices=["no", "bf16"])
    ap.add_argument("--state_dim", type=int, default=2)
    ap.add_argument("--action_dim", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")


def prepare_device(a):
    """The parsed flags' device, with LeRobot's CUDA settings (TF32, cuDNN benchmark) and seed 0."""
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    if dev.type == "cuda":  # LeRobot's train script
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)
    return dev


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
