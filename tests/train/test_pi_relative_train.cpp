// π0 trained with relative actions (LeRobot's --policy.use_relative_actions=true) through the
// command line at small sizes on the reach2d dataset (actions and state named ["x", "y"]): the
// checkpoint records the action names and both processor steps on, and what `infer`, the
// deployment API and `eval` give are absolute actions: the model's unnormalized chunk plus the
// current state on the dimensions not excluded, a queued action with the state of the step it is
// taken at (as LeRobot's postprocessor adds the last preprocessed observation's state).
// The processing itself against LeRobot: tests/policies/test_pi_relative_actions.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/inference.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/train/policy_features.h"
#include "pi_train_helpers.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

const Json& step_config(const Json& pipeline, const std::string& name) {
  for (const auto& s : pipeline.at("steps"))
    if (s.at("registry_name") == name) return s.at("config");
  throw std::runtime_error("no step " + name);
}

TEST(PiRelativeTrain, TrainsAndActsInAbsoluteUnits) {
  testing::PiEnv env;
  const fs::path out = testing::train_scratch() / "pi0_relative";
  const TrainResult result = testing::run_train(testing::tiny_pi_run(
      "pi0", out, 2, {"--policy.use_relative_actions=true", "--policy.relative_exclude_joints=[\"y\"]"}));
  EXPECT_TRUE(std::isfinite(result.last_loss));
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  const Json cfg = Json::parse(read_file(pm / "config.json"));
  EXPECT_EQ(cfg.at("use_relative_actions"), true);
  EXPECT_EQ(cfg.at("relative_exclude_joints"), Json::array({"y"}));
  EXPECT_EQ(cfg.at("action_feature_names"), Json::array({"x", "y"})) << "LeRobot's make_policy fills it from info.json";
  const Json rel = step_config(Json::parse(read_file(pm / "policy_preprocessor.json")), "relative_actions_processor");
  EXPECT_EQ(rel, (Json{{"enabled", true}, {"exclude_joints", Json::array({"y"})}, {"action_names", Json::array({"x", "y"})}}));
  EXPECT_EQ(step_config(Json::parse(read_file(pm / "policy_postprocessor.json")), "absolute_actions_processor"),
            (Json{{"enabled", true}}));

  const std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                                    {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  InferencePolicy policy(pm);
  policy.set_task("push the block");
  torch::manual_seed(3);
  const torch::Tensor chunk = policy.predict_action_chunk(obs);  // (4, 2)
  ASSERT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{4, 2}));
  torch::manual_seed(3);
  const torch::Tensor model = policy.policy().predict_action_chunk(policy.prepare(obs)).cpu();  // (1, 4, 2) normalized
  const torch::Tensor unnormalized = policy.processors().unnormalizer.unnormalize(Batch{{"action", model}}).at("action")[0];
  // x is relative: the state's 0.3 comes back; y is excluded: nothing is added.
  const torch::Tensor offset = torch::tensor({0.3f, 0.0f}).expand({4, 2});
  EXPECT_TRUE(torch::allclose(chunk - unnormalized, offset, 1e-5, 1e-5)) << chunk - unnormalized;

  // `infer` writes the same absolute chunk.
  save_safetensors(out / "obs.safetensors", TensorMap(obs.begin(), obs.end()));
  std::string log;
  ASSERT_EQ(testing::run_cli("infer --policy.path=" + pm.string() + " --observation=" + (out / "obs.safetensors").string() +
                                 " --task=\"push the block\" --seed=3 --output=" + (out / "chunk.safetensors").string(),
                             &log),
            0)
      << log;
  EXPECT_TRUE(torch::allclose(load_safetensors(out / "chunk.safetensors").at("action"), chunk, 1e-5, 1e-5));

  // select_action: the first action of the chunk, then the queued second one made absolute with
  // the NEXT observation's state (LeRobot's cached state is the last preprocessed observation's).
  policy.reset();
  torch::manual_seed(3);
  const torch::Tensor first = policy.select_action(obs);
  std::map<std::string, torch::Tensor> next = obs;
  next["observation.state"] = torch::tensor({-0.5f, 0.9f});
  const torch::Tensor second = policy.select_action(next);
  EXPECT_TRUE(torch::allclose(first, chunk[0], 1e-5, 1e-5)) << first << chunk[0];
  EXPECT_TRUE(torch::allclose(second, chunk[1] + torch::tensor({-0.8f, 0.0f}), 1e-5, 1e-5)) << second << chunk[1];
  EXPECT_TRUE(torch::allclose(policy.last_state(), torch::tensor({{-0.5f, 0.9f}})));

  // Real-time chunking: a leftover given in robot units goes back relative to the current state.
  policy.ensure_rtc("--left_over");
  torch::manual_seed(9);
  const auto guided = policy.predict_action_chunk(obs, chunk.slice(0, 1), 1);
  EXPECT_TRUE(torch::isfinite(guided).all().item<bool>());
  policy.set_rtc(std::nullopt);

  testing::expect_eval_on_reach2d(pm, out / "eval", 6);
}

// LeRobot's make_policy: the names come from the dataset feature that is "action" after the
// rename map (here "joints"), a names dict gives its keys, no names leave the field null, and a
// config without the field (ACT) is left alone.
TEST(PiRelativeTrain, ActionNamesComeFromTheRenamedActionFeature) {
  DatasetMetadata meta;
  meta.features = {{"observation.state", "float32", {3}, Json::array({"a", "b", "c"}), nullptr},
                   {"joints", "float32", {3}, Json::array({"shoulder", "elbow", "gripper"}), nullptr}};
  PI05Config pi05;
  fill_policy_features(pi05, meta, {{"joints", "action"}});
  ASSERT_TRUE(pi05.action_feature_names.has_value());
  EXPECT_EQ(*pi05.action_feature_names, (std::vector<std::string>{"shoulder", "elbow", "gripper"}));

  meta.features[1].names = Json{{"motors", Json::array({"m0", "m1", "m2"})}};
  PI05Config dict_names;
  fill_policy_features(dict_names, meta, {{"joints", "action"}});
  EXPECT_EQ(*dict_names.action_feature_names, (std::vector<std::string>{"motors"}));  // Python's list() of a dict

  meta.features[1].names = nullptr;
  PI05Config unnamed;
  fill_policy_features(unnamed, meta, {{"joints", "action"}});
  EXPECT_FALSE(unnamed.action_feature_names.has_value());

  meta.features[1].names = Json::array({"x", "y", "z"});
  ACTConfig act;
  fill_policy_features(act, meta, {{"joints", "action"}});
  EXPECT_EQ(act.output_features.at("action").shape, (std::vector<int64_t>{3}));
}

}  // namespace
}  // namespace lerobot
