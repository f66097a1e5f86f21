// Diffusion state-dict keys and shapes equal LeRobot's, derived here from LeRobot's module
// structure (modeling_diffusion.py: DiffusionRgbEncoder with nn.Sequential(resnet18.children()[:-2]),
// SpatialSoftmax, DiffusionConditionalUnet1d) for a one-camera (3x96x96), 2-dof state, 2-dof action
// config: today's defaults and the pre-2026 defaults (group norm, one shared encoder, horizon 16).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/diffusion/modeling_diffusion.h"

namespace lerobot {
namespace {

using Shapes = std::map<std::string, std::vector<int64_t>>;

DiffusionConfig one_camera_config() {
  DiffusionConfig c;
  c.input_features["observation.state"] = {"STATE", {2}};
  c.input_features["observation.image"] = {"VISUAL", {3, 96, 96}};
  c.output_features["action"] = {"ACTION", {2}};
  c.pretrained_backbone_weights = std::nullopt;  // nothing to download; keys are the same
  return c;
}

DiffusionConfig pre_2026_config() {
  auto c = one_camera_config();
  c.horizon = 16;
  c.n_action_steps = 8;
  c.crop_shape = std::vector<int64_t>{84, 84};
  c.use_group_norm = true;
  c.use_separate_rgb_encoder_per_camera = false;
  return c;
}

void resnet18_keys(Shapes& e, const std::string& p, bool group_norm) {
  auto norm = [&](const std::string& k, int64_t c) {
    e[k + ".weight"] = {c};
    e[k + ".bias"] = {c};
    if (group_norm) return;
    e[k + ".running_mean"] = {c};
    e[k + ".running_var"] = {c};
    e[k + ".num_batches_tracked"] = {};
  };
  e[p + "0.weight"] = {64, 3, 7, 7};  // conv1
  norm(p + "1", 64);                  // bn1; 2 = relu, 3 = maxpool
  const int64_t ch[4] = {64, 128, 256, 512};
  for (int l = 0; l < 4; ++l) {
    const int64_t out = ch[l], in = l == 0 ? 64 : ch[l - 1];
    for (int b = 0; b < 2; ++b) {
      const std::string k = p + std::to_string(l + 4) + "." + std::to_string(b);
      e[k + ".conv1.weight"] = {out, b == 0 ? in : out, 3, 3};
      norm(k + ".bn1", out);
      e[k + ".conv2.weight"] = {out, out, 3, 3};
      norm(k + ".bn2", out);
      if (b == 0 && l > 0) {
        e[k + ".downsample.0.weight"] = {out, in, 1, 1};
        norm(k + ".downsample.1", out);
      }
    }
  }
}

void res_block_keys(Shapes& e, const std::string& p, int64_t in, int64_t out, int64_t cond, int64_t k) {
  for (const char* conv : {".conv1", ".conv2"}) {
    const int64_t cin = std::string(conv) == ".conv1" ? in : out;
    e[p + conv + ".block.0.weight"] = {out, cin, k};
    e[p + conv + ".block.0.bias"] = {out};
    e[p + conv + ".block.1.weight"] = {out};  // GroupNorm
    e[p + conv + ".block.1.bias"] = {out};
  }
  e[p + ".cond_encoder.1.weight"] = {2 * out, cond};  // FiLM scale and bias
  e[p + ".cond_encoder.1.bias"] = {2 * out};
  if (in != out) {
    e[p + ".residual_conv.weight"] = {out, in, 1};
    e[p + ".residual_conv.bias"] = {out};
  }
}

// LeRobot's keys for a config with 1 camera, state 2, action 2, n_obs_steps 2, 32 keypoints,
// down_dims (512, 1024, 2048), kernel 5, step embedding 128; feature map 3x3 (96 or 84 pixels).
Shapes expected_keys(bool separate_encoder, bool group_norm) {
  Shapes e;
  const std::string enc = separate_encoder ? "diffusion.rgb_encoder.0." : "diffusion.rgb_encoder.";
  resnet18_keys(e, enc + "backbone.", group_norm);
  e[enc + "pool.nets.weight"] = {32, 512, 1, 1};
  e[enc + "pool.nets.bias"] = {32};
  e[enc + "pool.pos_grid"] = {9, 2};
  e[enc + "out.weight"] = {64, 64};
  e[enc + "out.bias"] = {64};
  const std::string u = "diffusion.unet.";
  e[u + "diffusion_step_encoder.1.weight"] = {512, 128};
  e[u + "diffusion_step_encoder.1.bias"] = {512};
  e[u + "diffusion_step_encoder.3.weight"] = {128, 512};
  e[u + "diffusion_step_encoder.3.bias"] = {128};
  const int64_t cond = 128 + 2 * (2 + 64), k = 5;
  const std::vector<std::pair<int64_t, int64_t>> in_out = {{2, 512}, {512, 1024}, {1024, 2048}};
  for (size_t i = 0; i < in_out.size(); ++i) {
    const std::string p = u + "down_modules." + std::to_string(i);
    res_block_keys(e, p + ".0", in_out[i].first, in_out[i].second, cond, k);
    res_block_keys(e, p + ".1", in_out[i].second, in_out[i].second, cond, k);
    if (i + 1 < in_out.size()) {  // downsample Conv1d(c, c, 3, 2, 1); the last is Identity
      e[p + ".2.weight"] = {in_out[i].second, in_out[i].second, 3};
      e[p + ".2.bias"] = {in_out[i].second};
    }
  }
  res_block_keys(e, u + "mid_modules.0", 2048, 2048, cond, k);
  res_block_keys(e, u + "mid_modules.1", 2048, 2048, cond, k);
  // reversed(in_out[1:]) = (1024, 2048), (512, 1024): ResBlock(2*in -> out), ResBlock, ConvTranspose1d.
  const std::vector<std::pair<int64_t, int64_t>> up = {{1024, 2048}, {512, 1024}};
  for (size_t i = 0; i < up.size(); ++i) {
    const std::string p = u + "up_modules." + std::to_string(i);
    const int64_t out = up[i].first, in = up[i].second;
    res_block_keys(e, p + ".0", 2 * in, out, cond, k);
    res_block_keys(e, p + ".1", out, out, cond, k);
    e[p + ".2.weight"] = {out, out, 4};  // ConvTranspose1d weight is (in, out, k)
    e[p + ".2.bias"] = {out};
  }
  e[u + "final_conv.0.block.0.weight"] = {512, 512, 5};
  e[u + "final_conv.0.block.0.bias"] = {512};
  e[u + "final_conv.0.block.1.weight"] = {512};
  e[u + "final_conv.0.block.1.bias"] = {512};
  e[u + "final_conv.1.weight"] = {2, 512, 1};
  e[u + "final_conv.1.bias"] = {2};
  return e;
}

void expect_keys(const DiffusionPolicy& policy, const Shapes& expected) {
  Shapes actual;
  for (const auto& kv : policy.state_dict()) actual[kv.first] = kv.second.sizes().vec();
  for (const auto& kv : expected) {
    auto it = actual.find(kv.first);
    if (it == actual.end()) {
      ADD_FAILURE() << "missing " << kv.first;
      continue;
    }
    EXPECT_EQ(it->second, kv.second) << kv.first;
  }
  for (const auto& kv : actual) EXPECT_TRUE(expected.count(kv.first)) << "unexpected " << kv.first;
  EXPECT_EQ(actual.size(), expected.size());
}

TEST(DiffusionKeys, CurrentDefaultsMatchLeRobot) {
  auto cfg = one_camera_config();
  EXPECT_EQ(cfg.horizon, 64);
  EXPECT_EQ(cfg.n_action_steps, 32);
  EXPECT_TRUE(cfg.use_separate_rgb_encoder_per_camera);
  EXPECT_FALSE(cfg.use_group_norm);
  DiffusionPolicy policy(cfg, false);
  const auto expected = expected_keys(true, false);
  expect_keys(policy, expected);
  std::printf("current defaults: %zu keys\n", expected.size());
  // pos_grid: numpy meshgrid(linspace(-1, 1, 3), linspace(-1, 1, 3)), x fastest.
  auto grid = policy.state_dict().at("diffusion.rgb_encoder.0.pool.pos_grid");
  EXPECT_TRUE(torch::allclose(grid.select(1, 0), torch::tensor({-1.f, 0.f, 1.f, -1.f, 0.f, 1.f, -1.f, 0.f, 1.f})));
  EXPECT_TRUE(torch::allclose(grid.select(1, 1), torch::tensor({-1.f, -1.f, -1.f, 0.f, 0.f, 0.f, 1.f, 1.f, 1.f})));
}

TEST(DiffusionKeys, Pre2026DefaultsMatchLeRobot) {
  DiffusionPolicy policy(pre_2026_config(), false);
  const auto expected = expected_keys(false, true);
  expect_keys(policy, expected);
  std::printf("pre-2026 defaults: %zu keys\n", expected.size());
}

}  // namespace
}  // namespace lerobot
