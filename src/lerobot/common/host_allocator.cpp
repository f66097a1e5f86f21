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
  constexpr int kTrimThreshold = 1 << 30;
  constexpr int kTopPad = 64 << 20;
  t.applied = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1 &&
              mallopt(M_TOP_PAD, kTopPad) == 1;
  t.reason = t.applied ? "glibc malloc: mmap threshold 32 MiB, trim threshold 1 GiB, top pad 64 MiB"
                       : "glibc refused the malloc settings";
#else
  t.reason = "not glibc";
#endif
  return t;
}

}  // namespace lerobot
