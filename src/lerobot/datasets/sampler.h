// EpisodeAwareSampler (LeRobot datasets/sampler.py) with numpy SeedSequence epoch seeds and torch
// randperm, accelerate's BatchSamplerShard distribution over ranks, and resume positioning.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace lerobot {

// numpy.random.SeedSequence(entropy).generate_state(n_words, uint32) (non-negative ints; each is
// split into little-endian 32-bit words, 0 -> [0]).
std::vector<uint32_t> seed_sequence_generate_state(const std::vector<uint64_t>& entropy, size_t n_words);
// SeedSequence(entropy).generate_state(1, uint64)[0].
uint64_t seed_sequence_u64(const std::vector<uint64_t>& entropy);

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)).
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

struct SamplerState {
  int64_t epoch = 0;
  int64_t start_index = 0;
};
// LeRobot compute_sampler_state(step, len(sampler), batch_size, dp_world_size).
SamplerState compute_sampler_state(int64_t step, int64_t num_samples, int64_t batch_size, int64_t world_size);

class EpisodeAwareSampler {
 public:
  // episode_ranges: [from, to) global frame ranges in episode order.
  EpisodeAwareSampler(const std::vector<std::pair<int64_t, int64_t>>& episode_ranges,
                      int64_t drop_n_first_frames = 0, int64_t drop_n_last_frames = 0,
                      bool shuffle = true, uint64_t seed = 0);
  int64_t size() const { return static_cast<int64_t>(indices_.size()); }
  const std::vector<int64_t>& valid_indices() const { return indices_; }
  // Global frame indices in the order of epoch `epoch` (shuffled with SeedSequence([seed, epoch])).
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  uint64_t seed() const { return seed_; }

 private:
  std::vector<int64_t> indices_;
  bool shuffle_;
  uint64_t seed_;
};

// accelerate BatchSamplerShard(split_batches=False, even_batches=True, drop_last=False) over the
// batches of `order`: the batches this rank sees, in order.
std::vector<std::vector<int64_t>> shard_batches(const std::vector<int64_t>& order, int64_t batch_size,
                                                int64_t world_size, int64_t rank);
// One process: torch's BatchSampler(drop_last=False) over `order`, the last batch short when
// batch_size does not divide it. accelerate leaves a one-process loader unsharded ("no change if no
// multiprocess"), so LeRobot's single-GPU run trains on a short last batch once per epoch; only
// several processes get BatchSamplerShard's padded tail (shard_batches).
std::vector<std::vector<int64_t>> consecutive_batches(const std::vector<int64_t>& order, int64_t batch_size);
// Batches per rank per full epoch: ceil(ceil(N / batch) / world).
int64_t batches_per_epoch(int64_t num_samples, int64_t batch_size, int64_t world_size);

// The endless batch sequence one rank consumes (LeRobot's cycle(dataloader)), starting at a
// training step: epoch and start_index from compute_sampler_state; the resumed epoch continues
// with order[start_index:], later epochs are full. start_batch_size and start_world_size are the
// batch size and process count that trained start_step (a resume with other ones, as LeRobot
// allows: the position comes from the checkpoint's values); 0 means this plan's.
class BatchPlan {
 public:
  BatchPlan(EpisodeAwareSampler sampler, int64_t batch_size, int64_t world_size = 1, int64_t rank = 0,
            int64_t start_step = 0, int64_t start_batch_size = 0, int64_t start_world_size = 0);
  int64_t start_index() const { return start_index_; }
  std::vector<int64_t> next();  // the next batch of global frame indices
  int64_t epoch() const { return epoch_; }
  int64_t batches_per_epoch() const;

 private:
  void refill();
  EpisodeAwareSampler sampler_;
  int64_t batch_size_, world_size_, rank_;
  int64_t epoch_ = 0;
  int64_t start_index_ = 0;
  std::vector<std::vector<int64_t>> pending_;
  size_t pos_ = 0;
};

}  // namespace lerobot
