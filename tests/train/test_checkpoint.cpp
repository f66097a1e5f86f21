// Checkpoint directories: LeRobot naming, atomic replacement of `last`, and survival of SIGKILL
// in the middle of a write.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/rng_state.h"
#include "support/run_command.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

fs::path fresh_dir(const std::string& name) {
  return lerobot::testing::fresh_temp_dir("ckpt_" + name);
}

CheckpointWriters writers_with(const std::string& marker) {
  CheckpointWriters w;
  w.pretrained_model = [marker](const fs::path& dir) {
    write_file_atomic(dir / "config.json", "{\"marker\": \"" + marker + "\"}");
    write_file_atomic(dir / "train_config.json", "{}");
  };
  w.training_state = [](const fs::path& dir) {
    TrainingStepInfo info;
    info.step = 1;
    write_file_atomic(dir / kTrainingStepFile, to_json(info).dump(4));
  };
  return w;
}

TEST(Checkpoint, StepIdIsZeroPaddedLikeLeRobot) {
  EXPECT_EQ(checkpoint_step_id(5000, 100000), "005000");
  EXPECT_EQ(checkpoint_step_id(7, 20), "000007");
  EXPECT_EQ(checkpoint_step_id(12, 1234567), "0000012");
  EXPECT_EQ(checkpoint_step_id(1234567, 1234567), "1234567");
}

TEST(Checkpoint, SaveCreatesLayoutAndRepointsLast) {
  const fs::path out = fresh_dir("layout");
  save_checkpoint(out, 10, 100, writers_with("a"));
  save_checkpoint(out, 20, 100, writers_with("b"));
  const fs::path root = out / "checkpoints";
  EXPECT_TRUE(fs::exists(root / "000010" / "pretrained_model" / "config.json"));
  EXPECT_TRUE(fs::exists(root / "000020" / "training_state" / "training_step.json"));
  ASSERT_TRUE(fs::is_symlink(root / "last"));
  EXPECT_EQ(fs::read_symlink(root / "last"), fs::path("000020"));  // relative, as LeRobot writes it
  EXPECT_NE(read_file(root / "last" / "pretrained_model" / "config.json").find("\"b\""), std::string::npos);
  for (const auto& e : fs::directory_iterator(root))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp", 0), std::string::npos) << e.path();
  // Saving the same step again replaces it whole.
  save_checkpoint(out, 20, 100, writers_with("c"));
  EXPECT_NE(read_file(root / "000020" / "pretrained_model" / "config.json").find("\"c\""), std::string::npos);
}

TEST(Checkpoint, SigkillDuringWriteLeavesPreviousCheckpointIntact) {
  const fs::path out = fresh_dir("kill");
  save_checkpoint(out, 10, 100, writers_with("good"));
  const fs::path started = out / "started";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    CheckpointWriters w = writers_with("partial");
    w.training_state = [&](const fs::path& dir) {
      std::ofstream(dir / "optimizer_state.safetensors") << std::string(1 << 20, 'x');  // half written
      std::ofstream(started) << "1";
      std::this_thread::sleep_for(std::chrono::seconds(60));
    };
    save_checkpoint(out, 20, 100, w);
    ::_exit(0);
  }
  for (int i = 0; i < 500 && !fs::exists(started); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(started)) << "child never reached the middle of the write";
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  const fs::path root = out / "checkpoints";
  EXPECT_FALSE(fs::exists(root / "000020"));
  EXPECT_EQ(fs::read_symlink(root / "last"), fs::path("000010"));
  EXPECT_NE(read_file(root / "last" / "pretrained_model" / "config.json").find("good"), std::string::npos);
  EXPECT_EQ(resolve_checkpoint_dir((root / "last" / "pretrained_model").string()), fs::canonical(root / "000010"));
  // The leftover temporary directory is cleaned up before the next save.
  bool had_tmp = false;
  for (const auto& e : fs::directory_iterator(root)) had_tmp |= e.path().filename().string().rfind(".tmp", 0) == 0;
  EXPECT_TRUE(had_tmp);
  remove_stale_checkpoint_temps(out);
  for (const auto& e : fs::directory_iterator(root))
    EXPECT_NE(e.path().filename().string().rfind(".tmp", 0), 0u) << e.path();
}

TEST(Checkpoint, ResolveRejectsIncompleteCheckpoint) {
  const fs::path out = fresh_dir("incomplete");
  fs::create_directories(out / "pretrained_model");
  try {
    resolve_checkpoint_dir((out / "pretrained_model").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--config_path"), std::string::npos);
  }
}

TEST(RngState, RestoresTorchGeneratorExactly) {
  const fs::path dir = fresh_dir("rng");
  set_seed(123);
  (void)torch::rand({5});
  save_rng_state(dir / kRngStateFile, 123);
  const auto a = torch::rand({8});
  (void)torch::rand({100});
  load_rng_state(dir / kRngStateFile);
  const auto b = torch::rand({8});
  EXPECT_TRUE(torch::equal(a, b));
  const TensorMap st = load_safetensors(dir / kRngStateFile);
  for (const char* k : {"py_rng_version", "py_rng_state", "np_rng_state_values", "np_rng_state_index",
                        "np_rng_has_gauss", "np_rng_cached_gaussian", "torch_rng_state"})
    EXPECT_TRUE(st.count(k)) << k;
  EXPECT_EQ(st.at("py_rng_state").numel(), 625);
  EXPECT_EQ(st.at("np_rng_state_values").numel(), 624);
}

// Evaluation inside a fork leaves the training stream where it was: the draws after it are the ones
// a run that never evaluated makes.
TEST(RngState, AForkPutsTheGeneratorBackAsItWas) {
  torch::manual_seed(5);
  torch::randn({3});
  const auto straight = torch::randn({4});
  torch::manual_seed(5);
  torch::randn({3});
  torch::Tensor inside;
  {
    RngFork fork(torch::kCPU);
    inside = torch::randn({4});
    torch::rand({100});
  }
  EXPECT_TRUE(torch::equal(inside, straight));         // the fork started from the same state...
  EXPECT_TRUE(torch::equal(torch::randn({4}), straight));  // ...and the stream goes on from it afterwards
}

// The CUDA generator saved with a checkpoint is the training GPU's (cuda:1 for the second rank), not
// always cuda:0; a CPU run keeps LeRobot's current device, cuda:0.
TEST(RngState, TheCudaGeneratorIsTheTrainingDevices) {
  EXPECT_EQ(rng_cuda_device(torch::Device("cuda:1")), torch::Device("cuda:1"));
  EXPECT_EQ(rng_cuda_device(torch::Device("cuda:0")), torch::Device("cuda:0"));
  EXPECT_EQ(rng_cuda_device(torch::kCPU), torch::Device("cuda:0"));
}

// The Python/numpy entries match what CPython and numpy hold after seeding (checked against the
// real interpreter: python_with_numpy_and_torch(); scripts/setup.sh installs Debian's python3-numpy).
TEST(RngState, PythonAndNumpyStatesMatchTheInterpreters) {
  const TensorMap st = capture_rng_state(1000);
  const std::string cmd = lerobot::testing::python_with_numpy_and_torch() + " -c \"import random, numpy as np; random.seed(1000); "
                    "print(random.getstate()[1][0], random.getstate()[1][623], random.getstate()[1][624]); "
                    "s=np.random.RandomState(1000).get_state(); print(s[1][0], s[1][623], s[2])\"";
  const auto run = lerobot::testing::run_command(cmd);
  ASSERT_EQ(run.code, 0) << run.out;
  std::istringstream printed(run.out);
  long long a, b, c, d, e, f;
  ASSERT_TRUE(printed >> a >> b >> c >> d >> e >> f) << run.out;
  const auto py = st.at("py_rng_state");
  EXPECT_EQ(py[0].item<int64_t>(), a);
  EXPECT_EQ(py[623].item<int64_t>(), b);
  EXPECT_EQ(py[624].item<int64_t>(), c);
  const auto np = st.at("np_rng_state_values");
  EXPECT_EQ(np[0].item<int64_t>(), d);
  EXPECT_EQ(np[623].item<int64_t>(), e);
  EXPECT_EQ(st.at("np_rng_state_index")[0].item<int64_t>(), f);
}

}  // namespace
}  // namespace lerobot
