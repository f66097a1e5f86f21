// #18 point 9, --rename_map as LeRobot 0.6.2 applies it: a dataset whose keys are `actions`,
// `state` and `image` trains with a map onto LeRobot's names (features, delta windows, stats and
// every batch renamed), the checkpoint holds the renamed features and the map (train_config.json
// and the preprocessor), and `infer --dataset.root` on that dataset runs; without the map the
// error names the dataset's keys and the map that fixes it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/dataset_writer.h"
#include "lerobot/policies/processor_io.h"
#include "train_test_helpers.h"

using namespace lerobot;
using namespace lerobot::testing;

namespace {

const fs::path& foreign_keys_dataset() {
  static const fs::path root = [] {
    const fs::path r = train_scratch() / "foreign_keys_ds";
    std::vector<FeatureSpec> feats = {
        {"state", "float32", {2}, Json::array({"a", "b"}), Json()},
        {"image", "video", {64, 64, 3}, Json::array({"height", "width", "channels"}), Json()},
        {"actions", "float32", {2}, Json::array({"a", "b"}), Json()}};
    DatasetWriter w(r, 10, feats);
    for (int64_t e = 0; e < 3; ++e) {
      for (int64_t i = 0; i < 10; ++i) {
        const float t = float(i) / 10.0f + float(e);
        auto img = (torch::ones({64, 64, 3}) * (40.0f + 10.0f * float(i) + 30.0f * float(e))).to(torch::kUInt8);
        w.add_frame({{"state", torch::tensor({std::sin(t), std::cos(t)})},
                     {"image", img},
                     {"actions", torch::tensor({std::sin(t + 0.1f), std::cos(t + 0.1f)})}});
      }
      w.save_episode("reach");
    }
    w.finalize();
    return r;
  }();
  return root;
}

const std::string kMap = R"('--rename_map={"actions": "action", "state": "observation.state", "image": "observation.images.front"}')";

}  // namespace

TEST(RenameMap, ForeignKeysTrainWithAMapAndTheCheckpointRunsOnThatDataset) {
  const fs::path out = train_scratch() / "rename_run";
  std::string log;
  const int rc = run_cli("train" + join_args(tiny_act_run(out, 2, {"--dataset.root=" + foreign_keys_dataset().string(), kMap})), &log);
  ASSERT_EQ(rc, 0) << log;
  const fs::path ck = out / "checkpoints" / "last" / "pretrained_model";
  const Json config = load_json_or_yaml(ck / "config.json");
  EXPECT_TRUE(config["output_features"].contains("action")) << config["output_features"].dump();
  EXPECT_EQ(config["output_features"].size(), 1u);
  EXPECT_TRUE(config["input_features"].contains("observation.state")) << config["input_features"].dump();
  EXPECT_TRUE(config["input_features"].contains("observation.images.front"));
  EXPECT_EQ(config["input_features"]["observation.images.front"]["type"], "VISUAL");
  EXPECT_EQ(config["input_features"].size(), 2u);
  // The run's map is kept where LeRobot keeps it: train_config.json and the preprocessor's rename step.
  const Json train_config = load_json_or_yaml(ck / "train_config.json");
  EXPECT_EQ(train_config["rename_map"]["actions"], "action");
  const PolicyProcessors p = load_policy_processors(ck);
  EXPECT_EQ(p.rename_map.at("state"), "observation.state");
  EXPECT_EQ(p.rename_map.at("image"), "observation.images.front");
  // The normalizer holds the dataset's stats under the policy's keys.
  const TensorMap norm = load_safetensors(ck / kNormalizerStateFile);
  EXPECT_TRUE(norm.count("action.mean"));
  EXPECT_TRUE(norm.count("observation.state.mean"));
  EXPECT_FALSE(norm.count("actions.mean"));

  std::string infer;
  const int irc = run_cli("infer --policy.path=" + ck.string() + " --dataset.root=" + foreign_keys_dataset().string() +
                              " --frame=12",
                          &infer);
  ASSERT_EQ(irc, 0) << infer;
  EXPECT_NE(infer.find("action chunk 5 x 2"), std::string::npos) << infer;
  EXPECT_NE(infer.find("recorded action at that frame"), std::string::npos) << infer;
}

TEST(RenameMap, DatasetWithoutActionNamesItsKeysAndTheFix) {
  const fs::path out = train_scratch() / "rename_missing";
  std::string log;
  const int rc = run_cli("train" + join_args(tiny_act_run(out, 1, {"--dataset.root=" + foreign_keys_dataset().string()})), &log);
  EXPECT_EQ(rc, 3) << log;
  EXPECT_NE(log.find("no 'action' feature"), std::string::npos) << log;
  EXPECT_NE(log.find("'actions'"), std::string::npos) << log;
  EXPECT_NE(log.find("'state'"), std::string::npos) << log;
  EXPECT_NE(log.find(R"(--rename_map='{"state": "observation.state", "image": "observation.images.image", "actions": "action"}')"),
            std::string::npos)
      << log;
  EXPECT_FALSE(fs::exists(out / "checkpoints"));
  // Two keys onto one name would drop a feature: refused.
  log.clear();
  EXPECT_EQ(run_cli("train" + join_args(tiny_act_run(train_scratch() / "rename_dup",
                                                     1, {"--dataset.root=" + foreign_keys_dataset().string(),
                                                         R"('--rename_map={"actions": "action", "state": "action"}')"})),
                    &log),
            2)
      << log;
  EXPECT_NE(log.find("both"), std::string::npos) << log;
}
