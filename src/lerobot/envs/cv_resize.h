// cv2.resize(..., interpolation=INTER_LINEAR) for 8-bit images, bit for bit, for the PushT env's cameras.
#pragma once

#include <cstdint>

namespace lerobot {

// cv2.resize(src, (dst_w, dst_h)) with the default INTER_LINEAR, for 8-bit HWC images of `channels`
// channels (any count >= 1; 1, 3 and 4 are the ones checked against OpenCV). Reproduces OpenCV 4.x's
// CPU path on x86-64: the 11-bit fixed-point separable bilinear filter, an exact copy when the sizes
// match, and the 2x2 box average OpenCV substitutes for an exact halving of both sides.
// `src` and `dst` must not overlap. Throws std::invalid_argument on non-positive sizes.
void cv_resize_linear_u8(const uint8_t* src, int src_h, int src_w, int channels, uint8_t* dst, int dst_h,
                         int dst_w);

}  // namespace lerobot
