// Image augmentation kernels with fixed parameters, as torchvision.transforms.v2.functional defines
// them for float images in [0, 1] of shape (..., C, H, W) (the *_u8 ones: for uint8 frames). The
// random parameters are drawn in image_transforms.cpp; these functions are deterministic.
#pragma once

#include <torch/types.h>

#include <array>
#include <cstdint>
#include <vector>

namespace lerobot::image {

// ITU-R 601-2 luma (0.2989 R + 0.587 G + 0.114 B), (..., 1, H, W); a 1-channel image is returned as is.
torch::Tensor rgb_to_grayscale(const torch::Tensor& img);

torch::Tensor adjust_brightness(const torch::Tensor& img, double factor);  // img * f, clamped
torch::Tensor adjust_contrast(const torch::Tensor& img, double factor);    // blend with the mean luma
torch::Tensor adjust_saturation(const torch::Tensor& img, double factor);  // blend with the luma image
torch::Tensor adjust_hue(const torch::Tensor& img, double hue_factor);     // hue shift in [-0.5, 0.5]
// Blend with a 3x3 smoothing (1,1,1 / 1,5,1 / 1,1,1)/13; border pixels are kept, as torchvision.
torch::Tensor adjust_sharpness(const torch::Tensor& img, double factor);

// The same four colour kernels and sharpness on uint8 frames, with torchvision v2's integer
// semantics (LeRobot decodes video frames as uint8 and augments them before dividing by 255): the
// luma is floored, each result is clamped to [0, 255] and truncated back to uint8 (hue goes through
// float and back as x * (256 - 1e-3)), sharpness rounds its blur first. affine() takes uint8 frames
// as they are (nearest neighbour copies values).
torch::Tensor adjust_brightness_u8(const torch::Tensor& img, double factor);
torch::Tensor adjust_contrast_u8(const torch::Tensor& img, double factor);
torch::Tensor adjust_saturation_u8(const torch::Tensor& img, double factor);
torch::Tensor adjust_hue_u8(const torch::Tensor& img, double hue_factor);
torch::Tensor adjust_sharpness_u8(const torch::Tensor& img, double factor);

torch::Tensor rgb_to_hsv(const torch::Tensor& img);  // (..., 3, H, W) -> (h, s, v) in [0, 1]
torch::Tensor hsv_to_rgb(const torch::Tensor& hsv);

// torchvision's affine about the image centre: rotation by `angle` degrees (counter-clockwise),
// integer translation in pixels, scale and shear (degrees); nearest-neighbour, outside filled with 0.
torch::Tensor affine(const torch::Tensor& img, double angle, int64_t tx, int64_t ty, double scale, double shear_x,
                     double shear_y);

torch::Tensor adjust_gamma(const torch::Tensor& img, double gamma);  // img ** gamma, clamped
// Averaging along a line through the centre at `angle_deg`; odd kernel size; replicate padding.
torch::Tensor motion_blur(const torch::Tensor& img, int64_t kernel_size, double angle_deg);
// Multiplies by prod_k (1 + (factor_k - 1) exp(-d_k^2 / (2 sigma_k^2))), d_k the distance to centre k
// in coordinates where the image spans [0, 1] on both axes; clamped.
torch::Tensor gaussian_patch_brightness(const torch::Tensor& img, const std::vector<double>& cy,
                                        const std::vector<double>& cx, const std::vector<double>& sigma,
                                        const std::vector<double>& factor);
// Fills rectangles (y, x, height, width in pixels) with `fill`.
struct Hole {
  int64_t y, x, h, w;
};
torch::Tensor coarse_dropout(const torch::Tensor& img, const std::vector<Hole>& holes, double fill);
// img + noise * std / 255, clamped; `noise` is standard normal of img's shape.
torch::Tensor add_gaussian_noise(const torch::Tensor& img, const torch::Tensor& noise, double std_255);

// LeRobot 0.6's PlanckianJitter: red and blue scaled by c_r / c_g and c_b / c_g of the black-body
// coefficients at `kelvin` (3000..15000, linear between the 500 K rows of the table), clamped.
torch::Tensor planckian_jitter(const torch::Tensor& img, int64_t kelvin);
std::array<double, 3> planckian_coefficients(int64_t kelvin);
// LeRobot 0.6's RandomShadow: the columns [x_start, x_start + band_width) scaled by `factor`
// (1 +- opacity), the mask's edges smoothed by an 8x8 block average upsampled bilinearly; clamped.
torch::Tensor random_shadow(const torch::Tensor& img, int64_t x_start, int64_t band_width, double factor);
// LeRobot 0.6's JPEGCompression: each image rounded to uint8, encoded as JPEG at `quality` (1..100)
// and decoded with libjpeg's defaults, as torchvision's encode_jpeg + decode_image. Throws when the
// build has no libjpeg (jpeg_available()).
torch::Tensor jpeg_compression(const torch::Tensor& img, int64_t quality);
bool jpeg_available();

}  // namespace lerobot::image
