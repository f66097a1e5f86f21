// PNG encode/decode through FFmpeg's png codec (libavcodec), for the image features of LeRobot
// datasets (`dtype: image`: PNG bytes inside the parquet files). Pixels are uint8 RGB (H, W, 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lerobot {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // (H, W, 3) row-major
};

// Decodes PNG bytes to RGB as PIL's Image.convert("RGB") does for camera images: RGBA drops the
// alpha channel, gray (and gray+alpha) repeats the gray value, 16-bit samples keep their high
// byte, palette images are looked up. Throws a data error (no location: callers add the file,
// row and column) when the bytes are not a decodable PNG.
RgbImage decode_png(const uint8_t* data, size_t size);

// Encodes uint8 RGB (H, W, 3) row-major pixels as a PNG (8-bit RGB, zlib `compression_level`
// 0-9; LeRobot's image writer uses 6 for image features).
std::string encode_png(const uint8_t* rgb, int width, int height, int compression_level = 6);

}  // namespace lerobot
