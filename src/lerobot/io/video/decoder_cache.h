// DecoderCache: a thread-safe LRU pool of open VideoDecoders keyed by file path.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "lerobot/io/video/video_decoder.h"

namespace lerobot {

struct DecoderCacheOptions {
  size_t max_decoders = 64;                // open decoders in all (idle + leased)
  size_t max_bytes = size_t(1) << 30;      // sum of VideoDecoder::memory_estimate()
  DecoderOptions decoder;                  // how new decoders are opened
};

// Hands out decoders one thread at a time: acquire(path) returns a Lease that owns a decoder
// until it is destroyed, then the decoder goes back to the pool (keeping its decode position,
// so sequential lookups continue without a seek). Several leases on one path open several
// decoders. When the pool is over max_decoders or max_bytes, the least recently used idle
// decoders are closed (leased ones never are). The cache must outlive its leases.
class DecoderCache {
 public:
  explicit DecoderCache(DecoderCacheOptions options = {});
  ~DecoderCache();
  DecoderCache(const DecoderCache&) = delete;
  DecoderCache& operator=(const DecoderCache&) = delete;

  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    VideoDecoder& operator*() const { return *decoder_; }
    VideoDecoder* operator->() const { return decoder_.get(); }
    VideoDecoder* get() const { return decoder_.get(); }

   private:
    friend class DecoderCache;
    Lease(DecoderCache* cache, std::unique_ptr<VideoDecoder> decoder);
    void release();
    DecoderCache* cache_ = nullptr;
    std::unique_ptr<VideoDecoder> decoder_;
  };

  // Reuses an idle decoder of `path` or opens one (throws lerobot::Error if it cannot).
  Lease acquire(const std::string& path);

  size_t open_count() const;   // idle + leased
  size_t idle_count() const;
  size_t bytes() const;        // estimated memory of all open decoders
  void clear_idle();           // closes every idle decoder

 private:
  void give_back(std::unique_ptr<VideoDecoder> decoder);
  void evict_locked(std::list<std::unique_ptr<VideoDecoder>>& doomed);

  DecoderCacheOptions options_;
  mutable std::mutex mutex_;
  std::list<std::unique_ptr<VideoDecoder>> idle_;  // front = most recently returned
  size_t leased_ = 0;
  size_t bytes_ = 0;
};

}  // namespace lerobot
