// JPEG round trip for the JPEGCompression augmentation, through libjpeg(-turbo) with the settings
// torchvision's encode_jpeg and decode_image use: jpeg_set_defaults (4:2:0 chroma, integer DCT),
// jpeg_set_quality(q, force_baseline), and a default decompression to RGB (fancy upsampling).
#include "lerobot/datasets/image_kernels.h"

#include <torch/torch.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "lerobot/common/error.h"

#ifdef LEROBOT_WITH_JPEG
#include <jpeglib.h>
#include <csetjmp>
#endif

namespace lerobot::image {

#ifdef LEROBOT_WITH_JPEG
namespace {

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_jpeg_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Encodes an interleaved (H, W, C) uint8 image, C = 1 or 3.
std::vector<unsigned char> encode(const uint8_t* hwc, int h, int w, int c, int quality) {
  jpeg_compress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = on_jpeg_error;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
    throw std::runtime_error(std::string("JPEG encode: ") + err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = JDIMENSION(w);
  cinfo.image_height = JDIMENSION(h);
  cinfo.input_components = c;
  cinfo.in_color_space = c == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(hwc + size_t(cinfo.next_scanline) * size_t(w) * size_t(c));
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::vector<unsigned char> out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

// Decodes into an interleaved (H, W, C) buffer with C the encoded image's components.
void decode(const std::vector<unsigned char>& jpeg, uint8_t* hwc, int h, int w, int c) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = on_jpeg_error;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw std::runtime_error(std::string("JPEG decode: ") + err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = c == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_start_decompress(&cinfo);
  if (int(cinfo.output_width) != w || int(cinfo.output_height) != h || int(cinfo.output_components) != c) {
    jpeg_destroy_decompress(&cinfo);
    throw std::runtime_error("JPEG decode: unexpected size");
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = hwc + size_t(cinfo.output_scanline) * size_t(w) * size_t(c);
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
}

}  // namespace

bool jpeg_available() { return true; }

torch::Tensor jpeg_compression(const torch::Tensor& img, int64_t quality) {
  const int64_t c = img.size(-3), h = img.size(-2), w = img.size(-1);
  if (c != 1 && c != 3) throw std::invalid_argument("JPEGCompression needs 1 or 3 channels, got " + std::to_string(c));
  // (N, H, W, C) uint8, rounded as torchvision's (x.clamp(0, 1) * 255).round().
  auto hwc = (img.to(torch::kCPU, torch::kFloat32).reshape({-1, c, h, w}).clamp(0.0, 1.0) * 255.0)
                 .round()
                 .to(torch::kUInt8)
                 .permute({0, 2, 3, 1})
                 .contiguous();
  auto out = torch::empty_like(hwc);
  for (int64_t n = 0; n < hwc.size(0); ++n) {
    const auto bytes = encode(hwc[n].data_ptr<uint8_t>(), int(h), int(w), int(c), int(quality));
    decode(bytes, out[n].data_ptr<uint8_t>(), int(h), int(w), int(c));
  }
  return out.permute({0, 3, 1, 2}).to(img.device(), img.scalar_type()).div_(255.0).reshape(img.sizes());
}

#else

bool jpeg_available() { return false; }

torch::Tensor jpeg_compression(const torch::Tensor&, int64_t) {
  throw_usage("JPEGCompression needs libjpeg, and this build has none", "dataset.image_transforms",
              "install libjpeg-dev (Debian) or libjpeg-turbo and rebuild, or leave JPEGCompression out of tfs");
}

#endif

}  // namespace lerobot::image
