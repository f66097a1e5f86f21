// `lerobot-cpp estimate --peft.*` for π0/π0.5 at full size (no model built, no checkpoint needed):
// LeRobot's default LoRA targets count what LeRobot + PEFT would add. The expected figures are
// worked by hand from the full sizes (gemma_300m expert: width 1024, 8 query heads and 1 KV head of
// 256, 18 layers; max_state_dim = max_action_dim = 32): r · (in + out) per target.
#include <gtest/gtest.h>

#include "support/run_command.h"

namespace lerobot {
namespace {

using testing::run_cli;

TEST(LoraEstimate, FullSizePiAdaptersWithLeRobotsDefaultTargets) {
  std::string log;
  // π0.5: 18 x (q 1024->2048, v 1024->256) + action_in 32->1024 + action_out 1024->32, r = 16:
  // 18·16·3072 + 18·16·1280 + 2·16·1056 = 1287168; AdamW 8 bytes each = 9.8 MB.
  ASSERT_EQ(run_cli("estimate --policy.type=pi05 --peft.r=16", &log), 0) << log;
  EXPECT_NE(log.find("LoRA r=16 (lora_alpha 8) on 38 modules: 1287168 trainable parameters (0.031% of 4143404816); "
                     "AdamW state 9.8 MB"), std::string::npos) << log;
  // π0 adds state_proj (32->1024), action_time_mlp_in (2048->1024) and _out (1024->1024).
  ASSERT_EQ(run_cli("estimate --policy.type=pi0 --peft.r 16", &log), 0) << log;
  EXPECT_NE(log.find("on 41 modules: 1385984 trainable parameters"), std::string::npos) << log;
  // A list of names matches by suffix (PEFT): every q_proj/v_proj, the vision tower's 27 layers too.
  ASSERT_EQ(run_cli("estimate --policy.type=pi05 --peft.r=16 '--peft.target_modules=[q_proj,v_proj]'", &log), 0) << log;
  EXPECT_NE(log.find("on 126 modules"), std::string::npos) << log;
  // Without --peft.*, no LoRA line; another method is refused by name.
  ASSERT_EQ(run_cli("estimate --policy.type=pi05", &log), 0) << log;
  EXPECT_EQ(log.find("LoRA r="), std::string::npos) << log;
  EXPECT_EQ(run_cli("estimate --policy.type=pi05 --peft.method_type=IA3", &log), 2) << log;
  EXPECT_NE(log.find("peft.method_type"), std::string::npos) << log;
}

}  // namespace
}  // namespace lerobot
