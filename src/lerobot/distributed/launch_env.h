// Launch-environment detection: which launcher started this process and where its peers are.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace lerobot {

// What a process learns from its environment about the job it belongs to.
struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";  // empty when it cannot be known (multi-node MPI)
  int master_port = 29500;
  int node_rank = 0;
  int num_nodes = 1;
  // "none" (single process, nothing set), "torchrun", "accelerate", "lerobot-cpp" (our launcher),
  // "openmpi", "mpich" (also Intel MPI), "mvapich", "slurm", "env" (MASTER_ADDR/PORT only).
  std::string launcher = "none";
  // torchrun's agent already serves the TCPStore at master_addr:master_port: every rank is a client.
  bool use_agent_store = false;
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT (> 0: resume from the last checkpoint)

  bool distributed() const { return world_size > 1; }
  bool is_main_process() const { return rank == 0; }
};

using EnvMap = std::map<std::string, std::string>;

// Pure: detects the launch environment from a variable map. Resolution order: torchrun/accelerate
// (RANK, WORLD_SIZE) → OpenMPI → MPICH/Intel MPI → MVAPICH → Slurm → single process (rank 0 of 1).
// MASTER_ADDR/MASTER_PORT, when set, win over derived values. Throws a usage error for malformed
// or inconsistent values (e.g. RANK >= WORLD_SIZE), naming the variable.
LaunchEnv detect_launch_env(const EnvMap& env);

// The current process's environment (environ) as a map.
EnvMap process_env();

// detect_launch_env(process_env()).
LaunchEnv detect_launch_env();

// Expands a Slurm compressed host list: "gpu[01-04,07]" → gpu01 gpu02 gpu03 gpu04 gpu07,
// "node1,node2", "a[1-2]-b[1-2]" (cartesian, left varies slowest). Zero padding is kept.
// Throws a usage error for unbalanced brackets or bad ranges.
std::vector<std::string> expand_slurm_nodelist(const std::string& nodelist);

// Parses SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE ("8", "8(x2)", "2(x3),1") into one count
// per node.
std::vector<int> parse_slurm_tasks_per_node(const std::string& value);

// The rendezvous port derived from a Slurm job id when MASTER_PORT is unset.
int slurm_port_from_job_id(long long job_id);

// One-line human description, e.g. "rank 1/4 (local 1/2, node 0/2) via torchrun, store 10.0.0.1:29500".
std::string describe(const LaunchEnv& env);

}  // namespace lerobot
