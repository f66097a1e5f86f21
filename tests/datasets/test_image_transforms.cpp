// Image augmentation (#18): each kernel with fixed parameters against torchvision's definition
// written out per pixel (within 1/255) on a real 640x480 camera frame; parameter draws and
// RandomSubsetApply's subset draw against their distributions; config from flags, YAML and
// LeRobot's JSON; bad entries refused with the key named; the loader's augmentation.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "lerobot/common/config/flags.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/data_loader.h"
#include "lerobot/datasets/dataset_config.h"
#include "lerobot/datasets/image_kernels.h"
#include "lerobot/datasets/image_transforms.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/video_decoder.h"
#include "dataset_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;
constexpr double kTol = 1.0 / 255.0;

// A 96x128 crop of frame 40 of the real H.264 fixture, float (3, H, W) in [0, 1].
torch::Tensor real_frame() {
  static torch::Tensor frame = [] {
    VideoDecoder d(std::string(LEROBOT_FIXTURES_DIR) + "/video/h264-640x480-10fps-93frames.mp4");
    auto f = decode_frames_at(d, {4.0}).at(0);
    auto t = torch::from_blob(f.data.data(), {3, f.height, f.width}, torch::kUInt8).clone();
    return t.slice(1, 200, 296).slice(2, 300, 428).to(torch::kFloat32).div(255.0).contiguous();
  }();
  return frame;
}

using Px = std::array<double, 3>;
Px px(const torch::Tensor& img, int64_t y, int64_t x) {
  auto a = img.accessor<float, 3>();
  return {a[0][y][x], a[1][y][x], a[2][y][x]};
}
double clamp01(double v) { return std::min(1.0, std::max(0.0, v)); }
double luma(const Px& p) { return 0.2989 * p[0] + 0.587 * p[1] + 0.114 * p[2]; }

// Builds the reference image pixel by pixel and compares it with `got`.
template <class F>
void expect_per_pixel(const torch::Tensor& got, const torch::Tensor& img, F ref, const std::string& what) {
  ASSERT_EQ(got.sizes(), img.sizes()) << what;
  const int64_t h = img.size(1), w = img.size(2);
  double worst = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const Px want = ref(y, x), have = px(got, y, x);
      for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(want[c] - have[c]));
    }
  EXPECT_LE(worst, kTol) << what;
}

// Raw tensor files exchanged with the Python side (torch.from_file / numpy tofile).
void write_raw(const std::string& path, const torch::Tensor& t) {
  const auto c = t.contiguous();
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(c.data_ptr()), std::streamsize(c.nbytes()));
}

torch::Tensor read_raw(const std::string& path, std::vector<int64_t> shape, torch::ScalarType dtype) {
  auto t = torch::empty(shape, dtype);
  std::ifstream f(path, std::ios::binary);
  f.read(static_cast<char*>(t.data_ptr()), std::streamsize(t.nbytes()));
  EXPECT_EQ(f.gcount(), std::streamsize(t.nbytes())) << "torchvision's output is short";
  return t;
}

// "x = torch.from_file(...)" of `img`'s shape and dtype name, for the Python side.
std::string python_load(const std::string& path, const torch::Tensor& img, const std::string& dtype) {
  return "x = torch.from_file(\"" + path + "\", size=" + std::to_string(img.numel()) + ", dtype=torch." + dtype + ")" +
         ".view(" + std::to_string(img.size(0)) + ", " + std::to_string(img.size(1)) + ", " + std::to_string(img.size(2)) +
         ")\n";
}

TEST(ImageKernels, ColorAdjustmentsMatchTorchvisionFormulas) {
  const auto img = real_frame();
  const int64_t h = img.size(1), w = img.size(2);
  expect_per_pixel(image::adjust_brightness(img, 1.17), img, [&](int64_t y, int64_t x) {
    Px p = px(img, y, x);
    return Px{clamp01(1.17 * p[0]), clamp01(1.17 * p[1]), clamp01(1.17 * p[2])};
  }, "brightness");
  double mean = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) mean += luma(px(img, y, x));
  mean /= double(h * w);
  expect_per_pixel(image::adjust_contrast(img, 0.83), img, [&](int64_t y, int64_t x) {
    Px p = px(img, y, x);
    Px o;
    for (int c = 0; c < 3; ++c) o[c] = clamp01(0.83 * p[c] + 0.17 * mean);
    return o;
  }, "contrast");
  expect_per_pixel(image::adjust_saturation(img, 1.4), img, [&](int64_t y, int64_t x) {
    Px p = px(img, y, x);
    const double g = luma(p);
    Px o;
    for (int c = 0; c < 3; ++c) o[c] = clamp01(1.4 * p[c] - 0.4 * g);
    return o;
  }, "saturation");
  // Hue: the textbook RGB -> HSV -> RGB round trip with the hue shifted (Python's colorsys).
  for (double shift : {0.04, -0.05, 0.3}) {
    expect_per_pixel(image::adjust_hue(img, shift), img, [&](int64_t y, int64_t x) {
      Px p = px(img, y, x);
      const double mx = std::max({p[0], p[1], p[2]}), mn = std::min({p[0], p[1], p[2]});
      if (mx == mn) return p;
      const double s = (mx - mn) / mx, v = mx;
      const double rc = (mx - p[0]) / (mx - mn), gc = (mx - p[1]) / (mx - mn), bc = (mx - p[2]) / (mx - mn);
      double hh = p[0] == mx ? bc - gc : p[1] == mx ? 2.0 + rc - bc : 4.0 + gc - rc;
      hh = std::fmod(hh / 6.0 + 1.0, 1.0);
      hh = hh + shift - std::floor(hh + shift);
      const int i = int(std::floor(hh * 6.0)) % 6;
      const double f = hh * 6.0 - std::floor(hh * 6.0);
      const double pp = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
      switch (i) {
        case 0: return Px{v, t, pp};
        case 1: return Px{q, v, pp};
        case 2: return Px{pp, v, t};
        case 3: return Px{pp, q, v};
        case 4: return Px{t, pp, v};
        default: return Px{v, pp, q};
      }
    }, "hue " + std::to_string(shift));
  }
  expect_per_pixel(image::adjust_gamma(img, 1.7), img, [&](int64_t y, int64_t x) {
    Px p = px(img, y, x);
    return Px{std::pow(p[0], 1.7), std::pow(p[1], 1.7), std::pow(p[2], 1.7)};
  }, "gamma");
  // The kernels change the frame (a no-op kernel would pass a loose tolerance on a flat image).
  EXPECT_GT((image::adjust_hue(img, 0.3) - img).abs().max().item<double>(), 0.1);
}

TEST(ImageKernels, SharpnessBlendsWithThe3x3SmoothingInsideTheBorder) {
  const auto img = real_frame();
  const int64_t h = img.size(1), w = img.size(2);
  for (double f : {0.0, 0.5, 1.8}) {
    expect_per_pixel(image::adjust_sharpness(img, f), img, [&](int64_t y, int64_t x) {
      Px p = px(img, y, x);
      if (y == 0 || x == 0 || y == h - 1 || x == w - 1) return p;  // border kept
      Px blur{0, 0, 0};
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          Px q = px(img, y + dy, x + dx);
          const double k = (dy == 0 && dx == 0) ? 5.0 / 13.0 : 1.0 / 13.0;
          for (int c = 0; c < 3; ++c) blur[c] += k * q[c];
        }
      Px o;
      for (int c = 0; c < 3; ++c) o[c] = clamp01(f * p[c] + (1 - f) * blur[c]);
      return o;
    }, "sharpness " + std::to_string(f));
  }
}

TEST(ImageKernels, AffineMapsEachOutputPixelToItsRotatedSource) {
  const auto img = real_frame();
  const int64_t h = img.size(1), w = img.size(2);
  const double angle = 4.0, scale = 1.05;
  const int64_t tx = 5, ty = -3;
  auto got = image::affine(img, angle, tx, ty, scale, 0.0, 0.0);
  // Output pixel (x, y), centred coordinates, undo the translation, rotate back and unscale;
  // the nearest source pixel or 0 outside (F.affine's angle turns the picture clockwise on screen).
  const double r = angle * M_PI / 180.0;
  int64_t mismatched = 0, outside = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const double ox = x - (w - 1) * 0.5 - tx, oy = y - (h - 1) * 0.5 - ty;
      const double sx = (std::cos(r) * ox + std::sin(r) * oy) / scale + (w - 1) * 0.5;
      const double sy = (-std::sin(r) * ox + std::cos(r) * oy) / scale + (h - 1) * 0.5;
      const int64_t ix = int64_t(std::nearbyint(sx)), iy = int64_t(std::nearbyint(sy));
      Px want{0, 0, 0};
      if (ix >= 0 && iy >= 0 && ix < w && iy < h) want = px(img, iy, ix);
      else ++outside;
      const Px have = px(got, y, x);
      // A source exactly between two pixels may round either way in float32: allow a few.
      if (std::abs(want[0] - have[0]) > kTol || std::abs(want[1] - have[1]) > kTol) ++mismatched;
    }
  EXPECT_LE(mismatched, h * w / 500) << "pixels off the nearest-neighbour source";
  EXPECT_GT(outside, 0);  // the rotation uncovers corners, filled with 0
  // Clockwise: a dot right of the centre of a 9x9 image lands below it after +90 degrees.
  auto dot = torch::zeros({3, 9, 9});
  dot.index_put_({torch::indexing::Slice(), 4, 7}, 1.0);
  auto turned = image::affine(dot, 90.0, 0, 0, 1.0, 0.0, 0.0);
  EXPECT_EQ(turned[0][7][4].item<float>(), 1.0f);
  EXPECT_EQ(turned.sum().item<float>(), 3.0f);
}

TEST(ImageKernels, MotionBlurAveragesAlongTheLine) {
  const auto img = real_frame();
  const int64_t h = img.size(1), w = img.size(2);
  // 0 degrees: a horizontal 5-tap box with replicated edges.
  expect_per_pixel(image::motion_blur(img, 5, 0.0), img, [&](int64_t y, int64_t x) {
    Px o{0, 0, 0};
    for (int64_t d = -2; d <= 2; ++d) {
      Px q = px(img, y, std::min(w - 1, std::max<int64_t>(0, x + d)));
      for (int c = 0; c < 3; ++c) o[c] += q[c] / 5.0;
    }
    return o;
  }, "motion blur 0");
  expect_per_pixel(image::motion_blur(img, 3, 90.0), img, [&](int64_t y, int64_t x) {
    Px o{0, 0, 0};
    for (int64_t d = -1; d <= 1; ++d) {
      Px q = px(img, std::min(h - 1, std::max<int64_t>(0, y + d)), x);
      for (int c = 0; c < 3; ++c) o[c] += q[c] / 3.0;
    }
    return o;
  }, "motion blur 90");
}

TEST(ImageKernels, PatchBrightnessAndDropoutMatchLeRobotsDefinitions) {
  const auto img = real_frame();
  const int64_t h = img.size(1), w = img.size(2);
  const std::vector<double> cy{0.3, 0.8}, cx{0.5, 0.1}, sg{0.1, 0.2}, fc{1.5, 0.6};
  expect_per_pixel(image::gaussian_patch_brightness(img, cy, cx, sg, fc), img, [&](int64_t y, int64_t x) {
    const double fy = double(y) / double(h - 1), fx = double(x) / double(w - 1);  // linspace(0, 1)
    double m = 1.0;
    for (int k = 0; k < 2; ++k)
      m *= 1.0 + (fc[k] - 1.0) * std::exp(-((fy - cy[k]) * (fy - cy[k]) + (fx - cx[k]) * (fx - cx[k])) / (2 * sg[k] * sg[k]));
    Px p = px(img, y, x);
    return Px{clamp01(p[0] * m), clamp01(p[1] * m), clamp01(p[2] * m)};
  }, "gaussian patches");
  auto dropped = image::coarse_dropout(img, {{10, 20, 5, 7}, {0, 0, 2, 3}}, 0.25);
  expect_per_pixel(dropped, img, [&](int64_t y, int64_t x) {
    const bool in = (y >= 10 && y < 15 && x >= 20 && x < 27) || (y < 2 && x < 3);
    return in ? Px{0.25, 0.25, 0.25} : px(img, y, x);
  }, "coarse dropout");
  // The transform's holes stay inside the frame and are 1..7 % of its sides.
  auto drop = make_image_transform("CoarseDropout", {{"max_holes", 3}, {"fill_value", 1.0}}, "t");
  TransformRng rng(11);
  for (int i = 0; i < 200; ++i) {
    auto p = drop->sample(rng, h, w);
    ASSERT_GE(p.at("n"), 1.0);
    ASSERT_LE(p.at("n"), 3.0);
    ASSERT_LE(p.at("hf0"), 0.07);
    auto out = drop->apply(img, p);
    ASSERT_EQ(out.sizes(), img.sizes());
    ASSERT_GT((out == 1.0f).sum().item<int64_t>(), (img == 1.0f).sum().item<int64_t>());  // holes filled
  }
}

// The kernels against torchvision itself (Debian's python3-torchvision, run at test time) on the
// real frame: colour, sharpness, affine with shear and the JPEG round trip.
TEST(ImageKernels, MatchTorchvisionItselfOnTheRealFrame) {
  const auto img = real_frame();
  TempDir dir("tv_reference");
  const std::string in = (dir.path / "in.f32").string(), out = (dir.path / "out.f32").string();
  write_raw(in, img);
  run_python(
      "import torch\n"
      "import torchvision.transforms.functional as F\n"
      "from torchvision.io import encode_jpeg, decode_image\n"
      "from torchvision.transforms import InterpolationMode\n"
      + python_load(in, img, "float32") +
      "o = [F.adjust_brightness(x, 1.17), F.adjust_contrast(x, 0.83), F.adjust_saturation(x, 1.4),\n"
      "     F.adjust_hue(x, 0.04), F.adjust_hue(x, -0.3), F.adjust_sharpness(x, 0.5), F.adjust_sharpness(x, 1.8),\n"
      "     F.affine(x, angle=4.0, translate=[5, -3], scale=1.05, shear=[2.0, -3.0], interpolation=InterpolationMode.NEAREST)]\n"
      "u = (x.clamp(0, 1) * 255).round().to(torch.uint8)\n"
      "o += [decode_image(encode_jpeg(u, quality=q)).float() / 255 for q in (15, 50, 90)]\n"
      "torch.stack(o).contiguous().numpy().tofile(\"" + out + "\")\n");
  const int64_t n = 11;
  const auto want = read_raw(out, {n, img.size(0), img.size(1), img.size(2)}, torch::kFloat32);
  const std::vector<std::pair<std::string, torch::Tensor>> got = {
      {"brightness", image::adjust_brightness(img, 1.17)}, {"contrast", image::adjust_contrast(img, 0.83)},
      {"saturation", image::adjust_saturation(img, 1.4)},  {"hue 0.04", image::adjust_hue(img, 0.04)},
      {"hue -0.3", image::adjust_hue(img, -0.3)},          {"sharpness 0.5", image::adjust_sharpness(img, 0.5)},
      {"sharpness 1.8", image::adjust_sharpness(img, 1.8)},
      {"affine", image::affine(img, 4.0, 5, -3, 1.05, 2.0, -3.0)},
      {"jpeg 15", image::jpeg_compression(img, 15)},      {"jpeg 50", image::jpeg_compression(img, 50)},
      {"jpeg 90", image::jpeg_compression(img, 90)}};
  for (int64_t k = 0; k < n; ++k) {
    const auto& [name, have] = got[size_t(k)];
    auto diff = (have - want[k]).abs();
    if (name == "affine") {  // a source exactly between two pixels may round either way in float32
      EXPECT_LE((diff > kTol).any(0).sum().item<int64_t>(), img.size(1) * img.size(2) / 500) << name;
    } else {
      EXPECT_LE(diff.max().item<double>(), kTol) << name;
    }
    EXPECT_GT((have - img).abs().max().item<double>(), 0.02) << name << " left the frame as it was";
  }
}

// The uint8 kernels (video frames, as LeRobot augments them) against torchvision's integer path
// itself, v2 (what LeRobot runs): at most one level apart, on under 1% of the pixels (ATen's
// vectorised kernels fuse some multiply-adds, so a value near a whole level can truncate the other
// way: 0.6% of the pixels for saturation 1.4 against torchvision 0.21). Debian 12's torchvision
// 0.14 has only v1, whose brightness, contrast and saturation follow the same rules; v1's hue and
// sharpness round differently (x * 255 and a blend of the border), so there v2's rule is applied to
// v1's float hue, and v2's sharpness is written out in torch operations.
TEST(ImageKernels, Uint8KernelsMatchTorchvisionsIntegerPath) {
  const auto img = (real_frame() * 255.0).round().to(torch::kUInt8).contiguous();
  TempDir dir("tv_uint8");
  const std::string in = (dir.path / "in.u8").string(), out = (dir.path / "out.u8").string();
  write_raw(in, img);
  const std::string printed = run_python(
      "import torch\n"
      "try:\n"
      "    import torchvision.transforms.v2.functional as F\n"
      "    v2 = True\n"
      "except ImportError:\n"
      "    import torchvision.transforms.functional as F\n"
      "    v2 = False\n"
      "print(\"v2\" if v2 else \"v1\")\n"
      "def hue(x, f):\n"
      "    if v2:\n"
      "        return F.adjust_hue(x, f)\n"
      "    return F.adjust_hue(x.to(torch.float32).mul_(1.0 / 255), f).mul(255.999).to(torch.uint8)\n"
      "def sharpness(x, f):\n"
      "    if v2:\n"
      "        return F.adjust_sharpness(x, f)\n"
      "    k = (torch.tensor([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13).expand(3, 1, 3, 3)\n"
      "    o = x.to(torch.float32)[None]\n"
      "    b = torch.nn.functional.conv2d(o, k, groups=3).round_()\n"
      "    v = o[..., 1:-1, 1:-1]\n"
      "    v.add_(b.sub_(v), alpha=1.0 - f)\n"
      "    return o.clamp_(0, 255).to(torch.uint8)[0]\n"
      + python_load(in, img, "uint8") +
      "o = [F.adjust_brightness(x, 1.17), F.adjust_brightness(x, 0.83), F.adjust_contrast(x, 0.83),\n"
      "     F.adjust_contrast(x, 1.19), F.adjust_saturation(x, 1.4), F.adjust_saturation(x, 0.7),\n"
      "     hue(x, 0.04), hue(x, -0.3), sharpness(x, 0.5), sharpness(x, 1.8)]\n"
      "torch.stack(o).contiguous().numpy().tofile(\"" + out + "\")\n");
  const bool v2 = printed.rfind("v2", 0) == 0;
  const int64_t n = 10;
  const auto want = read_raw(out, {n, img.size(0), img.size(1), img.size(2)}, torch::kUInt8);
  const std::vector<std::pair<std::string, torch::Tensor>> got = {
      {"brightness 1.17", image::adjust_brightness_u8(img, 1.17)}, {"brightness 0.83", image::adjust_brightness_u8(img, 0.83)},
      {"contrast 0.83", image::adjust_contrast_u8(img, 0.83)},     {"contrast 1.19", image::adjust_contrast_u8(img, 1.19)},
      {"saturation 1.4", image::adjust_saturation_u8(img, 1.4)},   {"saturation 0.7", image::adjust_saturation_u8(img, 0.7)},
      {"hue 0.04", image::adjust_hue_u8(img, 0.04)},               {"hue -0.3", image::adjust_hue_u8(img, -0.3)},
      {"sharpness 0.5", image::adjust_sharpness_u8(img, 0.5)},     {"sharpness 1.8", image::adjust_sharpness_u8(img, 1.8)}};
  for (int64_t k = 0; k < n; ++k) {
    const auto& [name, have] = got[size_t(k)];
    ASSERT_EQ(have.scalar_type(), torch::kUInt8) << name;
    auto a = have.to(torch::kInt32), b = want[k].to(torch::kInt32);
    const auto diff = (a - b).abs();
    EXPECT_LE(diff.max().item<int64_t>(), 1) << name;
    const double off = double((diff > 0).sum().item<int64_t>()) / double(diff.numel());
    EXPECT_LE(off, 0.01) << name << " (torchvision " << (v2 ? "v2" : "v1") << ")";
  }
  // Brightness by hand: trunc(clamp(u * f)) in float32, every pixel.
  const auto by_hand = (img.to(torch::kFloat32) * float(1.17)).clamp(0, 255).trunc().to(torch::kUInt8);
  EXPECT_TRUE(torch::equal(image::adjust_brightness_u8(img, 1.17), by_hand));
  // The integer path is not the float kernel rounded: truncation moves many pixels one level down.
  const auto via_float = (image::adjust_brightness(img.to(torch::kFloat32) / 255.0, 1.17) * 255.0).round().to(torch::kUInt8);
  EXPECT_GT((via_float != by_hand).sum().item<int64_t>(), img.numel() / 10);
}

TEST(ImageKernels, PlanckianJitterAndRandomShadowMatchLeRobotsDefinitions) {
  const auto img = real_frame();
  const int64_t h = img.size(1), w = img.size(2);
  // 6750 K lies halfway between the 6500 K and 7000 K rows of the black-body table.
  const double r = (0.4816 + 0.4672) / 2, g = (0.4604 + 0.4619) / 2, b = (0.4782 + 0.5053) / 2;
  expect_per_pixel(image::planckian_jitter(img, 6750), img, [&](int64_t y, int64_t x) {
    Px p = px(img, y, x);
    return Px{clamp01(p[0] * r / g), p[1], clamp01(p[2] * b / g)};
  }, "planckian 6750 K");
  // Shadow: a band of columns [40, 90) at 0.55, the mask averaged over 8x8 blocks and upsampled
  // bilinearly (half-pixel centres, edges clamped).
  const int64_t x0 = 40, band = 50;
  const double factor = 0.55;
  const int64_t hs = h / 8, ws = w / 8;
  std::vector<double> small(size_t(hs * ws));
  for (int64_t by = 0; by < hs; ++by)
    for (int64_t bx = 0; bx < ws; ++bx) {
      double sum = 0;
      for (int64_t x = bx * 8; x < bx * 8 + 8; ++x) sum += (x >= x0 && x < x0 + band) ? factor : 1.0;
      small[size_t(by * ws + bx)] = sum / 8.0;
    }
  auto src = [](int64_t dst, int64_t in, int64_t outn, int64_t& i0, int64_t& i1, double& t) {
    const double s = std::max(0.0, (double(dst) + 0.5) * double(in) / double(outn) - 0.5);
    i0 = std::min<int64_t>(int64_t(s), in - 1);
    i1 = std::min<int64_t>(i0 + 1, in - 1);
    t = s - double(i0);
  };
  expect_per_pixel(image::random_shadow(img, x0, band, factor), img, [&](int64_t y, int64_t x) {
    int64_t y0, y1, xa, xb;
    double ty, tx;
    src(y, hs, h, y0, y1, ty);
    src(x, ws, w, xa, xb, tx);
    auto at = [&](int64_t yy, int64_t xx) { return small[size_t(yy * ws + xx)]; };
    const double m = (1 - ty) * ((1 - tx) * at(y0, xa) + tx * at(y0, xb)) + ty * ((1 - tx) * at(y1, xa) + tx * at(y1, xb));
    Px p = px(img, y, x);
    return Px{clamp01(p[0] * m), clamp01(p[1] * m), clamp01(p[2] * m)};
  }, "shadow");
  // The transforms draw within their ranges: quality and temperature inclusive, a band of 1/3..2/3.
  TransformRng rng(5);
  auto jpeg = make_image_transform("JPEGCompression", {{"quality", {20, 22}}}, "t");
  auto planck = make_image_transform("PlanckianJitter", {{"temperature", 4000}}, "t");
  auto shadow = make_image_transform("RandomShadow", Json::object(), "t");
  std::set<int64_t> qualities;
  int darker = 0;
  for (int i = 0; i < 300; ++i) {
    qualities.insert(int64_t(jpeg->sample(rng, h, w).at("quality")));
    ASSERT_EQ(planck->sample(rng, h, w).at("temperature"), 4000.0);
    auto p = shadow->sample(rng, h, w);
    ASSERT_GE(p.at("opacity"), 0.3);
    ASSERT_LT(p.at("opacity"), 0.6);
    ASSERT_GE(p.at("width"), 1.0 / 3.0);
    ASSERT_LT(p.at("width"), 2.0 / 3.0);
    darker += p.at("direction") < 0;
  }
  EXPECT_EQ(qualities, (std::set<int64_t>{20, 21, 22}));
  EXPECT_GT(darker, 110);  // about half of 300
  EXPECT_LT(darker, 190);
}

ImageTransformsConfig enabled_default() {
  ImageTransformsConfig c;
  c.enable = true;
  return c;
}

TEST(ImageTransforms, ParametersFollowTheirDistributions) {
  Json kw = {{"brightness", {0.8, 1.2}}, {"hue", {-0.05, 0.05}}};
  auto jitter = make_image_transform("ColorJitter", kw, "t");
  TransformRng rng(7);
  const int n = 20000;
  double sum = 0, below = 0, hue_sum = 0;
  std::array<int, 4> first{};
  for (int i = 0; i < n; ++i) {
    auto p = jitter->sample(rng, 480, 640);
    const double b = p.at("brightness");
    ASSERT_GE(b, 0.8);
    ASSERT_LT(b, 1.2);
    ASSERT_EQ(p.count("contrast"), 0u);  // not given: not drawn
    sum += b;
    below += b < 0.9;
    hue_sum += p.at("hue");
    first[size_t(p.at("fn0"))]++;
  }
  EXPECT_NEAR(sum / n, 1.0, 0.004);        // uniform mean (sd of the mean 0.0008)
  EXPECT_NEAR(below / n, 0.25, 0.015);      // a quarter of [0.8, 1.2) lies below 0.9
  EXPECT_NEAR(hue_sum / n, 0.0, 0.002);
  for (int c : first) EXPECT_NEAR(double(c) / n, 0.25, 0.015);  // randperm(4): each first equally

  auto affine = make_image_transform("RandomAffine", {{"degrees", {-5.0, 5.0}}, {"translate", {0.05, 0.05}}}, "t");
  double tx_max = 0, ty_max = 0, tx_sum = 0;
  for (int i = 0; i < n; ++i) {
    auto p = affine->sample(rng, 480, 640);
    ASSERT_EQ(p.at("tx"), std::round(p.at("tx")));  // whole pixels
    tx_max = std::max(tx_max, std::abs(p.at("tx")));
    ty_max = std::max(ty_max, std::abs(p.at("ty")));
    tx_sum += p.at("tx");
    ASSERT_LE(std::abs(p.at("angle")), 5.0);
    ASSERT_EQ(p.at("scale"), 1.0);
  }
  EXPECT_EQ(tx_max, 32.0);  // 0.05 * 640
  EXPECT_EQ(ty_max, 24.0);  // 0.05 * 480
  EXPECT_NEAR(tx_sum / n, 0.0, 0.5);

  auto gamma = make_image_transform("GammaCorrection", {{"gamma", {0.5, 2.0}}}, "t");
  double brighter = 0;
  for (int i = 0; i < n; ++i) brighter += gamma->sample(rng, 1, 1).at("gamma") < 1.0;
  EXPECT_NEAR(brighter / n, 0.5, 0.015);  // log-uniform: as many below 1 as above
}

TEST(ImageTransforms, SubsetIsDrawnByWeightWithoutReplacement) {
  ImageTransforms tf(enabled_default());
  ASSERT_EQ(tf.names(), (std::vector<std::string>{"brightness", "contrast", "saturation", "hue", "sharpness", "affine"}));
  TransformRng rng(3);
  std::vector<int> hits(6);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    auto s = tf.sample_subset(rng);
    ASSERT_EQ(s.size(), 3u);
    ASSERT_TRUE(std::is_sorted(s.begin(), s.end()));  // tfs order unless random_order
    ASSERT_TRUE(s[0] != s[1] && s[1] != s[2]);
    for (size_t k : s) hits[k]++;
  }
  for (int c : hits) EXPECT_NEAR(double(c) / n, 0.5, 0.015);

  // Weights 4:1:1, two drawn: P(first in subset) = 4/6 + 2 * (1/6)(4/5) = 14/15.
  ImageTransformsConfig c;
  c.enable = true;
  c.max_num_transforms = 2;
  c.random_order = true;
  c.tfs = Json::object();
  c.tfs["a"] = {{"weight", 4.0}, {"type", "Identity"}};
  c.tfs["b"] = {{"weight", 1.0}, {"type", "Identity"}};
  c.tfs["c"] = {{"weight", 1.0}, {"type", "Identity"}};
  c.tfs["off"] = {{"weight", 0.0}, {"type", "NotEvenChecked"}};  // weight <= 0: left out, as LeRobot
  ImageTransforms weighted(c);
  ASSERT_EQ(weighted.names().size(), 3u);
  double with_a = 0, a_first = 0;
  for (int i = 0; i < n; ++i) {
    auto s = weighted.sample_subset(rng);
    with_a += std::find(s.begin(), s.end(), 0u) != s.end();
    a_first += s[0] == 0;
  }
  EXPECT_NEAR(with_a / n, 14.0 / 15.0, 0.01);
  EXPECT_NEAR(a_first / n, 4.0 / 6.0, 0.015);  // random_order keeps the draw order
}

TEST(ImageTransforms, ConfigFromFlagsYamlAndLeRobotJson) {
  DatasetConfig d;
  apply_flags(d, parse_flag_words({"--image_transforms.enable=true", "--image_transforms.tfs.sharpness.weight=2.5",
                                   "--image_transforms.tfs.blur.type=MotionBlur",
                                   "--image_transforms.tfs.blur.kwargs={kernel_size: [3, 5]}"}));
  EXPECT_TRUE(d.image_transforms.enable);
  EXPECT_EQ(d.image_transforms.tfs["sharpness"]["weight"].get<double>(), 2.5);
  EXPECT_EQ(d.image_transforms.tfs["sharpness"]["type"], "SharpnessJitter");  // rest of the entry kept
  ImageTransforms built(d.image_transforms);
  EXPECT_EQ(built.names().back(), "blur");
  // LeRobot's train_config.json layout (tuples dumped as lists), here replacing the whole dict.
  const Json lerobot = Json::parse(R"({"enable": true, "max_num_transforms": 1, "random_order": false,
      "tfs": {"gamma": {"weight": 1.0, "type": "GammaCorrection", "kwargs": {"gamma": [0.5, 2.0]}},
              "noise": {"weight": 3.0, "type": "GaussianNoise", "kwargs": {"std": 10}}}})");
  ImageTransformsConfig j;
  apply_json(j, lerobot, "dataset.image_transforms");
  ImageTransforms from_json(j);
  EXPECT_EQ(from_json.names(), (std::vector<std::string>{"gamma", "noise"}));
  EXPECT_EQ(to_json(j)["tfs"], lerobot["tfs"]);  // dumped back as read
  ImageTransformsConfig y;
  apply_json(y, parse_yaml("enable: true\ntfs:\n  b:\n    type: ColorJitter\n    kwargs: {brightness: 0.3}\n", "yaml"),
             "dataset.image_transforms");
  ImageTransforms from_yaml(y);
  TransformRng rng(1);
  const double b = from_yaml.transform(0).sample(rng, 4, 4).at("brightness");
  EXPECT_TRUE(b >= 0.7 && b < 1.3) << b;
}

std::string usage_error(const ImageTransformsConfig& c) {
  try {
    c.validate();
  } catch (const Error& e) {
    return std::string(e.what()) + " | " + e.where() + " | " + e.fix();
  }
  return "";
}

TEST(ImageTransforms, BadEntriesAreUsageErrorsNamingTheKey) {
  auto c = enabled_default();
  c.tfs["x"] = {{"type", "Blur"}};
  auto msg = usage_error(c);
  EXPECT_NE(msg.find("dataset.image_transforms.tfs.x.type"), std::string::npos) << msg;
  for (const auto& t : implemented_transform_types()) EXPECT_NE(msg.find(t), std::string::npos) << msg;
  c = enabled_default();
  c.tfs["x"] = {{"type", "PlanckianJitter"}, {"kwargs", {{"temperature", {2000, 6000}}}}};
  EXPECT_NE(usage_error(c).find("3000 <= min <= max <= 15000"), std::string::npos);
  c = enabled_default();
  c.tfs["x"] = {{"type", "JPEGCompression"}, {"kwargs", {{"quality", {50, 120}}}}};
  EXPECT_NE(usage_error(c).find("tfs.x.kwargs.quality"), std::string::npos);
  c = enabled_default();
  c.tfs["x"] = {{"type", "RandomShadow"}, {"kwargs", {{"opacity", 1.5}}}};
  EXPECT_NE(usage_error(c).find("0 <= min <= max <= 1"), std::string::npos);
  c = enabled_default();
  c.tfs["brightness"]["kwargs"]["brightness"] = {1.3, 0.9};
  EXPECT_NE(usage_error(c).find("tfs.brightness.kwargs.brightness"), std::string::npos);
  c = enabled_default();
  c.tfs["affine"]["kwargs"]["translate"] = {0.05, 1.5};
  EXPECT_NE(usage_error(c).find("between 0 and 1"), std::string::npos);
  c = enabled_default();
  c.tfs["sharpness"]["kwargs"] = {{"sharpness", -1}};
  EXPECT_NE(usage_error(c).find("non-negative"), std::string::npos);
  c = enabled_default();
  c.tfs["sharpness"]["kwargs"] = {{"radius", 2}};
  EXPECT_NE(usage_error(c).find("valid kwargs: sharpness"), std::string::npos);
  c = enabled_default();
  c.max_num_transforms = -1;
  EXPECT_NE(usage_error(c).find("max_num_transforms"), std::string::npos);
  c.enable = false;  // as LeRobot, nothing is built (or checked) while disabled
  EXPECT_EQ(usage_error(c), "");
}

TEST(ImageTransforms, LoaderAugmentsCamerasPerSampleIndependentOfThreads) {
  TempDir dir("augment_loader");
  SynthSpec spec;
  write_synth_dataset(dir.path, spec);
  auto ds = std::make_shared<const LeRobotDataset>(dir.path);
  auto run = [&](int workers, bool augment) {
    DataLoaderOptions o;
    o.batch_size = 4;
    o.num_workers = workers;
    o.seed = 5;
    o.pin_memory = 0;
    if (augment) o.image_transforms = std::make_shared<const ImageTransforms>(enabled_default());
    DataLoader l(ds, o);
    return std::vector<DataBatch>{l.next(), l.next()};
  };
  auto plain = run(0, false), a0 = run(0, true), a2 = run(2, true);
  const std::string cam = "observation.images.a";
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(a0[k].tensors.at(cam).scalar_type(), torch::kFloat32);
    ASSERT_EQ(a0[k].tensors.at(cam).sizes(), plain[k].tensors.at(cam).sizes());
    EXPECT_TRUE(torch::equal(a0[k].tensors.at(cam), a2[k].tensors.at(cam)));  // threads change nothing
    EXPECT_TRUE(torch::equal(a0[k].tensors.at("action"), plain[k].tensors.at("action")));  // cameras only
    auto diff = (a0[k].tensors.at(cam) - plain[k].tensors.at(cam).to(torch::kFloat32) / 255.0).abs();
    // Every sample changed, each differently (per-sample parameters).
    for (int64_t i = 0; i < 4; ++i) EXPECT_GT(diff[i].max().item<double>(), 1e-3) << "sample " << i;
  }
  EXPECT_FALSE(torch::equal(a0[0].tensors.at(cam), a0[1].tensors.at(cam)));
}

// A video camera is augmented as LeRobot does it: on its uint8 frames (every value stays a whole
// level: k / 255), LeRobot's float-only transforms leaving them unchanged; an image camera is
// augmented in float. The transforms that skip uint8 frames are named for the start-up warning.
TEST(ImageTransforms, VideoCamerasAreAugmentedAsUint8) {
  TempDir dir("augment_uint8");
  SynthSpec spec;
  write_synth_dataset(dir.path, spec);
  auto ds = std::make_shared<const LeRobotDataset>(dir.path);
  const auto cameras = augmented_cameras(*ds);
  ASSERT_EQ(cameras.size(), 2u);
  for (const auto& c : cameras) EXPECT_TRUE(c.video) << c.key;
  auto batch = [&](const ImageTransformsConfig& cfg, bool augment) {
    DataLoaderOptions o;
    o.batch_size = 4;
    o.seed = 5;
    o.pin_memory = 0;
    if (augment) o.image_transforms = std::make_shared<const ImageTransforms>(cfg);
    DataLoader l(ds, o);
    return l.next().tensors.at("observation.images.a");
  };
  const auto plain = batch({}, false);
  const auto augmented = batch(enabled_default(), true);
  ASSERT_EQ(augmented.scalar_type(), torch::kFloat32);
  const auto levels = augmented * 255.0;
  EXPECT_LT((levels - levels.round()).abs().max().item<double>(), 1e-3) << "values between two uint8 levels";
  EXPECT_GT((augmented - plain.to(torch::kFloat32) / 255.0).abs().max().item<double>(), 0.02) << "nothing changed";

  ImageTransformsConfig noise;
  noise.enable = true;
  noise.tfs = Json::parse(R"({"noise": {"weight": 1.0, "type": "GaussianNoise", "kwargs": {"std": [20.0, 20.0]}},
                              "jitter": {"weight": 1.0, "type": "ColorJitter", "kwargs": {"brightness": [1.3, 1.3]}}})");
  noise.max_num_transforms = 1;
  const ImageTransforms tf(noise);
  EXPECT_EQ(tf.float_only_names(), std::vector<std::string>{"noise"});
  const auto frame = plain[0];  // uint8 (T or C, H, W)
  ImageTransformsConfig only_noise = noise;
  only_noise.tfs.erase("jitter");
  const ImageTransforms noise_only(only_noise);
  TransformRng r1(3), r2(3);
  EXPECT_TRUE(torch::equal(noise_only(frame, r1), frame)) << "GaussianNoise changed a uint8 frame";
  const auto as_float = frame.to(torch::kFloat32) / 255.0;
  EXPECT_GT((noise_only(as_float, r2) - as_float).abs().max().item<double>(), 0.01) << "GaussianNoise did nothing on float";
  // Through the loader: the video camera comes out as it went in (over 255), exactly.
  EXPECT_TRUE(torch::equal(batch(only_noise, true), plain.to(torch::kFloat32).div_(255.0)));
}

}  // namespace
}  // namespace lerobot
