// Diffusion Policy behaviour: overfitting one batch on CPU, the padding mask, the observation and
// action queues of select_action, the save/load round trip, config.json keys (LeRobot's) and
// reading a pre-2026 config.json.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/config/json.h"
#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "lerobot/policies/factory.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/register_policies.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

namespace stdfs = std::filesystem;
using testing::make_temp_dir;

DiffusionConfig small_config() { return testing::small_diffusion_config(); }

Batch random_batch(const DiffusionConfig& c, int64_t b, uint64_t seed) { return testing::random_diffusion_batch(c, b, seed); }

double seeded_loss(Policy& p, const Batch& batch, uint64_t seed) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  return p.forward(batch).loss.item<double>();
}

TEST(DiffusionTrain, OverfitsOneBatch) {
  torch::manual_seed(0);
  torch::set_num_threads(1);
  auto cfg = small_config();
  // x0 ("sample") prediction: the U-Net has to learn each trajectory from its conditioning. (With
  // epsilon prediction this small net reached 31% of its start loss in 500 steps on a loaded CPU.)
  cfg.prediction_type = "sample";
  auto policy = make_policy(cfg);
  policy->train();
  auto batch = random_batch(cfg, 4, 3);
  // Measured on fixed noise and timesteps (seed 123) so the comparison is not sampling noise.
  const double start = seeded_loss(*policy, batch, 123);
  torch::optim::Adam opt(policy->parameters(), torch::optim::AdamOptions(1e-3));
  double now = start;
  int steps = 0;
  while (steps < 500) {
    opt.zero_grad();
    auto out = policy->forward(batch);
    ASSERT_TRUE(std::isfinite(out.loss.item<double>()));
    out.loss.backward();
    opt.step();
    ++steps;
    if (steps % 25 == 0) {
      now = seeded_loss(*policy, batch, 123);
      if (now < 0.2 * start) break;
    }
  }
  std::printf("diffusion overfit: loss %.4f -> %.4f in %d steps\n", start, now, steps);
  EXPECT_LT(now, 0.2 * start);
}

TEST(DiffusionTrain, PaddingMaskLeavesPaddedStepsOut) {
  // Same weights, same noise and timesteps (seed 9): masked and unmasked losses agree when nothing
  // is padded, differ when some steps are, and an all-padded batch contributes 0 (the masked sum
  // over max(1, #valid * A)). Without the mask (LeRobot's default) padding is ignored.
  auto cfg = small_config();
  torch::manual_seed(0);
  DiffusionPolicy plain(cfg, false);
  cfg.do_mask_loss_for_padding = true;
  DiffusionPolicy masked(cfg, false);
  masked.load_state_dict(plain.state_dict(), "test");
  plain.train();
  masked.train();
  auto batch = random_batch(cfg, 2, 5);
  const double unmasked = seeded_loss(plain, batch, 9);
  EXPECT_NEAR(seeded_loss(masked, batch, 9), unmasked, 1e-6);
  auto padded = batch;
  padded["action_is_pad"] = batch["action_is_pad"].clone();
  padded["action_is_pad"].narrow(1, 5, 3).fill_(true);
  EXPECT_DOUBLE_EQ(seeded_loss(plain, padded, 9), unmasked);
  EXPECT_GT(std::abs(seeded_loss(masked, padded, 9) - unmasked), 1e-6);
  padded["action_is_pad"].fill_(true);
  EXPECT_DOUBLE_EQ(seeded_loss(masked, padded, 9), 0.0);
}

TEST(DiffusionInference, QueuesObservationsAndActions) {
  auto cfg = small_config();
  cfg.num_inference_steps = 5;
  torch::manual_seed(1);
  DiffusionPolicy policy(cfg, false);
  auto obs = [&](uint64_t seed) {
    auto gen = at::detail::createCPUGenerator(seed);
    return Batch{{"observation.state", torch::rand({1, 2}, gen)},
                 {"observation.images.top", torch::rand({1, 3, 32, 32}, gen)}};
  };
  auto stack = [](const Batch& a, const Batch& b) {
    Batch s;
    for (const auto& kv : a) s[kv.first] = torch::stack({kv.second, b.at(kv.first)}, 1);
    return s;
  };
  const auto o1 = obs(1), o2 = obs(2), o3 = obs(3), o4 = obs(4), o5 = obs(5);
  torch::manual_seed(11);
  auto first = policy.select_action(o1);
  torch::manual_seed(11);
  auto chunk = policy.predict_action_chunk(stack(o1, o1));  // a fresh queue holds copies of o1
  ASSERT_EQ(chunk.sizes(), (std::vector<int64_t>{1, 4, 2}));
  EXPECT_TRUE(torch::equal(first, chunk.select(1, 0)));
  EXPECT_TRUE(torch::equal(policy.select_action(o2), chunk.select(1, 1)));
  EXPECT_TRUE(torch::equal(policy.select_action(o3), chunk.select(1, 2)));
  EXPECT_TRUE(torch::equal(policy.select_action(o4), chunk.select(1, 3)));
  torch::manual_seed(12);
  auto refill = policy.select_action(o5);  // queue now holds (o4, o5)
  torch::manual_seed(12);
  auto expected = policy.predict_action_chunk(stack(o4, o5));
  EXPECT_TRUE(torch::equal(refill, expected.select(1, 0)));
  torch::manual_seed(12);
  EXPECT_FALSE(torch::equal(expected, policy.predict_action_chunk(stack(o5, o5))));
  policy.reset();
  torch::manual_seed(11);
  EXPECT_TRUE(torch::equal(policy.select_action(o1), chunk.select(1, 0)));
}

TEST(DiffusionSaveLoad, RoundTripGivesIdenticalDenoisedActions) {
  for (const std::string scheduler : {"DDPM", "DDIM"}) {
    auto cfg = small_config();
    cfg.noise_scheduler_type = scheduler;
    cfg.num_inference_steps = 10;
    torch::manual_seed(2);
    auto policy = make_policy(cfg);
    auto batch = random_batch(cfg, 2, 4);
    torch::manual_seed(5);
    auto before = policy->predict_action_chunk(batch);
    const auto dir = make_temp_dir("diffusion_roundtrip");
    save_pretrained(*policy, dir);
    auto loaded = load_pretrained(dir, std::string("diffusion"));
    torch::manual_seed(5);
    auto after = loaded->predict_action_chunk(batch);
    EXPECT_TRUE(torch::equal(before, after)) << scheduler;
    torch::manual_seed(6);
    EXPECT_FALSE(torch::equal(before, loaded->predict_action_chunk(batch))) << "noise must matter";
    torch::manual_seed(3);
    auto other = make_policy(cfg);
    torch::manual_seed(5);
    EXPECT_FALSE(torch::allclose(before, other->predict_action_chunk(batch)));
  }
}

// LeRobot's DiffusionConfig fields after the base PreTrainedConfig ones, in its order.
const std::vector<std::string> kLeRobotDiffusionKeys = {
    "type", "n_obs_steps", "input_features", "output_features", "device", "use_amp", "use_peft", "push_to_hub",
    "repo_id", "private", "tags", "license", "pretrained_path", "pretrained_revision", "horizon", "n_action_steps",
    "normalization_mapping", "drop_n_last_frames", "vision_backbone", "resize_shape", "crop_ratio", "crop_shape",
    "crop_is_random", "pretrained_backbone_weights", "use_group_norm", "spatial_softmax_num_keypoints",
    "use_separate_rgb_encoder_per_camera", "down_dims", "kernel_size", "n_groups", "diffusion_step_embed_dim",
    "use_film_scale_modulation", "gradient_checkpointing", "noise_scheduler_type", "num_train_timesteps",
    "beta_schedule", "beta_start", "beta_end", "prediction_type", "clip_sample", "clip_sample_range",
    "num_inference_steps", "compile_model", "compile_mode", "do_mask_loss_for_padding", "optimizer_lr",
    "optimizer_betas", "optimizer_eps", "optimizer_weight_decay", "scheduler_name", "scheduler_warmup_steps"};

// --policy.n_groups sets the GroupNorm groups of the U-Net's residual blocks; LeRobot builds the
// final block without it, so that one keeps 8 groups.
TEST(DiffusionModel, FinalConvKeepsEightGroupsWhateverNGroups) {
  auto cfg = small_config();
  cfg.n_groups = 4;
  cfg.down_dims = {16, 32};
  auto policy = make_policy(cfg);
  std::map<std::string, int64_t> groups;
  for (const auto& item : policy->named_modules())
    if (auto* gn = item.value()->as<torch::nn::GroupNormImpl>()) groups[item.key()] = gn->options.num_groups();
  int64_t final_groups = 0, residual_blocks = 0;
  for (const auto& [name, g] : groups) {
    if (name.find("final_conv") != std::string::npos) {
      final_groups = g;
    } else if (name.find("unet") != std::string::npos) {
      ++residual_blocks;
      EXPECT_EQ(g, 4) << name;
    }
  }
  EXPECT_EQ(final_groups, 8);
  EXPECT_GT(residual_blocks, 0);
  cfg.down_dims = {12, 24};  // multiples of n_groups=4, but the final block needs a multiple of 8
  try {
    cfg.validate();
    ADD_FAILURE() << "down_dims[0]=12 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "policy.down_dims") << e.what();
  }
}

TEST(DiffusionConfigJson, KeysAndDefaultsAreLeRobots) {
  DiffusionConfig c;
  Json j = Json::parse(policy_config_json(c));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::vector<std::string> a = keys, b = kLeRobotDiffusionKeys;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(keys.front(), "type");
  EXPECT_EQ(j["type"], "diffusion");
  EXPECT_EQ(j["n_obs_steps"], 2);
  EXPECT_EQ(j["horizon"], 64);
  EXPECT_EQ(j["n_action_steps"], 32);
  EXPECT_EQ(j["drop_n_last_frames"], 7);
  EXPECT_EQ(j["normalization_mapping"]["STATE"], "MIN_MAX");
  EXPECT_EQ(j["normalization_mapping"]["ACTION"], "MIN_MAX");
  EXPECT_EQ(j["normalization_mapping"]["VISUAL"], "MEAN_STD");
  EXPECT_TRUE(j["crop_shape"].is_null());
  EXPECT_TRUE(j["resize_shape"].is_null());
  EXPECT_TRUE(j["num_inference_steps"].is_null());
  EXPECT_EQ(j["down_dims"], Json::array({512, 1024, 2048}));
  EXPECT_EQ(j["optimizer_betas"], Json::array({0.95, 0.999}));
  EXPECT_EQ(j["use_separate_rgb_encoder_per_camera"], true);
  EXPECT_EQ(j["pretrained_backbone_weights"], "ResNet18_Weights.IMAGENET1K_V1");

  // The preset: Adam, betas (0.95, 0.999), wd 1e-6, cosine with 500 warm-up steps.
  auto preset = c.training_preset();
  ASSERT_TRUE(preset.has_value());
  EXPECT_EQ(preset->optimizer.type, "adam");
  EXPECT_DOUBLE_EQ(preset->optimizer.lr, 1e-4);
  EXPECT_EQ(preset->optimizer.betas, (std::vector<double>{0.95, 0.999}));
  EXPECT_DOUBLE_EQ(preset->optimizer.weight_decay, 1e-6);
  ASSERT_TRUE(preset->scheduler.has_value());
  EXPECT_EQ(preset->scheduler->name, "cosine");
  EXPECT_EQ(preset->scheduler->num_warmup_steps, 500);
  EXPECT_EQ(*c.observation_delta_indices(), (std::vector<int64_t>{-1, 0}));
  EXPECT_EQ(c.action_delta_indices()->front(), -1);
  EXPECT_EQ(c.action_delta_indices()->size(), 64u);
  EXPECT_EQ(c.drop_n_last_frames(), 7);
}

TEST(DiffusionConfigJson, ReadsPre2026ConfigJson) {
  // A config.json as LeRobot wrote it before the 2026 default change: no resize_shape,
  // crop_ratio, gradient_checkpointing or compile_mode keys.
  Json j = Json::parse(policy_config_json(DiffusionConfig()));
  for (const char* k : {"resize_shape", "crop_ratio", "gradient_checkpointing", "compile_mode"}) j.erase(k);
  j["horizon"] = 16;
  j["n_action_steps"] = 8;
  j["crop_shape"] = Json::array({84, 84});
  j["pretrained_backbone_weights"] = nullptr;
  j["use_group_norm"] = true;
  j["use_separate_rgb_encoder_per_camera"] = false;
  j["input_features"] = Json::parse(R"({"observation.image": {"type": "VISUAL", "shape": [3, 96, 96]},
                                        "observation.state": {"type": "STATE", "shape": [2]}})");
  j["output_features"] = Json::parse(R"({"action": {"type": "ACTION", "shape": [2]}})");
  const auto dir = make_temp_dir("diffusion_old_config");
  write_file_atomic(stdfs::path(dir) / "config.json", dump_pretty(j));
  auto cfg = load_policy_config(stdfs::path(dir) / "config.json", std::string("diffusion"));
  auto* d = dynamic_cast<DiffusionConfig*>(cfg.get());
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->horizon, 16);
  EXPECT_EQ(d->n_action_steps, 8);
  EXPECT_EQ(d->crop_shape, (std::vector<int64_t>{84, 84}));
  EXPECT_EQ(d->effective_crop_shape(), (std::vector<int64_t>{84, 84}));
  EXPECT_TRUE(d->use_group_norm);
  EXPECT_FALSE(d->use_separate_rgb_encoder_per_camera);
  EXPECT_DOUBLE_EQ(d->crop_ratio, 1.0);  // absent: today's default
  EXPECT_FALSE(d->resize_shape.has_value());
  d->validate();
  DiffusionPolicy policy(*d, false);
  EXPECT_TRUE(policy.state_dict().count("diffusion.rgb_encoder.backbone.1.weight"));
}

TEST(DiffusionConfigJson, BadValuesAreUsageErrorsNamingTheField) {
  auto expect_error = [](DiffusionConfig c, const std::string& where) {
    try {
      c.validate();
      ADD_FAILURE() << "no error for " << where;
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), where) << e.what();
    }
  };
  auto c = small_config();
  c.horizon = 10;  // not a multiple of 2^2
  expect_error(c, "policy.horizon");
  c = small_config();
  c.n_action_steps = 8;  // > horizon - n_obs + 1 = 7
  expect_error(c, "policy.n_action_steps");
  c = small_config();
  c.prediction_type = "v_prediction";
  expect_error(c, "policy.prediction_type");
  c = small_config();
  c.use_group_norm = true;
  c.pretrained_backbone_weights = "ResNet18_Weights.IMAGENET1K_V1";
  expect_error(c, "policy.use_group_norm");
  c = small_config();
  c.crop_ratio = 0.0;
  expect_error(c, "policy.crop_ratio");
  // resize + crop_ratio derives the crop (int(resize * ratio)); ratio 1 drops an explicit crop.
  c = small_config();
  c.resize_shape = std::vector<int64_t>{40, 50};
  c.crop_ratio = 0.9;
  EXPECT_EQ(c.effective_crop_shape(), (std::vector<int64_t>{36, 45}));
  c.crop_ratio = 1.0;
  c.crop_shape = std::vector<int64_t>{8, 8};
  EXPECT_FALSE(c.effective_crop_shape().has_value());
}

}  // namespace
}  // namespace lerobot
