// Pixel loops shared by the float and the uint8 augmentation kernels (image_kernels.cpp,
// image_kernels_uint8.cpp); internal to datasets/.
#pragma once

#include <algorithm>
#include <cstdint>

// The per-pixel loops are built twice on x86-64, for AVX2 and for the baseline, and the loader
// picks one when it starts (GCC/Clang function multiversioning): 8 floats a step where the CPU has it.
// Not under the sanitizers: their instrumented ifunc resolvers run before the runtime is up.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define LEROBOT_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) && !defined(LEROBOT_NO_CLONES)
#define LEROBOT_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LEROBOT_VECTOR_CLONES
#endif

namespace lerobot::image {

// torchvision's sharpness pass over each plane of a contiguous (C, H, W) image: the border rows and
// columns are copied, each inner pixel becomes inner(ring, mid), with ring the sum of its eight
// neighbours (summed in T's arithmetic: float for float, int for uint8) and mid the pixel.
template <class T, class Inner>
void sharpen_planes(const T* in, T* out, int64_t c, int64_t h, int64_t w, Inner inner) {
  for (int64_t k = 0; k < c; ++k) {
    const T* src = in + k * h * w;
    T* dst = out + k * h * w;
    std::copy(src, src + w, dst);
    std::copy(src + (h - 1) * w, src + h * w, dst + (h - 1) * w);
    for (int64_t y = 1; y + 1 < h; ++y) {
      const T *up = src + (y - 1) * w, *mid = src + y * w, *dn = src + (y + 1) * w;
      T* o = dst + y * w;
      o[0] = mid[0];
      o[w - 1] = mid[w - 1];
      for (int64_t x = 1; x + 1 < w; ++x) {
        const auto ring = up[x - 1] + up[x] + up[x + 1] + mid[x - 1] + mid[x + 1] + dn[x - 1] + dn[x] + dn[x + 1];
        o[x] = inner(float(ring), float(mid[x]));
      }
    }
  }
}

}  // namespace lerobot::image
