// Checkpoints both ways with Python LeRobot 0.6.2 at tiny sizes. tests/policies/data/
// pi_lerobot_checkpoints/<layout>/ are what LeRobot's PI05Policy / PI0Policy.save_pretrained
// wrote (scripts/python_lerobot/pi_checkpoints.py write) for pi_reference.py's formula weights:
//  - they load here through the same path as any pretrained_model (load_pretrained: config.json,
//    then the weights with LeRobot's key fixing; transformers 5.12 wrote SigLIP's keys without the
//    vision_model level, which is given back) and predict LeRobot's chunk for the same noise;
//  - what save_pretrained writes here for the same weights is LeRobot's file: every tensor under
//    the same name (with the vision_model level LeRobot 0.6.2's pinned transformers and openpi
//    use), dtype, shape and bits, and config.json holds LeRobot's keys and values. Such a folder
//    was loaded into LeRobot strictly by `pi_checkpoints.py load` (docs/PYTHON_RUNS.md).
#include <gtest/gtest.h>
#include <stdlib.h>

#include "lerobot/common/fs.h"
#include "lerobot/policies/pretrained_io.h"
#include "pi_test_helpers.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::reference_json;

fs::path lerobot_checkpoint(const std::string& layout) {
  return fs::path(LEROBOT_SOURCE_DIR) / "tests/policies/data/pi_lerobot_checkpoints" / layout;
}

// LEROBOT_PI_ARCH naming the layout's tiny sizes while alive.
class TinyArch {
 public:
  explicit TinyArch(const Json& tiny) {
    path_ = fs::temp_directory_path() / ("pi_arch_" + std::to_string(::getpid()) + ".json");
    Json arch = {{"vocab_size", tiny["vocab_size"]}, {"vision", tiny["vision"]}, {"gemma", tiny["gemma"]}};
    write_file_atomic(path_, arch.dump());
    ::setenv("LEROBOT_PI_ARCH", path_.c_str(), 1);
  }
  ~TinyArch() {
    ::unsetenv("LEROBOT_PI_ARCH");
    fs::remove(path_);
  }

 private:
  fs::path path_;
};

class PiLeRobotCheckpoint : public ::testing::TestWithParam<std::string> {
 protected:
  const Json& layout() const { return reference_json("pi")["layouts"][GetParam()]; }
  const Json& tiny() const { return layout()["config"]["tiny"]; }
  bool bf16() const { return tiny()["dtype"] == "bfloat16"; }
};

TEST_P(PiLeRobotCheckpoint, LeRobotsCheckpointLoadsHereAndPredictsItsChunk) {
  TinyArch arch(tiny());
  PolicyPtr loaded = load_pretrained(lerobot_checkpoint(GetParam()));
  auto* policy = dynamic_cast<PiPolicy*>(loaded.get());
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(policy->pi_config().dtype, tiny()["dtype"].get<std::string>());
  const auto file = load_safetensors(lerobot_checkpoint(GetParam()) / "model.safetensors");
  for (const auto& [name, t] : policy->state_dict()) {
    auto it = file.find(testing::pi_reference_name(name));
    ASSERT_NE(it, file.end()) << name;
    EXPECT_EQ(t.scalar_type(), it->second.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(t, it->second)) << name;
  }
  const double tol = bf16() ? 3e-2 : 1e-4;
  testing::expect_close(policy->predict_action_chunk(testing::pi_batch(tiny()), testing::pi_noise(tiny())).flatten(),
                        layout()["chunk"], tol, tol, "chunk from LeRobot's checkpoint");
}

TEST_P(PiLeRobotCheckpoint, WhatWeWriteIsWhatLeRobotWrote) {
  auto policy = testing::make_pi_policy(layout());
  testing::pi_fill(*policy);
  // PI_CHECKPOINT_KEEP=DIR keeps the folder as DIR/<layout>, for `pi_checkpoints.py load`.
  const char* keep = std::getenv("PI_CHECKPOINT_KEEP");
  const fs::path dir = keep ? fs::path(keep) / GetParam()
                            : fs::temp_directory_path() / ("pi_ckpt_" + std::to_string(::getpid()) + "_" + GetParam());
  save_pretrained(*policy, dir);
  const auto ours = load_safetensors(dir / "model.safetensors");
  const auto theirs = load_safetensors(lerobot_checkpoint(GetParam()) / "model.safetensors");
  ASSERT_EQ(ours.size(), theirs.size());
  for (const auto& [name, t] : ours) {
    auto it = theirs.find(testing::pi_reference_name(name));
    ASSERT_NE(it, theirs.end()) << name;
    EXPECT_EQ(t.scalar_type(), it->second.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(t, it->second)) << name;
  }
  const Json mine = Json::parse(read_file(dir / "config.json"));
  const Json lerobot = Json::parse(read_file(lerobot_checkpoint(GetParam()) / "config.json"));
  for (const auto& [key, value] : lerobot.items()) {
    ASSERT_TRUE(mine.contains(key)) << key;
    if (key == "push_to_hub") continue;  // false here on purpose: nothing is pushed from lerobot.cpp
    EXPECT_EQ(mine[key], value) << key;
  }
  for (const auto& [key, value] : mine.items()) EXPECT_TRUE(lerobot.contains(key)) << "a key LeRobot does not write: " << key;
  if (!keep) fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Layouts, PiLeRobotCheckpoint, ::testing::Values("pi05_bf16", "pi0"));

}  // namespace
}  // namespace lerobot
