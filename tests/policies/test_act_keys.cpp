// ACT state-dict keys and shapes equal LeRobot's (reference §3.2 + torchvision resnet18 layout),
// written out literally for a 2-camera, 6-dof state, 6-dof action default-size config.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/act/modeling_act.h"

namespace lerobot {
namespace {

using Shapes = std::map<std::string, std::vector<int64_t>>;

// LeRobot ACT defaults: D=512, F=3200, latent 32, chunk 100, 4 encoder / 1 decoder / 4 VAE layers.
Shapes expected_keys() {
  Shapes e;
  const std::vector<std::pair<std::string, std::vector<int64_t>>> enc_layer = {
      {"self_attn.in_proj_weight", {1536, 512}}, {"self_attn.in_proj_bias", {1536}},
      {"self_attn.out_proj.weight", {512, 512}}, {"self_attn.out_proj.bias", {512}},
      {"linear1.weight", {3200, 512}},           {"linear1.bias", {3200}},
      {"linear2.weight", {512, 3200}},           {"linear2.bias", {512}},
      {"norm1.weight", {512}},                   {"norm1.bias", {512}},
      {"norm2.weight", {512}},                   {"norm2.bias", {512}},
  };
  for (const char* enc : {"model.vae_encoder.layers.", "model.encoder.layers."})
    for (int n = 0; n < 4; ++n)
      for (const auto& kv : enc_layer) e[enc + std::to_string(n) + "." + kv.first] = kv.second;
  e["model.vae_encoder_cls_embed.weight"] = {1, 512};
  e["model.vae_encoder_robot_state_input_proj.weight"] = {512, 6};
  e["model.vae_encoder_robot_state_input_proj.bias"] = {512};
  e["model.vae_encoder_action_input_proj.weight"] = {512, 6};
  e["model.vae_encoder_action_input_proj.bias"] = {512};
  e["model.vae_encoder_latent_output_proj.weight"] = {64, 512};
  e["model.vae_encoder_latent_output_proj.bias"] = {64};
  e["model.vae_encoder_pos_enc"] = {1, 102, 512};  // cls + state + 100 actions

  // torchvision resnet18 minus avgpool/fc, FrozenBatchNorm2d (no num_batches_tracked).
  auto bn = [&](const std::string& p, int64_t c) {
    for (const char* s : {".weight", ".bias", ".running_mean", ".running_var"}) e[p + s] = {c};
  };
  e["model.backbone.conv1.weight"] = {64, 3, 7, 7};
  bn("model.backbone.bn1", 64);
  const int64_t ch[4] = {64, 128, 256, 512};
  for (int l = 0; l < 4; ++l) {
    const int64_t out = ch[l], in = l == 0 ? 64 : ch[l - 1];
    for (int b = 0; b < 2; ++b) {
      const std::string p = "model.backbone.layer" + std::to_string(l + 1) + "." + std::to_string(b);
      e[p + ".conv1.weight"] = {out, b == 0 ? in : out, 3, 3};
      bn(p + ".bn1", out);
      e[p + ".conv2.weight"] = {out, out, 3, 3};
      bn(p + ".bn2", out);
      if (b == 0 && l > 0) {
        e[p + ".downsample.0.weight"] = {out, in, 1, 1};
        bn(p + ".downsample.1", out);
      }
    }
  }

  const std::vector<std::pair<std::string, std::vector<int64_t>>> dec_layer = {
      {"self_attn.in_proj_weight", {1536, 512}},      {"self_attn.in_proj_bias", {1536}},
      {"self_attn.out_proj.weight", {512, 512}},      {"self_attn.out_proj.bias", {512}},
      {"multihead_attn.in_proj_weight", {1536, 512}}, {"multihead_attn.in_proj_bias", {1536}},
      {"multihead_attn.out_proj.weight", {512, 512}}, {"multihead_attn.out_proj.bias", {512}},
      {"linear1.weight", {3200, 512}},                {"linear1.bias", {3200}},
      {"linear2.weight", {512, 3200}},                {"linear2.bias", {512}},
      {"norm1.weight", {512}},                        {"norm1.bias", {512}},
      {"norm2.weight", {512}},                        {"norm2.bias", {512}},
      {"norm3.weight", {512}},                        {"norm3.bias", {512}},
  };
  for (const auto& kv : dec_layer) e["model.decoder.layers.0." + kv.first] = kv.second;
  e["model.decoder.norm.weight"] = {512};
  e["model.decoder.norm.bias"] = {512};
  e["model.encoder_robot_state_input_proj.weight"] = {512, 6};
  e["model.encoder_robot_state_input_proj.bias"] = {512};
  e["model.encoder_latent_input_proj.weight"] = {512, 32};
  e["model.encoder_latent_input_proj.bias"] = {512};
  e["model.encoder_img_feat_input_proj.weight"] = {512, 512, 1, 1};
  e["model.encoder_img_feat_input_proj.bias"] = {512};
  e["model.encoder_1d_feature_pos_embed.weight"] = {2, 512};  // latent + state
  e["model.decoder_pos_embed.weight"] = {100, 512};
  e["model.action_head.weight"] = {6, 512};
  e["model.action_head.bias"] = {6};
  return e;
}

TEST(ACTKeys, StateDictMatchesLeRobotExactly) {
  ACTConfig c;  // LeRobot defaults
  c.input_features["observation.state"] = {"STATE", {6}};
  c.input_features["observation.images.top"] = {"VISUAL", {3, 96, 96}};
  c.input_features["observation.images.wrist"] = {"VISUAL", {3, 96, 96}};
  c.output_features["action"] = {"ACTION", {6}};
  c.pretrained_backbone_weights = std::nullopt;
  ACTPolicy policy(c);
  const auto expected = expected_keys();
  Shapes ours;
  for (const auto& kv : policy.state_dict()) ours[kv.first] = kv.second.sizes().vec();
  for (const auto& kv : expected) {
    auto it = ours.find(kv.first);
    if (it == ours.end()) ADD_FAILURE() << "missing key " << kv.first;
    else EXPECT_EQ(it->second, kv.second) << kv.first;
  }
  for (const auto& kv : ours) EXPECT_TRUE(expected.count(kv.first)) << "unexpected key " << kv.first;
  EXPECT_EQ(ours.size(), expected.size());
}

TEST(ACTKeys, FrozenBatchNormIsNotTrainedAndBackboneGroupIsSecond) {
  auto c = ACTConfig();
  c.input_features["observation.images.top"] = {"VISUAL", {3, 64, 64}};
  c.output_features["action"] = {"ACTION", {2}};
  c.pretrained_backbone_weights = std::nullopt;
  c.dim_model = 32;
  c.dim_feedforward = 32;
  c.chunk_size = 5;
  c.n_action_steps = 5;
  ACTPolicy policy(c);
  for (const auto& p : policy.named_parameters(true))
    EXPECT_EQ(p.key().find("running_"), std::string::npos) << p.key();
  EXPECT_EQ(policy.named_parameters(true).find("model.backbone.bn1.weight"), nullptr);
  auto groups = policy.optim_param_groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[0].lr.has_value());
  ASSERT_TRUE(groups[1].lr.has_value());
  EXPECT_DOUBLE_EQ(*groups[1].lr, c.optimizer_lr_backbone);
  // Python's named_parameters order: vae_encoder first, backbone conv1 first in its group.
  EXPECT_EQ(groups[0].names.front(), "model.vae_encoder.layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(groups[0].names.back(), "model.action_head.bias");
  EXPECT_EQ(groups[1].names.front(), "model.backbone.conv1.weight");
  // 20 conv weights in resnet18 (17 3x3/7x7 + 3 downsample); nothing else trainable there.
  EXPECT_EQ(groups[1].params.size(), 20u);
}

}  // namespace
}  // namespace lerobot
