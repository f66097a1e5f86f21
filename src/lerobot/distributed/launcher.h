// Built-in local launcher: starts one process per rank of this machine and supervises them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace lerobot {

struct LocalLaunchOptions {
  int num_processes = 1;  // processes on this machine
  int num_machines = 1;
  int machine_rank = 0;
  std::string main_process_ip = "127.0.0.1";
  int main_process_port = 0;  // 0: pick a free port (one machine only)
  std::string executable;     // empty: this program (/proc/self/exe)
  double kill_grace_s = 5.0;  // SIGTERM → SIGKILL delay for the surviving ranks after a failure
  std::map<std::string, std::string> extra_env;  // added to every child's environment
};

struct LaunchResult {
  int exit_code = 0;     // 0, or the failing rank's exit status (128 + signal when killed)
  int failed_rank = -1;  // global rank of the first child that failed
  std::string message;   // e.g. "rank 1 exited with status 3; stopped ranks 0"
};

// Starts num_processes children running `executable argv[1..]` (argv[0] becomes their argv[0]),
// with RANK = machine_rank * num_processes + local, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and LEROBOT_LAUNCHER=lerobot-cpp (the
// trainer picks cuda:LOCAL_RANK). OMP_NUM_THREADS defaults to cores / num_processes. Each child's
// stdout/stderr lines are copied to ours prefixed "[rank R] ". When a child exits non-zero or is
// killed, the others get SIGTERM, then SIGKILL after kill_grace_s. Children die with the launcher
// (PR_SET_PDEATHSIG). Returns once every child has been reaped. Usage errors for bad options.
LaunchResult launch_local(const std::vector<std::string>& argv, const LocalLaunchOptions& options);

// Whether `lerobot-cpp train --num_processes=N` should start N children here: N > 1 and this
// process is not already one rank of a launched job (RANK/WORLD_SIZE or an MPI/Slurm world > 1).
inline bool should_launch_local(int num_processes, int detected_world_size) {
  return num_processes > 1 && detected_world_size == 1;
}

// A TCP port that was free on 127.0.0.1 a moment ago.
int find_free_port();

}  // namespace lerobot
