#include "lerobot/common/host_allocator.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

extern char** environ;

namespace lerobot {

namespace {

// The user's own malloc settings win: they may be tuning this machine on purpose.
const char* user_malloc_setting() {
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "MALLOC_", 7) == 0) return *e;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return "GLIBC_TUNABLES";
  return nullptr;
}

}  // namespace

HostAllocatorTuning tune_host_allocator() {
  HostAllocatorTuning t;
  const char* choice = std::getenv("LEROBOT_CPP_HOST_ALLOCATOR");
  if (choice && std::strcmp(choice, "default") == 0) {
    t.reason = "LEROBOT_CPP_HOST_ALLOCATOR=default";
    return t;
  }
  if (const char* user = user_malloc_setting()) {
    t.reason = std::string("malloc settings from the environment (") + std::string(user).substr(0, std::strcspn(user, "=")) + ")";
    return t;
  }
#if defined(__GLIBC__)
  constexpr int kMmapThreshold = 32 << 20;  // glibc refuses more (half its 64 MiB arena heap)
  // Never give the heap's top back: a large model's step frees more than any fixed threshold at
  // once (Diffusion's 1 GB of gradients), and the next step would fault it all in again. The
  // process keeps its peak, as PyTorch's caching allocator does on the GPU.
  constexpr int kTrimThreshold = -1;
  constexpr int kTopPad = 64 << 20;
  // Blocks above the threshold (a large model's gradients and optimizer temporaries: Diffusion's
  // 2048-channel U-Net convolutions are 84 MB each) would still be mapped and faulted in again on
  // every step; with no mmap at all they come from the main heap, which is never trimmed.
  t.applied = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1 &&
              mallopt(M_TOP_PAD, kTopPad) == 1 && mallopt(M_MMAP_MAX, 0) == 1;
  t.reason = t.applied ? "glibc malloc: no mmap for large blocks, mmap threshold 32 MiB, no trimming, top pad 64 MiB"
                       : "glibc refused the malloc settings";
#else
  t.reason = "not glibc";
#endif
  return t;
}

}  // namespace lerobot
