// A tiny deterministic software rasteriser for the simulated tasks' cameras (RGB, HWC, uint8).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace lerobot {

using Rgb = std::array<uint8_t, 3>;

struct Vec2f {
  float x = 0.0f;
  float y = 0.0f;
};

// A view on a square RGB image of `size` x `size` pixels. Shapes are given in world units of the
// unit square (see vector_env.h); a pixel is filled when its centre lies inside the shape.
class Canvas {
 public:
  Canvas(uint8_t* rgb, int size) : rgb_(rgb), size_(size) {}
  int size() const { return size_; }
  void fill(Rgb c);
  void circle(Vec2f center, float radius, Rgb c);
  // A convex polygon, vertices in either winding order.
  void convex_polygon(const Vec2f* pts, int n, Rgb c);
  // An axis-aligned square centred on `center`, rotated by `angle` radians.
  void square(Vec2f center, float half_side, float angle, Rgb c);
  // A ring (circle outline) of the given thickness, in world units.
  void ring(Vec2f center, float radius, float thickness, Rgb c);

 private:
  void put(int row, int col, Rgb c) {
    uint8_t* p = rgb_ + (static_cast<int64_t>(row) * size_ + col) * 3;
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
  }
  uint8_t* rgb_;
  int size_;
};

// Deterministic random numbers from a seed, identical on every platform (std distributions are
// implementation-defined, so they are not used).
class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next_u64() {  // splitmix64
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  float uniform(float lo, float hi) { return lo + static_cast<float>(uniform()) * (hi - lo); }

 private:
  uint64_t s_;
};

}  // namespace lerobot
