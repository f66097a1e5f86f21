// π0/π0.5 relative actions against LeRobot 0.6.2 itself
// (scripts/python_lerobot/pi_relative_actions_reference.py: tests/policies/data/
// pi_relative_actions_reference.json). For each recorded case (an excluded joint matched exactly
// and case-blind, one matched as a substring, no action names, fewer names than dimensions): the
// mask is LeRobot's, the preprocessed action (relative, then normalized) and the postprocessed
// actions (unnormalized, then the state added) are LeRobot's, the state added after an
// observation is that observation's (LeRobot's cached state), LeRobot's folder loads here with
// relative actions on and ours writes the same JSON files (enabled, exclude_joints, action_names).
// The config, stats and batch are pi_processors_reference.py's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <set>

#include "lerobot/common/config/config.h"
#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/observation_inputs.h"
#include "lerobot/policies/pi0/configuration_pi0.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/processor_io.h"
#include "pi_processor_fixtures.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

const fs::path kRelData = testing::pi_processor_data();

const Json& relative_reference() {
  static const Json j = Json::parse(read_file(kRelData / "pi_relative_actions_reference.json"));
  return j;
}

using testing::reference_tensor;

// The case's config (the scripts' two cameras, state 5, action 4) with relative actions on.
std::unique_ptr<PiConfigBase> relative_config(const Json& r) {
  auto c = testing::pi_processor_config(r.at("type") == "pi0", r.at("tokenizer_max_length").get<int64_t>());
  c->use_relative_actions = true;
  c->relative_exclude_joints = r.at("relative_exclude_joints").get<std::vector<std::string>>();
  if (!r.at("action_feature_names").is_null())
    c->action_feature_names = r.at("action_feature_names").get<std::vector<std::string>>();
  return c;
}

Batch relative_batch(const Json& b, std::vector<std::string>& tasks) {
  Batch out;
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (it.key() == "task") tasks = it.value().get<std::vector<std::string>>();
    else out[it.key()] = reference_tensor(it.value());
  }
  return out;
}

void expect_same_floats(const torch::Tensor& ours, const Json& lerobot, const std::string& what) {
  const torch::Tensor e = reference_tensor(lerobot);
  ASSERT_EQ(ours.sizes(), e.sizes()) << what;
  EXPECT_TRUE(torch::allclose(ours.to(torch::kFloat32), e, 1e-5, 1e-5)) << what << "\n" << ours << "\nLeRobot\n" << e;
}

// The steps' JSON as Python compares dicts (key order aside).
void expect_same_steps(const Json& ours, const Json& lerobot, const std::string& what) {
  ASSERT_EQ(ours.at("steps").size(), lerobot.at("steps").size()) << what;
  for (size_t i = 0; i < ours.at("steps").size(); ++i)
    EXPECT_EQ(nlohmann::json::parse(ours.at("steps")[i].dump()), nlohmann::json::parse(lerobot.at("steps")[i].dump()))
        << what << " step " << i;
}

// The observation's raw state as the deployment path hands it out, and the normalized batch.
Batch deployment_inputs(const PiConfigBase& cfg, const PolicyProcessors& p, const Json& observation, torch::Tensor& state) {
  std::vector<std::string> tasks;
  const Batch raw = relative_batch(observation, tasks);
  std::map<std::string, torch::Tensor> obs(raw.begin(), raw.end());
  return observation_inputs(
      cfg, p, obs, tasks, torch::Device(torch::kCPU),
      [](const std::string&, const std::string&, const PolicyFeature&, const torch::Tensor& x) { return x; },
      [](const std::string& key) { FAIL() << "missing " << key; }, &state);
}

class PiRelativeActions : public ::testing::TestWithParam<std::string> {};

TEST_P(PiRelativeActions, PreAndPostprocessingAreLeRobots) {
  testing::PaliGemmaTokenizerResolver resolver;
  const Json& r = relative_reference().at(GetParam());
  auto cfg = relative_config(r);
  const PolicyProcessors p = make_policy_processors(*cfg, testing::pi_processor_stats(), "cpu");
  ASSERT_TRUE(p.adds_state());
  EXPECT_EQ(p.relative_actions->mask(4), r.at("mask").get<std::vector<bool>>());

  std::vector<std::string> tasks;
  const Batch raw = relative_batch(r.at("batch"), tasks);
  const Batch out = p.preprocess(raw, tasks);
  expect_same_floats(out.at("action"), r.at("pre").at("action"), "preprocessed action");
  expect_same_floats(out.at("observation.state"), r.at("pre").at("observation.state"), "normalized state");
  const torch::Tensor state = raw.at("observation.state");
  expect_same_floats(p.postprocess_action(out.at("action"), state), r.at("post"), "postprocessed action");
  expect_same_floats(p.postprocess_action(reference_tensor(r.at("model_action")), state), r.at("post_model"),
                     "postprocessed model chunk");

  // A later observation: its state is the one added (LeRobot's cache holds the last one preprocessed).
  torch::Tensor obs_state;
  deployment_inputs(*cfg, p, r.at("observation"), obs_state);
  ASSERT_TRUE(obs_state.defined());
  expect_same_floats(obs_state, r.at("observation").at("observation.state"), "the state handed out");
  expect_same_floats(p.postprocess_action(reference_tensor(r.at("model_step")), obs_state), r.at("post_after_observation"),
                     "postprocessed step after the observation");
  EXPECT_FALSE(torch::allclose(p.postprocess_action(reference_tensor(r.at("model_step")), state),
                               reference_tensor(r.at("post_after_observation"))))
      << "the batch's state gives the same action as the later observation's: the state would not matter";

  // With relative actions on, a postprocessing without a state is refused (LeRobot: no state cached).
  try {
    p.postprocess_action(reference_tensor(r.at("model_step")));
    FAIL() << "postprocessed without a state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("observation.state"), std::string::npos) << e.what();
  }
}

TEST_P(PiRelativeActions, LeRobotsFolderLoadsAndOursWritesTheSameFiles) {
  testing::PaliGemmaTokenizerResolver resolver;
  const Json& r = relative_reference().at(GetParam());
  const fs::path dir = testing::make_temp_dir("pi_relative_lerobot_" + GetParam());
  write_file_atomic(fs::path(dir) / "policy_preprocessor.json", r.at("preprocessor").dump(2));
  write_file_atomic(fs::path(dir) / "policy_postprocessor.json", r.at("postprocessor").dump(2));
  for (const auto& f : r.at("files")) {
    const std::string name = f.get<std::string>();
    if (name.rfind("tokenizer/", 0) == 0) {
      fs::create_directories(fs::path(dir) / "tokenizer");
      write_file_atomic(fs::path(dir) / name, read_file(kRelData / "gemma_tokenizer" / name.substr(10)));
    }
  }
  // The state files: ours hold the same stats (the script's formula), written under LeRobot's names.
  auto cfg = relative_config(r);
  const PolicyProcessors made = make_policy_processors(*cfg, testing::pi_processor_stats(), "cpu");
  save_safetensors(fs::path(dir) / made.normalizer_state_file(), made.normalizer.state_dict(), {});
  save_safetensors(fs::path(dir) / "policy_postprocessor_step_0_unnormalizer_processor.safetensors",
                   made.unnormalizer.state_dict(), {});

  const PolicyProcessors loaded = load_policy_processors(dir);
  ASSERT_TRUE(loaded.relative_actions);
  EXPECT_TRUE(loaded.relative_actions->enabled);
  EXPECT_EQ(loaded.relative_actions->exclude_joints, cfg->relative_exclude_joints);
  EXPECT_TRUE(loaded.relative_actions->action_names == cfg->action_feature_names);
  torch::Tensor obs_state;
  deployment_inputs(*cfg, loaded, r.at("observation"), obs_state);
  expect_same_floats(loaded.postprocess_action(reference_tensor(r.at("model_step")), obs_state),
                     r.at("reloaded_post_after_observation"), "LeRobot's folder, loaded here");

  const fs::path ours = testing::make_temp_dir("pi_relative_ours_" + GetParam());
  save_policy_processors(ours, made);
  expect_same_steps(Json::parse(read_file(fs::path(ours) / "policy_preprocessor.json")), r.at("preprocessor"), "preprocessor");
  expect_same_steps(Json::parse(read_file(fs::path(ours) / "policy_postprocessor.json")), r.at("postprocessor"),
                    "postprocessor");
  const PolicyProcessors again = load_policy_processors(ours);
  EXPECT_EQ(again.preprocessor_steps(), made.preprocessor_steps());
  EXPECT_TRUE(again.adds_state());

  // config.json: the three keys as LeRobot writes them (the rest of the dump: test_pi_configs).
  const Json dumped = to_json(*cfg);
  for (const char* key : {"use_relative_actions", "relative_exclude_joints", "action_feature_names"})
    EXPECT_EQ(nlohmann::json::parse(dumped.at(key).dump()), nlohmann::json::parse(r.at("config").at(key).dump())) << key;
}

INSTANTIATE_TEST_SUITE_P(Pi, PiRelativeActions,
                         ::testing::Values("pi0_relative", "pi05_relative_substring", "pi0_relative_unnamed",
                                           "pi05_relative_short_names"),
                         [](const auto& info) { return info.param; });

// The two steps' `enabled` must agree: a relative preprocessor with a postprocessor that would
// leave the actions relative is a checkpoint error naming the file.
TEST(PiRelativeActionsFiles, MismatchedStepsAreRefused) {
  testing::PaliGemmaTokenizerResolver resolver;
  const Json& r = relative_reference().at("pi0_relative");
  auto cfg = relative_config(r);
  const fs::path dir = testing::make_temp_dir("pi_relative_mismatch");
  save_policy_processors(dir, make_policy_processors(*cfg, testing::pi_processor_stats(), "cpu"));
  Json post = Json::parse(read_file(fs::path(dir) / "policy_postprocessor.json"));
  for (auto& s : post["steps"])
    if (s.at("registry_name") == "absolute_actions_processor") s["config"]["enabled"] = false;
  write_file_atomic(fs::path(dir) / "policy_postprocessor.json", post.dump(2));
  try {
    load_policy_processors(dir);
    FAIL() << "a relative preprocessor with a disabled absolute step was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCheckpoint);
    EXPECT_NE(std::string(e.what()).find("policy_postprocessor.json"), std::string::npos) << e.what();
  }
}

// LeRobot's to_relative_actions needs the state's first A values: a narrower state is a usage
// error naming observation.state (LeRobot fails in broadcasting).
TEST(PiRelativeActionsFiles, AStateNarrowerThanTheActionIsRefused) {
  RelativeActions r;
  r.enabled = true;
  const torch::Tensor action = torch::zeros({2, 3, 4});
  EXPECT_TRUE(torch::equal(r.to_relative(action, torch::ones({2, 5})), -torch::ones({2, 3, 4})));
  try {
    r.to_relative(action, torch::ones({2, 3}));
    FAIL() << "a 3-value state was taken for a 4-value action";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("observation.state"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lerobot
