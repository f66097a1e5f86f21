// MT19937 with numpy's int seeding, and numpy's legacy random_sample, randint (masked) and gauss.
#include "lerobot/envs/numpy_random.h"

#include <cmath>
#include <stdexcept>

namespace lerobot {

namespace {
constexpr int kShift = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfu;
constexpr uint32_t kUpper = 0x80000000u;
constexpr uint32_t kLower = 0x7fffffffu;

// The smallest all-ones mask covering `max`.
uint64_t covering_mask(uint64_t max) {
  uint64_t m = max;
  for (int s = 1; s < 64; s <<= 1) m |= m >> s;
  return m;
}
}  // namespace

NumpyRandomState::NumpyRandomState(uint32_t seed) {
  // Knuth's multiplier, as in the MT reference init_genrand (numpy's mt19937_seed).
  uint32_t s = seed;
  for (int i = 0; i < kStateLen; ++i) {
    key_[i] = s;
    s = 1812433253u * (s ^ (s >> 30)) + static_cast<uint32_t>(i + 1);
  }
  pos_ = kStateLen;
}

void NumpyRandomState::twist() {
  auto mix = [](uint32_t a, uint32_t b) {
    const uint32_t y = (a & kUpper) | (b & kLower);
    return (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
  };
  int i = 0;
  for (; i < kStateLen - kShift; ++i) key_[i] = key_[i + kShift] ^ mix(key_[i], key_[i + 1]);
  for (; i < kStateLen - 1; ++i) key_[i] = key_[i + kShift - kStateLen] ^ mix(key_[i], key_[i + 1]);
  key_[kStateLen - 1] = key_[kShift - 1] ^ mix(key_[kStateLen - 1], key_[0]);
  pos_ = 0;
}

uint32_t NumpyRandomState::next_uint32() {
  if (pos_ == kStateLen) twist();
  uint32_t y = key_[pos_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t NumpyRandomState::next_uint64() {
  // The first draw is the high word.
  const uint64_t hi = next_uint32();
  const uint64_t lo = next_uint32();
  return (hi << 32) | lo;
}

double NumpyRandomState::random_sample() {
  const int32_t a = static_cast<int32_t>(next_uint32() >> 5);
  const int32_t b = static_cast<int32_t>(next_uint32() >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

int64_t NumpyRandomState::randint(int64_t low, int64_t high) {
  if (low >= high) throw std::invalid_argument("NumpyRandomState::randint: low >= high");
  // Closed range [low, high - 1] as an unsigned offset and span.
  const uint64_t off = static_cast<uint64_t>(low);
  const uint64_t rng = static_cast<uint64_t>(high - 1) - off;
  if (rng == 0) return low;
  uint64_t val;
  if (rng <= 0xFFFFFFFFull) {
    if (rng == 0xFFFFFFFFull) {
      val = next_uint32();
    } else {
      const uint32_t mask = static_cast<uint32_t>(covering_mask(rng));
      uint32_t v;
      while ((v = next_uint32() & mask) > rng) {
      }
      val = v;
    }
  } else if (rng == ~0ull) {
    val = next_uint64();
  } else {
    const uint64_t mask = covering_mask(rng);
    while ((val = next_uint64() & mask) > rng) {
    }
  }
  return static_cast<int64_t>(off + val);
}

double NumpyRandomState::randn() {
  if (has_gauss_) {
    has_gauss_ = false;
    const double v = gauss_;
    gauss_ = 0.0;
    return v;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    // Both squares are rounded before the sum, as in numpy's build: no fused multiply-add here.
    volatile double sq1 = x1 * x1, sq2 = x2 * x2;
    r2 = sq1 + sq2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

}  // namespace lerobot
