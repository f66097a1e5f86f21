// Host allocator settings for a training process.
//
// The loader's worker threads make several 1-4 MB tensors per sample (a float copy of each camera
// frame, one output per augmentation kernel, the collated batch). With glibc's defaults such blocks
// are handed back to the kernel when freed and come back as fresh pages, each faulted in and zeroed
// on first touch: on 480x640 frames that cost more than the augmentation kernels themselves
// (bench/augment: 710k page faults -> 190k, loader samples/s with augmentation 0.53x -> 0.8x of
// without). tune_host_allocator() keeps freed blocks in the process for reuse, as PyTorch's
// caching allocator does on the GPU.
#pragma once

#include <string>

namespace lerobot {

struct HostAllocatorTuning {
  bool applied = false;
  std::string reason;  // why not, when not applied; what was set, when applied
};

// Raises glibc's mmap threshold to its maximum (32 MiB) and its top pad, turns trimming off, so
// blocks up to 32 MiB are reused from the heap instead of mapped and faulted in again, and turns
// mmap off for larger blocks (M_MMAP_MAX 0: they come from the main heap and are reused too;
// Diffusion's CPU step 8.4-9.4 s -> 5.7 s, bench/train_step). Leaves
// everything alone when the user set malloc tunables themselves (any MALLOC_*_ variable or a
// glibc.malloc tunable in GLIBC_TUNABLES), when LEROBOT_CPP_HOST_ALLOCATOR=default, and on a C
// library other than glibc. Call once, early in main(), before threads start.
HostAllocatorTuning tune_host_allocator();

}  // namespace lerobot
