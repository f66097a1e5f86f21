// Diffusion's random crop: LeRobot's draws (torchvision's RandomCrop.get_params, CPU generator, read
// back) by default, and offsets drawn on the device with no host read when a captured training
// step asks for it (Policy::set_device_side_randomness), so CUDA-graph replays draw new crops.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "lerobot/common/op_counter.h"
#include "lerobot/policies/diffusion/diffusion_model.h"
#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

// The (top, left) of every window of x that equals `crop`.
std::vector<std::pair<int64_t, int64_t>> windows_equal_to(const torch::Tensor& x, const torch::Tensor& crop) {
  std::vector<std::pair<int64_t, int64_t>> found;
  const int64_t th = crop.size(-2), tw = crop.size(-1);
  for (int64_t top = 0; top + th <= x.size(-2); ++top)
    for (int64_t left = 0; left + tw <= x.size(-1); ++left)
      if (torch::equal(x.narrow(-2, top, th).narrow(-1, left, tw), crop)) found.emplace_back(top, left);
  return found;
}

TEST(DiffusionRandomCrop, OnTheDeviceItCropsOneWindowPerCallWithNoHostRead) {
  torch::manual_seed(3);
  const auto x = torch::rand({2, 3, 12, 10});
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int i = 0; i < 60; ++i) {
    torch::Tensor y;
    {
      OpCounter counter;
      y = random_crop(x, 8, 7, /*on_device=*/true);
      EXPECT_EQ(counter.syncs(), 0) << counter.sync_sites_text();
    }
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, 8, 7}));
    const auto found = windows_equal_to(x, y);
    ASSERT_EQ(found.size(), 1u) << "one offset for the whole batch, inside the image";
    seen.insert(found.front());
  }
  // 5 x 4 possible offsets: 60 draws of a fixed offset, or of one axis only, would see at most 5.
  EXPECT_GT(seen.size(), 10u) << "new offsets at every call";
  torch::manual_seed(5);
  const auto a = random_crop(x, 8, 7, true);
  torch::manual_seed(5);
  EXPECT_TRUE(torch::equal(a, random_crop(x, 8, 7, true))) << "the same seed draws the same crop";
}

TEST(DiffusionRandomCrop, ByDefaultItDrawsTorchvisionsOffsetsFromTheCpuGenerator) {
  const auto x = torch::rand({1, 3, 12, 10});
  torch::manual_seed(9);
  const int64_t top = torch::randint(0, 12 - 8 + 1, {1}).item<int64_t>();  // get_params: top, then left
  const int64_t left = torch::randint(0, 10 - 7 + 1, {1}).item<int64_t>();
  torch::manual_seed(9);
  torch::Tensor y;
  {
    OpCounter counter;
    y = random_crop(x, 8, 7, /*on_device=*/false);
    EXPECT_EQ(counter.syncs(), 2) << "the two offsets are read back, as torchvision reads them";
  }
  EXPECT_TRUE(torch::equal(y, x.narrow(-2, top, 8).narrow(-1, left, 7)));
  EXPECT_TRUE(torch::equal(random_crop(x, 12, 10, true), x)) << "a crop of the whole image draws nothing";
}

TEST(DiffusionRandomCrop, APolicySwitchedToDeviceSideRandomnessTrainsWithoutHostReads) {
  auto cfg = testing::small_diffusion_config();
  cfg.crop_shape = std::vector<int64_t>{28, 28};
  cfg.crop_is_random = true;
  cfg.validate();
  DiffusionPolicy policy(cfg, false);
  policy.train();
  const Batch batch = testing::random_diffusion_batch(cfg, 4, 1);
  auto syncs_of_forward = [&] {
    OpCounter counter;
    (void)policy.forward(batch);
    return std::make_pair(counter.syncs(), counter.sync_sites_text());
  };
  const auto lerobots = syncs_of_forward();
  EXPECT_EQ(lerobots.first, 2) << "LeRobot's crop reads its two offsets back (one crop for all images): "
                                << lerobots.second;
  policy.set_device_side_randomness(true);
  const auto on_device = syncs_of_forward();
  EXPECT_EQ(on_device.first, 0) << on_device.second;
  EXPECT_TRUE(policy.graph_capture_blocker().empty()) << "a random crop no longer keeps the step out of a graph";
  policy.eval();
  torch::NoGradGuard no_grad;
  OpCounter counter;
  (void)policy.diffusion->encoders().front()->forward(torch::rand({2, 3, 32, 32}));
  EXPECT_EQ(counter.syncs(), 0) << "eval crops the centre";
}

}  // namespace
}  // namespace lerobot
