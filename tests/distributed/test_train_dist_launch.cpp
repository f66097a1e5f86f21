// Multi-process training under real launchers and failures: torchrun starting 2 ranks of
// lerobot-cpp train, and a rank SIGKILLed mid-training (by the built-in launcher's supervision,
// and across two "machines" where only the process group can notice).
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "train_dist_util.h"

using namespace lerobot_test;
namespace fs = std::filesystem;

namespace {

// Parent pid of `pid` from /proc/PID/stat (-1 when gone).
int parent_of(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close = s.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream is(s.substr(close + 2));
  char state;
  int ppid = -1;
  is >> state >> ppid;
  return ppid;
}

// The child of `parent` whose environment holds RANK=<rank> (-1 when none).
int child_with_rank(int parent, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (parent_of(pid) != parent) continue;
    const std::string env = read_text("/proc/" + name + "/environ");
    const std::string want = "RANK=" + std::to_string(rank);
    for (size_t pos = 0; pos < env.size();) {
      const size_t end = env.find('\0', pos);
      if (env.compare(pos, (end == std::string::npos ? env.size() : end) - pos, want) == 0) return pid;
      if (end == std::string::npos) break;
      pos = end + 1;
    }
  }
  return -1;
}

// Starts `lerobot-cpp args...` with stdout+stderr into `log`; returns its pid.
int spawn_cli(const std::vector<std::string>& args, const std::string& log) {
  const int pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "w");
    if (!f) _exit(126);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    std::vector<char*> argv;
    const std::string exe = cli();
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits up to `limit_s` for `pid`; returns its exit code (128 + signal), or -1 on timeout (then
// the process is killed).
int wait_for(int pid, double limit_s, double* took_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      *took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(limit_s)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      *took_s = limit_s;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Waits until `log` contains `text` (false after `limit_s`).
bool wait_for_text(const std::string& log, const std::string& text, double limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(limit_s)) {
    if (read_text(log).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::vector<std::string> split_flags(const std::string& flags) {
  std::vector<std::string> out;
  std::istringstream is(flags);
  std::string w;
  while (is >> w) out.push_back(w);
  return out;
}

}  // namespace

TEST(TrainLaunch, TorchrunRunsTwoRanksAndWritesACheckpoint) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string torchrun = LEROBOT_TORCHRUN;
  ASSERT_EQ(run_command("command -v " + torchrun).code, 0) << "torchrun not found: install python3-torch";
  const std::string out = dir.path + "/tr";
  // Debian's torchrun 1.13 needs "-r 1 -t 1" (see test_launcher.cpp).
  auto r = run_command("OMP_NUM_THREADS=1 timeout -k 5 180 " + torchrun + " --nproc_per_node=2 --no_python -r 1 -t 1" +
                       torchrun_rendezvous() + " " + cli() + " train" +
                       act_flags(ds) + " --batch_size=4 --steps=4 --log_freq=2 --output_dir=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out + "/checkpoints/000004/pretrained_model/model.safetensors")) << r.out;
  const std::string step_info = read_text(out + "/checkpoints/000004/training_state/training_step.json");
  EXPECT_NE(step_info.find("\"dp_world_size\": 2"), std::string::npos) << step_info;
  EXPECT_NE(step_info.find("\"step\": 4"), std::string::npos) << step_info;
}

// LeRobot's multi-GPU guide with the program name changed (#19): torchrun (as accelerate launch)
// runs the script through Python, without --no_python; lerobot-cpp-train execs the binary.
TEST(TrainLaunch, TorchrunRunsTheLauncherScriptWithoutNoPython) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string torchrun = LEROBOT_TORCHRUN;
  ASSERT_EQ(run_command("command -v " + torchrun).code, 0) << "torchrun not found: install python3-torch";
  const std::string launcher = (fs::path(cli()).parent_path() / "lerobot-cpp-train").string();
  const std::string out = dir.path + "/tr";
  auto r = run_command("OMP_NUM_THREADS=1 timeout -k 5 180 " + torchrun + " --nproc_per_node=2 -r 1 -t 1" +
                       torchrun_rendezvous() + " " + launcher + act_flags(ds) + " --batch_size=4 --steps=2 --log_freq=1 --output_dir=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string step_info = read_text(out + "/checkpoints/000002/training_state/training_step.json");
  EXPECT_NE(step_info.find("\"dp_world_size\": 2"), std::string::npos) << step_info;
  EXPECT_NE(r.out.find("via torchrun"), std::string::npos) << r.out;
}

// The built-in launcher sees rank 1 die, stops rank 0 and names rank 1.
TEST(TrainFailure, KilledRankStopsTheRunAndIsNamed) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string log = dir.path + "/log.txt";
  auto args = split_flags("train" + act_flags(ds) +
                          " --batch_size=2 --steps=100000 --log_freq=1 --save_checkpoint=false --num_processes=2"
                          " --output_dir=" + dir.path + "/out");
  const int launcher = spawn_cli(args, log);
  ASSERT_GT(launcher, 0);
  const bool training = wait_for_text(log, "step:3 ", 120);
  const int rank1 = child_with_rank(launcher, 1);
  if (!training || rank1 < 0) {
    kill(launcher, SIGKILL);
    waitpid(launcher, nullptr, 0);
    FAIL() << "training did not start or rank 1 was not found (pid " << rank1 << "):\n" << read_text(log);
  }
  const int rank0 = child_with_rank(launcher, 0);
  ASSERT_EQ(kill(rank1, SIGKILL), 0);
  double took = 0;
  const int code = wait_for(launcher, 60, &took);
  const std::string text = read_text(log);
  EXPECT_NE(code, -1) << "the run did not end within 60 s after rank 1 was killed:\n" << text;
  EXPECT_NE(code, 0) << text;
  EXPECT_NE(text.find("rank 1 was killed by signal 9"), std::string::npos) << text;
  EXPECT_NE(text.find("stopped the other rank(s): 0"), std::string::npos) << text;
  EXPECT_NE(rank0, -1);
  if (rank0 > 0) {
    EXPECT_NE(kill(rank0, 0), 0) << "rank 0 (pid " << rank0 << ") is still running";
  }
  std::printf("run ended %.1f s after rank 1 was killed (exit %d)\n", took, code);
}

// Two launchers ("machines") of one process each: machine 0 has no child that died, so only the
// process group (Gloo errors, heartbeats) can tell rank 0 that rank 1 is gone.
TEST(TrainFailure, KilledRankOnAnotherMachineIsNamedByRank0) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const int port = lerobot::find_free_port();
  const std::string common = "train" + act_flags(ds) +
                             " --batch_size=2 --steps=100000 --log_freq=1 --save_checkpoint=false --num_machines=2"
                             " --num_processes=1 --main_process_ip=127.0.0.1 --distributed.timeout_s=30"
                             " --main_process_port=" + std::to_string(port) + " --output_dir=" + dir.path + "/out";
  const std::string log0 = dir.path + "/m0.txt", log1 = dir.path + "/m1.txt";
  const int m0 = spawn_cli(split_flags(common + " --machine_rank=0"), log0);
  const int m1 = spawn_cli(split_flags(common + " --machine_rank=1"), log1);
  const bool training = wait_for_text(log0, "step:3 ", 120);
  const int rank1 = child_with_rank(m1, 1);
  if (!training || rank1 < 0) {
    kill(m0, SIGKILL);
    kill(m1, SIGKILL);
    waitpid(m0, nullptr, 0);
    waitpid(m1, nullptr, 0);
    FAIL() << "training did not start or rank 1 was not found:\n" << read_text(log0) << read_text(log1);
  }
  ASSERT_EQ(kill(rank1, SIGKILL), 0);
  double took0 = 0, took1 = 0;
  const int code1 = wait_for(m1, 60, &took1);
  const int code0 = wait_for(m0, 60, &took0);
  const std::string text0 = read_text(log0);
  EXPECT_NE(code0, -1) << "machine 0 did not stop within 60 s after rank 1 was killed:\n" << text0;
  EXPECT_NE(code0, 0) << text0;
  EXPECT_NE(code1, 0) << read_text(log1);
  EXPECT_NE(text0.find("rank(s) 1 stopped answering"), std::string::npos) << "machine 0's error should name rank 1:\n" << text0;
  std::printf("machine 0 stopped %.1f s after rank 1 was killed (exit %d)\n", took0, code0);
}
