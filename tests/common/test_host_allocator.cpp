// tune_host_allocator(): a loader worker's pattern of 1-30 MB blocks (a float copy of a 480x640
// frame, one output per augmentation kernel, the collated batch) is served from memory the process
// already holds instead of fresh pages faulted in on every sample; the user's own malloc settings
// are left alone.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "lerobot/common/host_allocator.h"

namespace lerobot {
namespace {

long thread_minor_faults() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

// One worker thread (its own malloc arena, as the loader's are), `batches` batches of 8 samples:
// per sample a 3x480x640 float frame and three same-size kernel outputs, each freeing the one
// before; per batch the stacked 8-sample batch. Returns the minor page faults of the thread and
// the number of pages it wrote.
std::pair<long, long> loader_pattern_faults(int batches) {
  long faults = 0, pages = 0;
  std::thread worker([&] {
    const size_t frame = size_t(3) * 480 * 640 * sizeof(float), page = 4096;
    const long before = thread_minor_faults();
    for (int b = 0; b < batches; ++b) {
      std::vector<char*> samples;
      for (int s = 0; s < 8; ++s) {
        char* x = static_cast<char*>(std::malloc(frame));
        std::memset(x, 1, frame);
        for (int k = 0; k < 3; ++k) {
          char* y = static_cast<char*>(std::malloc(frame));
          std::memset(y, k, frame);
          std::free(x);
          x = y;
        }
        samples.push_back(x);
        pages += long(4 * frame / page);
      }
      char* batch = static_cast<char*>(std::malloc(8 * frame));
      for (int s = 0; s < 8; ++s) std::memcpy(batch + s * frame, samples[s], frame);
      pages += long(8 * frame / page);
      for (char* x : samples) std::free(x);
      std::free(batch);
    }
    faults = thread_minor_faults() - before;
  });
  worker.join();
  return {faults, pages};
}

// Tunes the allocator, runs `pattern` (10 rounds of the same allocations) and expects the memory
// of the first round to serve the other nine: fewer than a fifth of the written pages faulted in.
void expect_reused(const std::function<std::pair<long, long>()>& pattern) {
  const HostAllocatorTuning t = tune_host_allocator();
  const auto [faults, pages] = pattern();
  std::printf("host allocator: %s; %ld minor faults for %ld pages written\n", t.reason.c_str(), faults, pages);
  ASSERT_TRUE(t.applied) << t.reason;
  EXPECT_LT(faults, pages / 5);
}

// With glibc's defaults this pattern faults in most pages again on every batch.
TEST(HostAllocator, LoaderSizedBlocksAreReusedNotFaultedInAgain) {
  expect_reused([] { return loader_pattern_faults(10); });
}

// A large model's step: gradients and optimizer temporaries above glibc's 32 MiB mmap ceiling
// (Diffusion's 2048-channel U-Net convolutions are 84 MB each), made and freed every step by the
// training thread, which is the main thread (its arena is the heap; glibc maps blocks too large
// for a thread arena's 64 MiB heaps whatever the settings).
std::pair<long, long> large_block_faults(int steps) {
  long pages = 0;
  const size_t sizes[] = {size_t(84) << 20, size_t(48) << 20, size_t(84) << 20};
  const long before = thread_minor_faults();
  for (int s = 0; s < steps; ++s) {
    std::vector<char*> blocks;
    for (size_t n : sizes) {
      char* x = static_cast<char*>(std::malloc(n));
      std::memset(x, s, n);
      blocks.push_back(x);
      pages += long(n / 4096);
    }
    for (char* x : blocks) std::free(x);
  }
  return {thread_minor_faults() - before, pages};
}

// Mapped blocks (glibc's default above 32 MiB) fault in every page on every step.
TEST(HostAllocator, BlocksAboveTheMmapCeilingAreReusedToo) {
  expect_reused([] { return large_block_faults(10); });
}

TEST(HostAllocator, TheUsersMallocSettingsWin) {
  ASSERT_EQ(::setenv("MALLOC_ARENA_MAX", "2", 1), 0);
  HostAllocatorTuning t = tune_host_allocator();
  ::unsetenv("MALLOC_ARENA_MAX");
  EXPECT_FALSE(t.applied);
  EXPECT_NE(t.reason.find("MALLOC_ARENA_MAX"), std::string::npos) << t.reason;

  ASSERT_EQ(::setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=100", 1), 0);
  t = tune_host_allocator();
  ::unsetenv("GLIBC_TUNABLES");
  EXPECT_FALSE(t.applied);
  EXPECT_NE(t.reason.find("GLIBC_TUNABLES"), std::string::npos) << t.reason;

  ASSERT_EQ(::setenv("LEROBOT_CPP_HOST_ALLOCATOR", "default", 1), 0);
  t = tune_host_allocator();
  ::unsetenv("LEROBOT_CPP_HOST_ALLOCATOR");
  EXPECT_FALSE(t.applied);

  EXPECT_TRUE(tune_host_allocator().applied);
}

}  // namespace
}  // namespace lerobot
