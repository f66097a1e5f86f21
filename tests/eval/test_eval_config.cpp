// Tests of `lerobot-cpp eval`'s flag parsing (EvalPipelineConfig).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/eval/eval_config.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

fs::path policy_dir() {
  const fs::path d = lerobot::testing::process_temp_dir() / "evalcfg";
  fs::create_directories(d);
  std::ofstream(d / "config.json") << R"({"type": "act", "device": "cuda"})";
  return d;
}

Error parse_error(const std::vector<std::string>& words) {
  try {
    parse_eval_config(words);
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorKind::kInternal, "no error");
}

TEST(EvalConfig, ParsesLeRobotFlagsAndOurs) {
  const fs::path dir = policy_dir();
  const EvalPipelineConfig cfg =
      parse_eval_config({"--policy.path=" + dir.string(), "--env.type=push2d", "--env.image_size=64", "--eval.n_episodes=4",
                         "--eval.batch_size=2", "--eval.blank_images=true", "--policy.device=cpu", "--seed=7",
                         "--cuda.graphs=false", "--cuda.channels_last=true", "--cuda.tf32=false"});
  EXPECT_EQ(cfg.env.type(), "push2d");
  EXPECT_EQ(cfg.env->image_size, 64);
  EXPECT_EQ(cfg.policy.type(), "act");
  EXPECT_EQ(cfg.policy->device.value_or(""), "cpu");  // the flag overrides config.json
  EXPECT_EQ(cfg.policy->pretrained_path.value_or(""), dir.string());
  EXPECT_EQ(cfg.eval.n_episodes, 4);
  EXPECT_EQ(cfg.resolved_batch_size(), 2);
  EXPECT_TRUE(cfg.eval.blank_images);
  EXPECT_EQ(cfg.seed, 7);
  EXPECT_FALSE(cfg.cuda.graphs);  // lerobot.cpp's --cuda.* as train's
  EXPECT_EQ(cfg.cuda.channels_last, std::optional<bool>(true));
  EXPECT_FALSE(cfg.cuda.tf32);
  EXPECT_TRUE(std::regex_match(cfg.resolved_output_dir(),
                               std::regex(R"(outputs/eval/\d{4}-\d{2}-\d{2}/\d{2}-\d{2}-\d{2}_push2d_act)")))
      << cfg.resolved_output_dir();
  const EvalPipelineConfig defaults = parse_eval_config({"--policy.path=" + dir.string(), "--env.type=reach2d"});
  EXPECT_EQ(defaults.seed, 1000);
  EXPECT_EQ(defaults.eval.n_episodes, 50);
  EXPECT_EQ(defaults.resolved_batch_size(), 50);
  // More environments than episodes: LeRobot's EvalConfig lowers the batch to n_episodes.
  EXPECT_EQ(parse_eval_config({"--policy.path=" + dir.string(), "--env.type=reach2d", "--eval.n_episodes=2",
                               "--eval.batch_size=5"}).resolved_batch_size(), 2);
  EXPECT_FALSE(defaults.eval.blank_images);
  EXPECT_TRUE(defaults.cuda.graphs && defaults.cuda.tf32 && defaults.cuda.cudnn_benchmark);  // as lerobot-eval
  EXPECT_FALSE(defaults.cuda.channels_last.has_value());
  EXPECT_FALSE(defaults.cuda.channels_last_enabled(true, "no"));  // eval runs in full precision
  fs::remove_all(dir);
}

TEST(EvalConfig, RejectsBadFlags) {
  const fs::path dir = policy_dir();
  const std::string path = "--policy.path=" + dir.string();
  Error e = parse_error({path, "--env.type=reach2d", "--eval.n_episode=3"});
  EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  EXPECT_NE((e.where() + e.fix()).find("n_episodes"), std::string::npos) << e.what();
  EXPECT_EQ(parse_error({"--env.type=reach2d"}).kind(), ErrorKind::kUsage);  // no --policy.path
  EXPECT_EQ(parse_error({path}).kind(), ErrorKind::kUsage);                   // no --env.type
  EXPECT_EQ(parse_error({path, "--env.type=reach3d"}).kind(), ErrorKind::kUsage);
  EXPECT_EQ(parse_error({path, "--env.type=reach2d", "--policy.type=act"}).kind(), ErrorKind::kUsage);
  EXPECT_EQ(parse_error({"--policy.path=/nonexistent/dir", "--env.type=reach2d"}).kind(), ErrorKind::kUsage);
  // LeRobot 0.6's rollout recording: its flags parse, and recording itself is refused by name.
  e = parse_error({path, "--env.type=reach2d", "--eval.recording=true"});
  EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  EXPECT_EQ(e.where(), "--eval.recording") << e.what();
  e = parse_error({path, "--env.type=reach2d", "--eval.recording_repo_id=me/rollouts"});
  EXPECT_EQ(e.where(), "--eval.recording_repo_id") << e.what();  // LeRobot: requires eval.recording=true
  fs::remove_all(dir);
}

// Every flag of LeRobot 0.6.2's EvalPipelineConfig and EvalConfig parses (lerobot-eval commands
// run unchanged), with what each sets.
TEST(EvalConfig, TakesEveryLeRobotEvalFlag) {
  const fs::path dir = policy_dir();
  const EvalPipelineConfig cfg = parse_eval_config(
      {"--policy.path=" + dir.string(), "--env.type=pusht", "--eval.n_episodes=3", "--eval.batch_size=0",
       "--eval.use_async_envs=false", "--eval.recording=false", "--eval.recording_private=true", "--output_dir=/tmp/x",
       "--job_name=j", "--seed=3", "--rename_map={\"a\": \"b\"}", "--trust_remote_code=true"});
  EXPECT_FALSE(cfg.eval.use_async_envs);
  EXPECT_FALSE(cfg.eval.recording);
  EXPECT_TRUE(cfg.eval.recording_private);
  EXPECT_TRUE(cfg.trust_remote_code);
  EXPECT_EQ(cfg.rename_map.at("a"), "b");
  EXPECT_EQ(cfg.resolved_batch_size(), 3);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lerobot
