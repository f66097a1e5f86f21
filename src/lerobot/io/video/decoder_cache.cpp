// DecoderCache: LRU pool of idle decoders plus leases that return them on destruction.
#include "lerobot/io/video/decoder_cache.h"

#include <utility>

namespace lerobot {

DecoderCache::Lease::Lease(DecoderCache* cache, std::unique_ptr<VideoDecoder> decoder)
    : cache_(cache), decoder_(std::move(decoder)) {}

DecoderCache::Lease::Lease(Lease&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)), decoder_(std::move(other.decoder_)) {}

DecoderCache::Lease& DecoderCache::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    cache_ = std::exchange(other.cache_, nullptr);
    decoder_ = std::move(other.decoder_);
  }
  return *this;
}

DecoderCache::Lease::~Lease() { release(); }

void DecoderCache::Lease::release() {
  if (cache_ && decoder_) cache_->give_back(std::move(decoder_));
  cache_ = nullptr;
}

DecoderCache::DecoderCache(DecoderCacheOptions options) : options_(options) {}

DecoderCache::~DecoderCache() = default;

DecoderCache::Lease DecoderCache::acquire(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if ((*it)->path() == path) {
        std::unique_ptr<VideoDecoder> d = std::move(*it);
        idle_.erase(it);
        ++leased_;
        return Lease(this, std::move(d));
      }
    }
  }
  // Open outside the lock: probing a file takes milliseconds and may throw.
  auto decoder = std::make_unique<VideoDecoder>(path, options_.decoder);
  std::list<std::unique_ptr<VideoDecoder>> doomed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++leased_;
    bytes_ += decoder->memory_estimate();
    evict_locked(doomed);
  }
  return Lease(this, std::move(decoder));  // `doomed` closes after the lock is released
}

void DecoderCache::give_back(std::unique_ptr<VideoDecoder> decoder) {
  std::list<std::unique_ptr<VideoDecoder>> doomed;
  std::lock_guard<std::mutex> lock(mutex_);
  --leased_;
  idle_.push_front(std::move(decoder));
  evict_locked(doomed);
}

void DecoderCache::evict_locked(std::list<std::unique_ptr<VideoDecoder>>& doomed) {
  while (!idle_.empty() &&
         (idle_.size() + leased_ > options_.max_decoders || bytes_ > options_.max_bytes)) {
    bytes_ -= idle_.back()->memory_estimate();
    doomed.splice(doomed.end(), idle_, std::prev(idle_.end()));
  }
}

size_t DecoderCache::open_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size() + leased_;
}

size_t DecoderCache::idle_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size();
}

size_t DecoderCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

void DecoderCache::clear_idle() {
  std::list<std::unique_ptr<VideoDecoder>> doomed;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& d : idle_) bytes_ -= d->memory_estimate();
  doomed.swap(idle_);
}

}  // namespace lerobot
