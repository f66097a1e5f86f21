// lerobot-cpp-train (#19): the Python launcher that accelerate and torchrun run through the
// interpreter. Run as accelerate runs it (`python3 LAUNCHER ...`) and as a plain command, it gives
// the run the binary gives: the same final weights, bit for bit.
#include <gtest/gtest.h>

#include "train_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;

const fs::path kLauncher = fs::path(LEROBOT_CLI).parent_path() / "lerobot-cpp-train";

int run(const std::string& command, std::string* output) { return run_shell(command, output); }

fs::path final_weights(const fs::path& out) { return out / "checkpoints" / "last" / "pretrained_model" / "model.safetensors"; }

TEST(TrainLauncher, ThroughThePythonInterpreterAndAsACommandItIsTheBinarysRun) {
  ASSERT_TRUE(fs::exists(kLauncher)) << kLauncher;
  const fs::path dir = train_scratch() / "launcher";
  fs::remove_all(dir);
  const fs::path by_binary = dir / "binary", by_python = dir / "python", by_command = dir / "command";
  std::string log;
  ASSERT_EQ(run_cli("train" + join_args(tiny_act_run(by_binary, 2)), &log), 0) << log;
  std::string py_log, cmd_log;
  // accelerate launch / torchrun run `python SCRIPT ARGS` in each process.
  ASSERT_EQ(run("python3 " + kLauncher.string() + join_args(tiny_act_run(by_python, 2)), &py_log), 0) << py_log;
  ASSERT_EQ(run(kLauncher.string() + join_args(tiny_act_run(by_command, 2)), &cmd_log), 0) << cmd_log;
  EXPECT_NE(py_log.find("Training finished at step 2"), std::string::npos) << py_log;
  ASSERT_TRUE(fs::exists(final_weights(by_binary)));
  EXPECT_EQ(count_different_tensors(final_weights(by_binary), final_weights(by_python)), 0);
  EXPECT_EQ(count_different_tensors(final_weights(by_binary), final_weights(by_command)), 0);
  // A different seed is a different run: the comparison can tell runs apart.
  const fs::path other = dir / "other_seed";
  std::string other_log;
  ASSERT_EQ(run("python3 " + kLauncher.string() + join_args(tiny_act_run(other, 2, {"--seed=8"})), &other_log), 0)
      << other_log;
  EXPECT_GT(count_different_tensors(final_weights(by_binary), final_weights(other)), 0);
}

TEST(TrainLauncher, ArgumentsAndEnvironmentPassThroughUntouched) {
  std::string out;
  // The binary's own usage error, word for word: the launcher added or dropped nothing.
  EXPECT_EQ(run("python3 " + kLauncher.string() + " --policy.chunck_size=3", &out), 2) << out;
  EXPECT_NE(out.find("--policy.chunck_size"), std::string::npos) << out;
  // accelerate's environment reaches the binary: its mixed precision is read (and checked) there.
  out.clear();
  EXPECT_EQ(run("ACCELERATE_MIXED_PRECISION=fp17 python3 " + kLauncher.string() + join_args(tiny_act_run(train_scratch() / "mp", 1)), &out), 2)
      << out;
  EXPECT_NE(out.find("'fp17'"), std::string::npos) << out;
  // Alone (no lerobot-cpp beside it or on PATH) it says what it looked for.
  const fs::path alone = train_scratch() / "alone" / "lerobot-cpp-train";
  fs::create_directories(alone.parent_path());
  fs::copy_file(kLauncher, alone, fs::copy_options::overwrite_existing);
  out.clear();
  EXPECT_EQ(run("env -u LEROBOT_CPP PATH=/usr/bin:/bin python3 " + alone.string() + " --help", &out), 1) << out;
  EXPECT_NE(out.find("cannot find the lerobot-cpp binary"), std::string::npos) << out;
}

}  // namespace
}  // namespace lerobot
