// Tests for DecoderCache: reuse per path, LRU eviction by count and bytes, use from many threads.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/io/video/decoder_cache.h"
#include "lerobot/io/video/frame_lookup.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

namespace fs = std::filesystem;
const std::string kFixture =
    std::string(LEROBOT_FIXTURES_DIR) + "/video/h264-640x480-10fps-93frames.mp4";

// Several distinct paths to the same file (symlinks), so the cache sees several videos.
struct FixtureLinks {
  fs::path dir;
  std::vector<std::string> paths;
  explicit FixtureLinks(int n) {
    dir = lerobot::testing::fresh_temp_dir("video_cache");
    for (int i = 0; i < n; ++i) {
      fs::path p = dir / ("cam" + std::to_string(i) + ".mp4");
      fs::create_symlink(kFixture, p);
      paths.push_back(p.string());
    }
  }
  ~FixtureLinks() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

TEST(DecoderCache, ReusesIdleDecoderAndKeepsPosition) {
  DecoderCache cache;
  VideoDecoder* first = nullptr;
  {
    DecoderCache::Lease lease = cache.acquire(kFixture);
    first = lease.get();
    decode_frames_at(*lease, {2.0});
    EXPECT_EQ(cache.open_count(), 1u);
    EXPECT_EQ(cache.idle_count(), 0u);
  }
  EXPECT_EQ(cache.idle_count(), 1u);
  DecoderCache::Lease again = cache.acquire(kFixture);
  EXPECT_EQ(again.get(), first);
  int64_t seeks = again->seek_count();
  decode_frames_at(*again, {2.1});  // just ahead: no new seek
  EXPECT_EQ(again->seek_count(), seeks);
  // A second concurrent lease on the same path opens a second decoder.
  DecoderCache::Lease other = cache.acquire(kFixture);
  EXPECT_NE(other.get(), again.get());
  EXPECT_EQ(cache.open_count(), 2u);
  EXPECT_GT(cache.bytes(), 0u);
}

TEST(DecoderCache, EvictsLeastRecentlyUsedByCount) {
  FixtureLinks links(3);
  const std::vector<std::string>& paths = links.paths;
  DecoderCacheOptions opt;
  opt.max_decoders = 2;
  DecoderCache cache(opt);
  VideoDecoder* d0 = nullptr;
  { d0 = cache.acquire(paths[0]).get(); }
  { cache.acquire(paths[1]); }
  { cache.acquire(paths[0]); }  // paths[0] becomes most recent
  { cache.acquire(paths[2]); }  // evicts paths[1]
  EXPECT_EQ(cache.open_count(), 2u);
  DecoderCache::Lease l0 = cache.acquire(paths[0]);
  EXPECT_EQ(l0.get(), d0);  // still cached
  EXPECT_EQ(cache.idle_count(), 1u);
  cache.clear_idle();
  EXPECT_EQ(cache.open_count(), 1u);
}

TEST(DecoderCache, EvictsByBytes) {
  FixtureLinks links(3);
  const std::vector<std::string>& paths = links.paths;
  DecoderCacheOptions opt;
  opt.max_bytes = 1;  // every idle decoder is over budget
  DecoderCache cache(opt);
  { cache.acquire(paths[0]); }
  EXPECT_EQ(cache.idle_count(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  DecoderCache::Lease held = cache.acquire(paths[1]);  // leased decoders are never evicted
  EXPECT_EQ(cache.open_count(), 1u);
}

TEST(DecoderCache, ManyThreadsGetConsistentFrames) {
  FixtureLinks links(2);
  const std::vector<std::string>& paths = links.paths;
  DecoderCacheOptions opt;
  opt.max_decoders = 3;
  DecoderCache cache(opt);
  std::vector<RgbFrame> ref;
  {
    VideoDecoder d(kFixture);
    ref = decode_frames_at(d, {0.5, 1.0, 1.5, 2.0});
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 4; ++it) {
        DecoderCache::Lease lease = cache.acquire(paths[(t + it) % 2]);
        size_t q = size_t(t + it) % 4;
        std::vector<RgbFrame> f = decode_frames_at(*lease, {0.5 * double(q + 1)});
        if (f[0].data != ref[q].data) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  EXPECT_LE(cache.open_count(), 4u);
  EXPECT_LE(cache.idle_count(), 3u);
}

TEST(DecoderCache, MissingFileThrowsAndLeavesCacheEmpty) {
  DecoderCache cache;
  EXPECT_THROW(cache.acquire("/nonexistent/episode.mp4"), Error);
  EXPECT_EQ(cache.open_count(), 0u);
}

}  // namespace
}  // namespace lerobot
