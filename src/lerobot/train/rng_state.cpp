// Capture and restore of generator state (see rng_state.h).
#include "lerobot/train/rng_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "lerobot/common/error.h"

namespace lerobot {

std::vector<uint32_t> mt19937_init_genrand(uint32_t seed) {
  std::vector<uint32_t> mt(624);
  mt[0] = seed;
  for (uint32_t i = 1; i < 624; ++i) mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i;
  return mt;
}

std::vector<uint32_t> mt19937_init_by_array(const std::vector<uint32_t>& key) {
  std::vector<uint32_t> mt = mt19937_init_genrand(19650218u);
  const size_t n = 624, len = std::max<size_t>(key.size(), 1);
  size_t i = 1, j = 0;
  for (size_t k = std::max(n, len); k; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + (key.empty() ? 0 : key[j]) + static_cast<uint32_t>(j);
    if (++i >= n) {
      mt[0] = mt[n - 1];
      i = 1;
    }
    if (++j >= len) j = 0;
  }
  for (size_t k = n - 1; k; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    if (++i >= n) {
      mt[0] = mt[n - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000u;
  return mt;
}

void set_seed(int64_t seed) {
  torch::manual_seed(static_cast<uint64_t>(seed));  // CPU and every CUDA device
}

torch::Device rng_cuda_device(const torch::Device& training_device) {
  return training_device.is_cuda() && training_device.has_index() ? training_device : torch::Device(torch::kCUDA, 0);
}

namespace {

torch::Tensor generator_state(at::Generator gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void set_generator_state(at::Generator gen, const torch::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

at::Generator cuda_generator(const torch::Device& training_device) {
  return at::globalContext().defaultGenerator(rng_cuda_device(training_device));
}

}  // namespace

RngFork::RngFork(const torch::Device& training_device) : cuda_device_(rng_cuda_device(training_device)) {
  cpu_state_ = generator_state(at::detail::getDefaultCPUGenerator());
  if (torch::cuda::is_available()) cuda_state_ = generator_state(cuda_generator(cuda_device_));
}

RngFork::~RngFork() {
  set_generator_state(at::detail::getDefaultCPUGenerator(), cpu_state_);
  if (cuda_state_.defined()) set_generator_state(cuda_generator(cuda_device_), cuda_state_);
}

TensorMap capture_rng_state(int64_t seed, const torch::Device& training_device) {
  TensorMap out;
  // CPython: random.seed(n) feeds the 32-bit words of |n| to init_by_array; state = 624 words + index.
  const uint64_t useed = static_cast<uint64_t>(seed < 0 ? -seed : seed);
  std::vector<uint32_t> key{static_cast<uint32_t>(useed & 0xffffffffu)};
  if (useed >> 32) key.push_back(static_cast<uint32_t>(useed >> 32));
  const auto py = mt19937_init_by_array(key);
  auto py_state = torch::empty({625}, torch::kInt64);
  for (int i = 0; i < 624; ++i) py_state[i] = static_cast<int64_t>(py[i]);
  py_state[624] = 624;
  out["py_rng_version"] = torch::tensor({int64_t{3}});
  out["py_rng_state"] = py_state;
  // numpy: np.random.seed(n) with a 32-bit n uses init_genrand(n); position 624.
  const auto np = mt19937_init_genrand(static_cast<uint32_t>(seed));
  auto np_state = torch::empty({624}, torch::kInt64);
  for (int i = 0; i < 624; ++i) np_state[i] = static_cast<int64_t>(np[i]);
  out["np_rng_state_values"] = np_state;
  out["np_rng_state_index"] = torch::tensor({int64_t{624}});
  out["np_rng_has_gauss"] = torch::tensor({int64_t{0}});
  out["np_rng_cached_gaussian"] = torch::tensor({0.0f});
  out["torch_rng_state"] = generator_state(at::detail::getDefaultCPUGenerator());
  // The CUDA generator state is only meaningful on GPU runs; saved for LeRobot's loader.
  if (torch::cuda::is_available()) out["torch_cuda_rng_state"] = generator_state(cuda_generator(training_device));
  return out;
}

void save_rng_state(const fs::path& path, int64_t seed, const torch::Device& training_device) {
  save_safetensors(path, capture_rng_state(seed, training_device));
}

void load_rng_state(const fs::path& path, const torch::Device& training_device) {
  const TensorMap state = load_safetensors(path);
  auto it = state.find("torch_rng_state");
  if (it == state.end())
    throw_checkpoint("torch_rng_state is missing", path.string(), "the checkpoint is incomplete; resume from another one");
  set_generator_state(at::detail::getDefaultCPUGenerator(), it->second);
  auto cuda = state.find("torch_cuda_rng_state");
  if (cuda != state.end() && torch::cuda::is_available())
    set_generator_state(cuda_generator(training_device), cuda->second);
}

}  // namespace lerobot
