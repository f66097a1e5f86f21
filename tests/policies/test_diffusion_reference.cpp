// Diffusion Policy against Python LeRobot 0.6.2 itself: tests/policies/data/diffusion_reference.json
// was written by scripts/python_lerobot/diffusion_reference.py, which builds LeRobot's
// DiffusionPolicy in two layouts (DDPM with BatchNorm, per-camera encoders and a random crop; DDIM
// with GroupNorm, one shared encoder, resize + crop, sample prediction and a padding-masked loss),
// fills every weight from a formula (computed here the same way) and records its state-dict layout,
// batch-norm statistics, noise schedule, processors, the training MSE for torch.manual_seed (crop
// offsets, noise and timesteps drawn by LeRobot, recorded too) with gradients, the chunk for a given
// x_T and select_action's actions for a seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "lerobot/policies/processor_io.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::expect_close;
using testing::formula_tensor;
using testing::reference_stats;

const std::vector<std::string> kLayouts = {"ddpm", "ddim"};

const Json& reference(const std::string& layout) { return testing::reference_json("diffusion")[layout]; }

std::vector<std::string> cameras(const std::string& layout) { return testing::reference_cameras(reference(layout)); }
int64_t env_dim(const std::string& layout) { return testing::reference_env_dim(reference(layout)); }

DiffusionConfig reference_config(const std::string& layout) {
  DiffusionConfig cfg;
  testing::apply_reference_config(cfg, reference(layout), "diffusion_reference.json");
  return cfg;
}

std::shared_ptr<DiffusionPolicy> make_policy(const std::string& layout) {
  auto policy =
      std::make_shared<DiffusionPolicy>(reference_config(layout), /*load_pretrained_backbone=*/false);
  testing::fill_reference_weights(*policy, {"running_mean", "running_var", "pos_grid"});
  return policy;
}

// The script's inputs(): n_obs_steps of observations, horizon actions, the second row's last three
// actions padding.
Batch inputs(const std::string& layout) {
  const auto& r = reference(layout);
  const int64_t B = r["batch"], n = r["config"]["n_obs_steps"], h = r["config"]["horizon"];
  const int64_t S = r["state_dim"], A = r["action_dim"];
  auto img = r["image_shape"].get<std::vector<int64_t>>();
  Batch b;
  b["observation.state"] = formula_tensor(101, {B, n, S});
  b["action"] = formula_tensor(103, {B, h, A});
  b["action_is_pad"] = torch::zeros({B, h}, torch::kBool);
  b["action_is_pad"].index_put_({1, torch::indexing::Slice(h - 3, h)}, true);
  if (env_dim(layout) > 0) b["observation.environment_state"] = formula_tensor(104, {B, n, env_dim(layout)});
  int64_t c = 0;
  for (const auto& cam : cameras(layout))
    b[cam] = formula_tensor(110 + c++, {B, n, img[0], img[1], img[2]}, 0.5, 0.5);
  return b;
}

Batch observations(const std::string& layout) { return testing::observations_of(inputs(layout)); }

// The script's norm_stats(): sums of all running means and variances, the num_batches_tracked values.
void expect_norm_stats(const Policy& policy, const Json& expected, const std::string& what) {
  double mean = 0, var = 0;
  std::set<int64_t> counts;
  for (const auto& [name, t] : policy.state_dict()) {
    if (testing::ends_with(name, "running_mean")) mean += t.to(torch::kDouble).sum().item<double>();
    if (testing::ends_with(name, "running_var")) var += t.to(torch::kDouble).sum().item<double>();
    if (testing::ends_with(name, "num_batches_tracked")) counts.insert(t.item<int64_t>());
  }
  expect_close(mean, expected["running_mean_sum"], 1e-4, 1e-4, what + " running_mean sum");
  expect_close(var, expected["running_var_sum"], 1e-5, 1e-4, what + " running_var sum");
  const auto want = expected["num_batches_tracked"].get<std::vector<int64_t>>();
  EXPECT_EQ(std::vector<int64_t>(counts.begin(), counts.end()), want) << what << " num_batches_tracked";
}

TEST(DiffusionReference, StateDictLayoutBatchNormStatisticsAndScheduleAreLeRobots) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    auto policy = make_policy(layout);
    const auto& r = reference(layout);
    testing::expect_state_dict_layout(policy->state_dict(), r["keys"]);
    EXPECT_EQ(static_cast<int64_t>(policy->parameters().size()), r["optim_params"].get<int64_t>());
    const auto crop = policy->diffusion_config().effective_crop_shape();
    ASSERT_TRUE(crop.has_value());
    EXPECT_EQ(*crop, r["crop_shape"].get<std::vector<int64_t>>());
    // LeRobot's construction dry run (a zero image through the backbone in training mode).
    expect_norm_stats(*policy, r["fresh_norm_stats"], "fresh");
    expect_close(policy->diffusion->noise_scheduler().alphas_cumprod(), r["alphas_cumprod"], 1e-6, 1e-7,
                 "alphas_cumprod");
  }
}

TEST(DiffusionReference, ProcessorsNormalizeAndUnnormalizeAsLeRobot) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto cfg = reference_config(layout);
    const auto& r = reference(layout);
    const auto processors = make_policy_processors(cfg, reference_stats(cfg));
    Batch raw;  // the last observation step, and the actions
    for (const auto& [k, v] : inputs(layout))
      if (k.rfind("observation", 0) == 0) raw[k] = v.select(1, v.size(1) - 1);
    raw["action"] = inputs(layout).at("action");
    const Batch normalized = processors.preprocess(raw);
    for (const auto& [key, expected] : r["preprocessed"].items()) {
      ASSERT_TRUE(normalized.count(key)) << key;
      const auto x = normalized.at(key).to(torch::kDouble);
      expect_close(x.sum().item<double>(), expected["sum"], 1e-5, 1e-4, key + " sum");
      expect_close(x.reshape({-1}).narrow(0, 0, std::min<int64_t>(8, x.numel())), expected["first"], 1e-5,
                   1e-6, key + " first values");
    }
    const int64_t B = r["batch"], A = r["action_dim"];
    expect_close(processors.postprocess_action(formula_tensor(120, {B, cfg.n_action_steps, A})),
                 r["postprocessed_action"], 1e-6, 1e-6, "unnormalized action");
  }
}

TEST(DiffusionReference, SeededNoiseAndTimestepsAreTheOnesLeRobotDrew) {
  // The draws of a training forward in LeRobot's order: each encoder's crop offsets (top, left),
  // then the noise, then the timesteps.
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto& r = reference(layout);
    const auto cfg = reference_config(layout);
    const auto img = r["image_shape"].get<std::vector<int64_t>>();
    const auto seen = cfg.resize_shape.value_or(std::vector<int64_t>{img[1], img[2]});
    const auto crop = *cfg.effective_crop_shape();
    const size_t encoders = cfg.use_separate_rgb_encoder_per_camera ? cameras(layout).size() : 1;
    torch::manual_seed(r["seed"].get<uint64_t>());
    for (size_t e = 0; e < encoders; ++e)
      random_crop(torch::zeros({1, 1, seen[0], seen[1]}), crop[0], crop[1], false);
    const int64_t B = r["batch"];
    expect_close(torch::randn({B, cfg.horizon, r["action_dim"].get<int64_t>()}), r["noise"], 1e-6, 1e-7,
                 "noise");
    const auto t = torch::randint(0, cfg.num_train_timesteps, {B}, torch::kLong);
    EXPECT_EQ(std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + B),
              r["timesteps"].get<std::vector<int64_t>>());
  }
}

TEST(DiffusionReference, TrainingLossGradientsAndBatchNormUpdateAreLeRobots) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto& r = reference(layout);
    auto policy = make_policy(layout);
    policy->train();
    torch::manual_seed(r["seed"].get<uint64_t>());
    auto out = policy->forward(inputs(layout));
    out.loss.backward();
    expect_close(out.loss.item<double>(), r["loss"], 1e-5, 1e-6, "loss");
    EXPECT_TRUE(out.values.empty()) << "LeRobot's Diffusion logs nothing but the loss";
    testing::expect_gradient_sums(*policy, r["grads"], 1e-3);
    EXPECT_EQ(testing::parameters_without_grad(*policy), r["no_grad"].get<std::vector<std::string>>());
    auto final_conv = policy->diffusion->unet->final_conv[1]->as<torch::nn::Conv1d>();
    expect_close(final_conv->bias.grad(), r["final_conv_bias_grad"], 1e-4, 1e-6, "final_conv.1.bias grad");
    expect_norm_stats(*policy, r["trained_norm_stats"], "after the step");
  }
}

TEST(DiffusionReference, ChunkForAGivenStartAndSeededSelectActionsAreLeRobots) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto& r = reference(layout);
    const uint64_t seed = r["seed"];
    auto policy = make_policy(layout);
    const auto cfg = policy->diffusion_config();
    const Batch obs = observations(layout);
    const int64_t B = r["batch"];
    const auto x_t = formula_tensor(130, {B, cfg.horizon, r["action_dim"].get<int64_t>()});
    torch::manual_seed(seed);  // DDPM's noise at each step
    expect_close(policy->predict_action_chunk(obs, x_t), r["chunk"], 1e-4, 1e-5, "chunk");
    policy->reset();
    torch::manual_seed(seed + 1);
    for (size_t step = 0; step < r["select_actions"].size(); ++step) {
      const int64_t s = static_cast<int64_t>(step) % cfg.n_obs_steps;
      Batch o;
      for (const auto& [k, v] : obs) o[k] = v.select(1, s);
      o["observation.state"] = o["observation.state"] * (1 + 0.1 * static_cast<double>(step));
      expect_close(policy->select_action(o), r["select_actions"][step], 1e-4, 1e-5,
                   "action " + std::to_string(step));
    }
  }
}

}  // namespace
}  // namespace lerobot
