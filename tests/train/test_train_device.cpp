// train's device flags end to end through the CLI: an unknown --policy.device is refused before
// anything is created, the device recorded in config.json is the resolved one, and a one-process
// NCCL run trains where CUDA and NCCL are present (refused, naming the flag, elsewhere).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/cuda.h>

#include <fstream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/record.h"

namespace lerobot {
namespace {

fs::path scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("lerobot_train_device_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

const fs::path& dataset() {
  static const fs::path root = [] {
    Reach2dEnvConfig env;
    env.image_size = 64;
    return record_expert_dataset(env, 3, scratch() / "reach2d").root;
  }();
  return root;
}

int run_cli(const std::string& args, std::string* output) {
  const std::string cmd = std::string(LEROBOT_CLI) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) output->append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string tiny_train(const fs::path& out, const std::string& extra) {
  return "train --policy.type=act --dataset.root=" + dataset().string() +
         " --policy.dim_model=16 --policy.n_heads=2 --policy.dim_feedforward=32 --policy.n_encoder_layers=1"
         " --policy.n_vae_encoder_layers=1 --policy.chunk_size=4 --policy.n_action_steps=4"
         " --policy.pretrained_backbone_weights=null --batch_size=2 --steps=2 --log_freq=1 --num_workers=1"
         " --output_dir=" + out.string() + " " + extra;
}

TEST(TrainDevice, AnUnknownDeviceIsRefusedBeforeAnythingIsCreated) {
  for (const std::string bad : {"tpu", "foo"}) {
    const fs::path out = scratch() / ("bad_" + bad);
    std::string text;
    EXPECT_EQ(run_cli(tiny_train(out, "--policy.device=" + bad), &text), 2) << text;
    EXPECT_NE(text.find("--policy.device"), std::string::npos) << text;
    EXPECT_NE(text.find("'" + bad + "'"), std::string::npos) << text;
    EXPECT_FALSE(fs::exists(out)) << "nothing is written for a refused run";
  }
}

TEST(TrainDevice, ConfigJsonRecordsTheResolvedDevice) {
  const fs::path out = scratch() / "cpu_run";
  std::string text;
  ASSERT_EQ(run_cli(tiny_train(out, "--policy.device=cpu"), &text), 0) << text;
  const Json cfg = Json::parse(read_file(out / "checkpoints/last/pretrained_model/config.json"));
  EXPECT_EQ(cfg.at("device"), "cpu");
}

#ifdef LEROBOT_WITH_NCCL
constexpr bool kNcclBuild = true;
#else
constexpr bool kNcclBuild = false;
#endif

TEST(TrainDevice, OneProcessNcclTrainsOnAGpuAndIsRefusedWithout) {
  const fs::path out = scratch() / "nccl_run";
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
}

}  // namespace
}  // namespace lerobot
