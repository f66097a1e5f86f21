// --accelerator.activation_checkpointing.mode=full through the trainer: a few ACT steps (dropout
// on, the VAE too) end with the same weights as the run without it, and a mode LeRobot does not
// have is refused naming the flag.
#include <gtest/gtest.h>

#include "lerobot/common/error.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using testing::run_train;
using testing::tiny_act_run;
using testing::train_scratch;

TEST(ActivationCheckpointingTrain, FullModeEndsWithTheSameActWeights) {
  const fs::path plain = train_scratch() / "ac_plain", full = train_scratch() / "ac_full";
  const auto a = run_train(tiny_act_run(plain, 3));
  const auto b = run_train(tiny_act_run(full, 3, {"--accelerator.activation_checkpointing.mode=full"}));
  ASSERT_EQ(a.final_step, 3);
  ASSERT_EQ(b.final_step, 3);
  EXPECT_NEAR(b.last_loss, a.last_loss, 1e-6 * std::abs(a.last_loss));
  const auto wa = testing::checkpoint_weights(plain, 3), wb = testing::checkpoint_weights(full, 3);
  ASSERT_EQ(wa.size(), wb.size());
  int64_t identical = 0, moved = 0;
  for (const auto& [name, t] : wa) {
    ASSERT_TRUE(wb.count(name)) << name;
    const auto x = t.to(torch::kDouble), y = wb.at(name).to(torch::kDouble);
    const double diff = (x - y).abs().max().item<double>(), scale = x.abs().max().item<double>() + 1e-30;
    EXPECT_LE(diff, 1e-6 * scale) << name;
    identical += torch::equal(t, wb.at(name));
  }
  // The comparison sees training: one step fewer gives other weights.
  const fs::path short_run = train_scratch() / "ac_short";
  run_train(tiny_act_run(short_run, 2));
  for (const auto& [name, t] : testing::checkpoint_weights(short_run, 2)) moved += !torch::equal(t, wa.at(name));
  EXPECT_GT(moved, 0);
  std::cout << "[ train      ] act, 3 steps: " << identical << " of " << wa.size()
            << " tensors bit-identical with and without activation checkpointing, the rest within 1e-6\n";
}

TEST(ActivationCheckpointingTrain, OtherModesAreRefusedByName) {
  try {
    run_train(tiny_act_run(train_scratch() / "ac_bad", 1, {"--accelerator.activation_checkpointing.mode=selective"}));
    FAIL() << "mode=selective accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("accelerator.activation_checkpointing.mode"), std::string::npos) << what;
    EXPECT_NE(what.find("selective"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace lerobot
