// pygame 2.6.1's software draw.polygon / circle / lines / aalines on an RGB image, pixel exact.
// Reimplemented from pygame's src_c/draw.c (the algorithms, not the code) for the PushT camera,
// which gym_pusht renders with pygame. The surface behaves like a 32-bit RGB pygame Surface whose
// clip rectangle is the whole image: colours map exactly and every primitive clips at the edges.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace lerobot::pygame_draw {

using Color = std::array<uint8_t, 3>;

struct Point {
  int x;
  int y;
};

// A view on an RGB image, HWC uint8, width x height pixels. Does not own the pixels.
class Surface {
 public:
  Surface(uint8_t* rgb, int width, int height) : rgb_(rgb), width_(width), height_(height) {}
  int width() const { return width_; }
  int height() const { return height_; }
  uint8_t* data() { return rgb_; }
  const uint8_t* data() const { return rgb_; }
  void fill(Color c);
  bool inside(int x, int y) const { return x >= 0 && x < width_ && y >= 0 && y < height_; }
  Color get(int x, int y) const {
    const uint8_t* p = pixel(x, y);
    return {p[0], p[1], p[2]};
  }
  // pygame's set_at: does nothing outside the surface; returns whether a pixel was written.
  bool set(int x, int y, Color c) {
    if (!inside(x, y)) return false;
    uint8_t* p = pixel(x, y);
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
    return true;
  }
  // Fills row y from x1 to x2 inclusive (either order), clipped to the surface.
  void hline(int x1, int y, int x2, Color c);

 private:
  uint8_t* pixel(int x, int y) const {
    return rgb_ + (static_cast<int64_t>(y) * width_ + x) * 3;
  }
  uint8_t* rgb_;
  int width_;
  int height_;
};

// Where pygame raises (too few points), these draw nothing.

// pygame.draw.polygon(surf, c, points): width 0, filled. Needs 3 or more points.
void polygon(Surface& s, Color c, const std::vector<Point>& points);
// pygame.draw.circle(surf, c, center, radius, 0): filled. A radius below 1 draws nothing.
void circle(Surface& s, Color c, Point center, int radius);
// pygame.draw.lines(surf, c, False, points, width): an open polyline of thick segments, each drawn
// on its own (no joins). Needs 2 or more points; a width below 1 draws nothing.
void lines(Surface& s, Color c, const std::vector<Point>& points, int width);
// pygame.draw.aalines(surf, c, False, points) with blend on: antialiased segments, each pixel
// blended with what the surface already holds, so drawing order matters.
void aalines(Surface& s, Color c, const std::vector<std::array<double, 2>>& points);

}  // namespace lerobot::pygame_draw
