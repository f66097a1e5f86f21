// numpy.random.RandomState's legacy draws (MT19937 seeded with an int), bit for bit, for the PushT env.
#pragma once

#include <cstdint>

namespace lerobot {

// numpy.random.RandomState(seed) for an int seed in [0, 2^32): the same MT19937 stream and the same
// legacy transforms, so seeded resets match gym_pusht exactly.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed);
  // MT19937 genrand_int32 (one raw 32-bit draw).
  uint32_t next_uint32();
  // rs.random_sample() / rs.rand(): a 53-bit double in [0, 1) from two 32-bit draws.
  double random_sample();
  // rs.randint(low, high) with the default dtype int64: uniform in [low, high) by masked rejection.
  // Throws std::invalid_argument when low >= high, as numpy raises ValueError.
  int64_t randint(int64_t low, int64_t high);
  // rs.randn(): legacy polar Box-Muller; the second value of each pair is cached for the next call.
  double randn();

 private:
  uint64_t next_uint64();
  void twist();

  static constexpr int kStateLen = 624;
  uint32_t key_[kStateLen];
  int pos_ = kStateLen;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace lerobot
