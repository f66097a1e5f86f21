// ACT against Python LeRobot 0.6.2 itself: tests/policies/data/act_reference.json was written by
// scripts/python_lerobot/act_reference.py, which builds LeRobot's ACTPolicy in two layouts, fills
// every weight from a formula (computed here the same way, so no weights file is kept) and records
// its state-dict layout, optimizer groups, processors, training loss with its logged l1_loss and
// kld_loss and gradients (the VAE's latent noise from torch.manual_seed on both sides), the action
// chunk and select_action's actions (the action queue, and temporal ensembling).
#include <gtest/gtest.h>

#include <algorithm>

#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/processor_io.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::expect_close;
using testing::formula_tensor;
using testing::reference_stats;

const std::vector<std::string> kLayouts = {"default", "prenorm"};

const Json& reference(const std::string& layout) { return testing::reference_json("act")[layout]; }

std::vector<std::string> cameras(const std::string& layout) { return testing::reference_cameras(reference(layout)); }
int64_t env_dim(const std::string& layout) { return testing::reference_env_dim(reference(layout)); }

ACTConfig reference_config(const std::string& layout) {
  ACTConfig cfg;
  testing::apply_reference_config(cfg, reference(layout), "act_reference.json");
  return cfg;
}

std::shared_ptr<ACTPolicy> make_policy(const std::string& layout) {
  auto policy = std::make_shared<ACTPolicy>(reference_config(layout), /*load_pretrained_backbone=*/false);
  testing::fill_reference_weights(*policy, {"running_mean", "running_var", "vae_encoder_pos_enc"});
  return policy;
}

// The script's inputs(): a normalized-looking batch, the second row's last two actions padding.
Batch inputs(const std::string& layout) {
  const auto& r = reference(layout);
  const int64_t B = r["batch"], T = r["config"]["chunk_size"], S = r["state_dim"], A = r["action_dim"];
  auto img = r["image_shape"].get<std::vector<int64_t>>();
  Batch b;
  b["observation.state"] = formula_tensor(101, {B, S});
  b["action"] = formula_tensor(103, {B, T, A});
  b["action_is_pad"] = torch::zeros({B, T}, torch::kBool);
  b["action_is_pad"].index_put_({1, torch::indexing::Slice(T - 2, T)}, true);
  if (env_dim(layout) > 0) b["observation.environment_state"] = formula_tensor(104, {B, env_dim(layout)});
  int64_t c = 0;
  for (const auto& cam : cameras(layout))
    b[cam] = formula_tensor(110 + c++, {B, img[0], img[1], img[2]}, 0.5, 0.5);
  return b;
}

Batch observations(const std::string& layout) { return testing::observations_of(inputs(layout)); }

TEST(ACTReference, StateDictLayoutOptimizerGroupsAndPositionBufferAreLeRobots) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    auto policy = make_policy(layout);
    const auto& r = reference(layout);
    const auto sd = policy->state_dict();
    testing::expect_state_dict_layout(sd, r["keys"]);
    if (r.contains("vae_encoder_pos_enc")) {
      const auto pe = sd.at("model.vae_encoder_pos_enc").to(torch::kDouble);
      expect_close(pe.sum().item<double>(), r["vae_encoder_pos_enc"]["sum"], 1e-6, 1e-6,
                   "vae_encoder_pos_enc sum");
      expect_close(pe.abs().sum().item<double>(), r["vae_encoder_pos_enc"]["abs_sum"], 1e-6, 0,
                   "vae_encoder_pos_enc |sum|");
      expect_close(pe[0][1], r["vae_encoder_pos_enc"]["row1"], 1e-6, 1e-7, "vae_encoder_pos_enc row 1");
    }
    const auto groups = policy->optim_param_groups();
    ASSERT_EQ(groups.size(), r["optim_groups"].size());
    for (size_t g = 0; g < groups.size(); ++g) {
      EXPECT_EQ(static_cast<int64_t>(groups[g].params.size()), r["optim_groups"][g]["size"].get<int64_t>())
          << "group " << g;
      EXPECT_EQ(groups[g].lr.has_value(), !r["optim_groups"][g]["lr"].is_null()) << "group " << g;
      if (groups[g].lr) {
        EXPECT_DOUBLE_EQ(*groups[g].lr, r["optim_groups"][g]["lr"].get<double>());
      }
    }
  }
}

TEST(ACTReference, ProcessorsNormalizeAndUnnormalizeAsLeRobot) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto cfg = reference_config(layout);
    const auto& r = reference(layout);
    const auto processors = make_policy_processors(cfg, reference_stats(cfg));
    Batch raw = inputs(layout);
    raw.erase("action_is_pad");
    const Batch normalized = processors.preprocess(raw);
    for (const auto& [key, expected] : r["preprocessed"].items()) {
      ASSERT_TRUE(normalized.count(key)) << key;
      const auto x = normalized.at(key).to(torch::kDouble);
      expect_close(x.sum().item<double>(), expected["sum"], 1e-5, 1e-4, key + " sum");
      expect_close(x.reshape({-1}).narrow(0, 0, std::min<int64_t>(8, x.numel())), expected["first"], 1e-5,
                   1e-6, key + " first values");
    }
    const int64_t B = r["batch"], A = r["action_dim"];
    expect_close(processors.postprocess_action(formula_tensor(120, {B, cfg.chunk_size, A})),
                 r["postprocessed_action"], 1e-6, 1e-6, "unnormalized action");
  }
}

TEST(ACTReference, TrainingLossLoggedValuesAndGradientsAreLeRobots) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto& r = reference(layout);
    const uint64_t seed = r["seed"];
    const int64_t B = r["batch"], latent = r["config"]["latent_dim"];
    torch::manual_seed(seed);  // the normal draw behind the VAE's latent, as torch 2.6 gives it
    expect_close(torch::randn({B, latent}), r["seed_randn"], 1e-6, 1e-7, "torch.randn after manual_seed");

    auto policy = make_policy(layout);
    policy->train();
    torch::manual_seed(seed);
    auto out = policy->forward(inputs(layout));
    out.loss.backward();
    expect_close(out.loss.item<double>(), r["loss"], 1e-5, 1e-6, "loss");
    ASSERT_EQ(out.values.size(), r["values"].size()) << "logged values";
    for (const auto& [k, v] : r["values"].items()) {
      ASSERT_TRUE(out.values.count(k)) << "no logged value " << k;
      expect_close(out.values.at(k).item<double>(), v.get<double>(), 1e-5, 1e-6, k);
    }
    testing::expect_gradient_sums(*policy, r["grads"], 1e-3);
    EXPECT_EQ(testing::parameters_without_grad(*policy), r["no_grad"].get<std::vector<std::string>>());
    expect_close(policy->model->action_head->bias.grad(), r["action_head_bias_grad"], 1e-4, 1e-6,
                 "action_head.bias grad");
  }
}

TEST(ACTReference, ActionChunkAndSelectedActionsAreLeRobots) {
  for (const auto& layout : kLayouts) {
    SCOPED_TRACE(layout);
    const auto& r = reference(layout);
    auto policy = make_policy(layout);
    const Batch obs = observations(layout);
    expect_close(policy->predict_action_chunk(obs), r["chunk"], 1e-4, 1e-5, "action chunk");
    policy->reset();
    for (size_t step = 0; step < r["select_actions"].size(); ++step) {
      Batch o = obs;
      o["observation.state"] = obs.at("observation.state") * (1 + 0.1 * static_cast<double>(step));
      expect_close(policy->select_action(o), r["select_actions"][step], 1e-4, 1e-5,
                   "action " + std::to_string(step));
    }
  }
}

}  // namespace
}  // namespace lerobot
