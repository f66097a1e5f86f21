// cv2.line and cv2.drawMarker(MARKER_CROSS) with the default LINE_8, for 8-bit images, pixel for
// pixel: gym_pusht marks the last action on its rendered view (the evaluation videos) with them.
#pragma once

#include <cstdint>

namespace lerobot {

// An 8-bit image of `channels` interleaved channels (HWC), `height` rows of `width` pixels.
struct CvImageU8 {
  uint8_t* data;
  int height, width, channels;
};

// cv2.line(img, (x0, y0), (x1, y1), color, thickness) with lineType LINE_8 and shift 0, as OpenCV
// 4.x draws it: thickness 0 or 1 is the 8-connected Bresenham line, clipped to the image; thicker
// lines are a filled quadrilateral (16-bit fixed point, its edges drawn with OpenCV's fixed-point
// line) and a filled midpoint circle at each end. `color` holds `channels` bytes. Thickness must be
// in [0, 32767], as OpenCV asserts (std::invalid_argument otherwise).
void cv_line(CvImageU8 img, int x0, int y0, int x1, int y1, const uint8_t* color, int thickness);

// cv2.drawMarker(img, (x, y), color, markerType=MARKER_CROSS, markerSize, thickness): a horizontal
// and then a vertical cv_line of half-length markerSize / 2 (integer division) through (x, y).
void cv_draw_marker_cross(CvImageU8 img, int x, int y, const uint8_t* color, int marker_size, int thickness);

}  // namespace lerobot
