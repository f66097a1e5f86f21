// rng_state.safetensors: the random generator state saved with every checkpoint (LeRobot's
// utils/random_utils.py key set). Training draws only from torch's generators, which are
// restored exactly; the Python `random` and numpy entries are what those generators hold right
// after LeRobot's set_seed(seed), so Python LeRobot can read the file.
#pragma once

#include <cstdint>

#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"

namespace lerobot {

inline constexpr const char* kRngStateFile = "rng_state.safetensors";

// Seeds torch's CPU (and current CUDA) generator, as LeRobot's set_seed does for torch.
void set_seed(int64_t seed);

// The CUDA generator whose state a run saves and restores: the training device's when it is a GPU
// (cuda:LOCAL_RANK under a launcher, or --policy.device=cuda:1), else cuda:0. LeRobot saves
// torch.cuda.get_rng_state(), the current device's, and accelerate makes each rank's GPU current.
torch::Device rng_cuda_device(const torch::Device& training_device);

// `training_device` picks the CUDA generator (rng_cuda_device); it is saved where CUDA is available.
TensorMap capture_rng_state(int64_t seed, const torch::Device& training_device = torch::kCPU);
void save_rng_state(const fs::path& path, int64_t seed, const torch::Device& training_device = torch::kCPU);
// Restores torch's generators; throws a checkpoint error naming the file if a key is missing.
void load_rng_state(const fs::path& path, const torch::Device& training_device = torch::kCPU);

// torch.random.fork_rng for a run: keeps the state of torch's CPU generator and of the training
// device's CUDA generator and puts it back when it goes. Evaluation and the held-out loss draw random
// numbers (Diffusion's noise and timesteps), and inside this scope they leave the training stream as
// it was: a run resumed from the checkpoint written just before an evaluation goes on with the same
// numbers as the run that evaluated, and every rank stays on one stream while only rank 0 evaluates.
class RngFork {
 public:
  explicit RngFork(const torch::Device& training_device);
  ~RngFork();
  RngFork(const RngFork&) = delete;
  RngFork& operator=(const RngFork&) = delete;

 private:
  torch::Tensor cpu_state_, cuda_state_;
  torch::Device cuda_device_;
};

// MT19937 states as CPython's random.seed(int) and numpy's RandomState(seed) build them
// (exposed for tests).
std::vector<uint32_t> mt19937_init_by_array(const std::vector<uint32_t>& key);
std::vector<uint32_t> mt19937_init_genrand(uint32_t seed);

}  // namespace lerobot
