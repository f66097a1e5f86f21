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

TensorMap capture_rng_state(int64_t seed);
void save_rng_state(const fs::path& path, int64_t seed);
// Restores torch's generators; throws a checkpoint error naming the file if a key is missing.
void load_rng_state(const fs::path& path);

// MT19937 states as CPython's random.seed(int) and numpy's RandomState(seed) build them
// (exposed for tests).
std::vector<uint32_t> mt19937_init_by_array(const std::vector<uint32_t>& key);
std::vector<uint32_t> mt19937_init_genrand(uint32_t seed);

}  // namespace lerobot
