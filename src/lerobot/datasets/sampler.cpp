// Sampler: numpy SeedSequence, torch randperm, episode-aware order, accelerate-style sharding.
#include "lerobot/datasets/sampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"

namespace lerobot {

namespace {
constexpr uint32_t kInitA = 0x43b0d7e5u, kMultA = 0x931e8875u, kInitB = 0x8b51f9ddu, kMultB = 0x58f38dedu;
constexpr uint32_t kMixMultL = 0xca01f9ddu, kMixMultR = 0x4973f715u;
constexpr int kXShift = 16;
constexpr size_t kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t r = kMixMultL * x - kMixMultR * y;
  r ^= r >> kXShift;
  return r;
}
}  // namespace

std::vector<uint32_t> seed_sequence_generate_state(const std::vector<uint64_t>& entropy, size_t n_words) {
  std::vector<uint32_t> words;
  for (uint64_t v : entropy) {
    if (v == 0) {
      words.push_back(0);
      continue;
    }
    while (v > 0) {
      words.push_back(static_cast<uint32_t>(v & 0xffffffffu));
      v >>= 32;
    }
  }
  uint32_t hash_const = kInitA;
  uint32_t pool[kPoolSize];
  for (size_t i = 0; i < kPoolSize; ++i) pool[i] = hashmix(i < words.size() ? words[i] : 0u, hash_const);
  for (size_t s = 0; s < kPoolSize; ++s)
    for (size_t d = 0; d < kPoolSize; ++d)
      if (s != d) pool[d] = mix(pool[d], hashmix(pool[s], hash_const));
  for (size_t s = kPoolSize; s < words.size(); ++s)
    for (size_t d = 0; d < kPoolSize; ++d) pool[d] = mix(pool[d], hashmix(words[s], hash_const));
  std::vector<uint32_t> state(n_words);
  uint32_t hc = kInitB;
  for (size_t i = 0; i < n_words; ++i) {
    uint32_t v = pool[i % kPoolSize];
    v ^= hc;
    hc *= kMultB;
    v *= hc;
    v ^= v >> kXShift;
    state[i] = v;
  }
  return state;
}

uint64_t seed_sequence_u64(const std::vector<uint64_t>& entropy) {
  const auto s = seed_sequence_generate_state(entropy, 2);
  return uint64_t(s[0]) | (uint64_t(s[1]) << 32);
}

std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  torch::Tensor p = torch::randperm(n, gen, torch::TensorOptions().dtype(torch::kInt64));
  return std::vector<int64_t>(p.data_ptr<int64_t>(), p.data_ptr<int64_t>() + n);
}

SamplerState compute_sampler_state(int64_t step, int64_t n, int64_t batch, int64_t world) {
  if (batch <= 0 || world <= 0) throw_usage("batch size and world size must be positive");
  const int64_t per_epoch = batches_per_epoch(n, batch, world);
  SamplerState s;
  if (per_epoch == 0) return s;
  s.epoch = step / per_epoch;
  const int64_t b = step % per_epoch;
  s.start_index = std::min(b * batch * world, n);
  return s;
}

int64_t batches_per_epoch(int64_t n, int64_t batch, int64_t world) {
  const int64_t nb = (n + batch - 1) / batch;
  return (nb + world - 1) / world;
}

EpisodeAwareSampler::EpisodeAwareSampler(const std::vector<std::pair<int64_t, int64_t>>& ranges,
                                         int64_t drop_first, int64_t drop_last, bool shuffle, uint64_t seed)
    : shuffle_(shuffle), seed_(seed) {
  for (auto [from, to] : ranges) {
    const int64_t a = from + drop_first, b = to - drop_last;
    if (a >= b) {
      LOG_WARNING << "episode frames [" << from << ", " << to << ") leave no sample after dropping "
                  << drop_first << " first and " << drop_last << " last frames; skipped";
      continue;
    }
    for (int64_t i = a; i < b; ++i) indices_.push_back(i);
  }
}

std::vector<int64_t> EpisodeAwareSampler::epoch_order(int64_t epoch) const {
  if (!shuffle_) return indices_;
  const auto perm = torch_randperm(size(), seed_sequence_u64({seed_, static_cast<uint64_t>(epoch)}));
  std::vector<int64_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = indices_[perm[i]];
  return out;
}

std::vector<std::vector<int64_t>> consecutive_batches(const std::vector<int64_t>& order, int64_t bs) {
  std::vector<std::vector<int64_t>> out;
  const int64_t n = static_cast<int64_t>(order.size());
  for (int64_t start = 0; start < n; start += bs)
    out.emplace_back(order.begin() + start, order.begin() + std::min(n, start + bs));
  return out;
}

std::vector<std::vector<int64_t>> shard_batches(const std::vector<int64_t>& order, int64_t bs, int64_t world,
                                                int64_t rank) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> initial, to_yield, batch;
  int64_t idx = -1;
  for (auto& chunk : consecutive_batches(order, bs)) {
    ++idx;
    batch = std::move(chunk);
    if (idx < world) initial.insert(initial.end(), batch.begin(), batch.end());
    if (idx % world == rank) to_yield = batch;
    if (idx % world == world - 1 && static_cast<int64_t>(batch.size()) == bs) {
      out.push_back(to_yield);
      to_yield.clear();
    }
  }
  if (initial.empty()) return out;
  if (static_cast<int64_t>(to_yield.size()) == bs) out.push_back(to_yield);
  while (static_cast<int64_t>(initial.size()) < world * bs) {
    std::vector<int64_t> copy = initial;
    initial.insert(initial.end(), copy.begin(), copy.end());
  }
  if (static_cast<int64_t>(batch.size()) == bs) {
    batch.clear();
    ++idx;
  }
  size_t cycle = 0;
  while (idx % world != 0 || !batch.empty()) {
    const size_t end = cycle + bs - batch.size();
    batch.insert(batch.end(), initial.begin() + cycle, initial.begin() + end);
    if (idx % world == rank) out.push_back(batch);
    cycle = end;
    batch.clear();
    ++idx;
  }
  return out;
}

BatchPlan::BatchPlan(EpisodeAwareSampler sampler, int64_t batch_size, int64_t world_size, int64_t rank,
                     int64_t start_step, int64_t start_batch_size, int64_t start_world_size)
    : sampler_(std::move(sampler)), batch_size_(batch_size), world_size_(world_size), rank_(rank) {
  if (batch_size <= 0) throw_usage("batch_size must be positive", "--batch_size");
  if (world_size <= 0 || rank < 0 || rank >= world_size) throw_usage("bad rank/world size");
  if (sampler_.size() == 0) throw_data("the sampler has no frames to sample");
  const SamplerState s =
      compute_sampler_state(start_step, sampler_.size(), start_batch_size > 0 ? start_batch_size : batch_size,
                            start_world_size > 0 ? start_world_size : world_size);
  epoch_ = s.epoch;
  start_index_ = s.start_index;
}

int64_t BatchPlan::batches_per_epoch() const {
  return lerobot::batches_per_epoch(sampler_.size(), batch_size_, world_size_);
}

void BatchPlan::refill() {
  while (pos_ >= pending_.size()) {
    std::vector<int64_t> order = sampler_.epoch_order(epoch_);
    order.erase(order.begin(), order.begin() + std::min<int64_t>(start_index_, order.size()));
    start_index_ = 0;
    pending_ = world_size_ == 1 ? consecutive_batches(order, batch_size_)
                                : shard_batches(order, batch_size_, world_size_, rank_);
    pos_ = 0;
    ++epoch_;
  }
}

std::vector<int64_t> BatchPlan::next() {
  refill();
  return pending_[pos_++];
}

}  // namespace lerobot
