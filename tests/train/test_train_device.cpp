// train's device flags end to end through the CLI: an unknown --policy.device is refused before
// anything is created, the device recorded in config.json is the resolved one, and a one-process
// NCCL run trains where CUDA and NCCL are present (refused, naming the flag, elsewhere).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using testing::run_cli;
using testing::train_scratch;

std::string tiny_train(const fs::path& out, const std::string& extra) {
  return "train" + testing::join_args(testing::tiny_act_run(out, 2, {extra}));
}

TEST(TrainDevice, AnUnknownDeviceIsRefusedBeforeAnythingIsCreated) {
  for (const std::string bad : {"tpu", "foo"}) {
    const fs::path out = train_scratch() / ("bad_" + bad);
    std::string text;
    EXPECT_EQ(run_cli(tiny_train(out, "--policy.device=" + bad), &text), 2) << text;
    EXPECT_NE(text.find("--policy.device"), std::string::npos) << text;
    EXPECT_NE(text.find("'" + bad + "'"), std::string::npos) << text;
    EXPECT_FALSE(fs::exists(out)) << "nothing is written for a refused run";
  }
}

// The device_processor step of a policy_preprocessor.json.
Json device_step(const Json& pipeline) {
  for (const auto& step : pipeline.at("steps"))
    if (step.at("registry_name") == "device_processor") return step;
  ADD_FAILURE() << "no device_processor step in " << pipeline.dump();
  return Json::object();
}

TEST(TrainDevice, ConfigJsonRecordsTheResolvedDevice) {
  const fs::path out = train_scratch() / "cpu_run";
  std::string text;
  ASSERT_EQ(run_cli(tiny_train(out, "--policy.device=cpu"), &text), 0) << text;
  const Json cfg = Json::parse(read_file(out / "checkpoints/last/pretrained_model/config.json"));
  EXPECT_EQ(cfg.at("device"), "cpu");
  const Json pre = Json::parse(read_file(out / "checkpoints/last/pretrained_model/policy_preprocessor.json"));
  EXPECT_EQ(device_step(pre).at("config").at("device"), "cpu");
}

#ifdef LEROBOT_WITH_NCCL
constexpr bool kNcclBuild = true;
#else
constexpr bool kNcclBuild = false;
#endif

TEST(TrainDevice, OneProcessNcclTrainsOnAGpuAndIsRefusedWithout) {
  const fs::path out = train_scratch() / "nccl_run";
  std::string text;
  const int rc = run_cli(tiny_train(out, "--distributed.backend=nccl --policy.device=cuda"), &text);
  if (!kNcclBuild || !torch::cuda::is_available()) {
    EXPECT_EQ(rc, 2) << text;
    EXPECT_NE(text.find("--distributed.backend"), std::string::npos) << text;
    GTEST_SKIP() << "no " << (kNcclBuild ? "GPU" : "NCCL in this build")
                 << ": checked the refusal; the NCCL training run needs a GPU machine";
  }
  ASSERT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("(nccl)"), std::string::npos) << "the banner names the NCCL group:\n" << text;
  EXPECT_TRUE(fs::exists(out / "checkpoints/last/pretrained_model/model.safetensors"));
  // LeRobot records the device as given: "cuda" in config.json and in the preprocessor's device step.
  const Json cfg = Json::parse(read_file(out / "checkpoints/last/pretrained_model/config.json"));
  EXPECT_EQ(cfg.at("device"), "cuda");
  const Json pre = Json::parse(read_file(out / "checkpoints/last/pretrained_model/policy_preprocessor.json"));
  EXPECT_EQ(device_step(pre).at("config").at("device"), "cuda");
}

}  // namespace
}  // namespace lerobot
