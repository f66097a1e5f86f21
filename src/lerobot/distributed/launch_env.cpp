// Launch-environment detection from torchrun / accelerate / MPI / Slurm variables (pure functions).
#include "lerobot/distributed/launch_env.h"

#include <cstdlib>
#include <sstream>

#include "lerobot/common/error.h"

extern char** environ;

namespace lerobot {
namespace {

const std::string* get(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return nullptr;
  return &it->second;
}

long long parse_ll(const std::string& value, const std::string& name) {
  std::string v = value;
  while (!v.empty() && (v.back() == ' ' || v.back() == '\n')) v.pop_back();
  size_t used = 0;
  long long out = 0;
  try {
    out = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size())
    throw_usage("environment variable " + name + "='" + value + "' is not an integer", name,
                "unset it or give it an integer value");
  return out;
}

// The first variable of `names` that is set, parsed as an int; `fallback` when none is.
int int_var(const EnvMap& env, std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names)
    if (const std::string* v = get(env, n)) return static_cast<int>(parse_ll(*v, n));
  return fallback;
}

bool has_any(const EnvMap& env, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (get(env, n)) return true;
  return false;
}

bool has_prefix(const EnvMap& env, const std::string& prefix) {
  auto it = env.lower_bound(prefix);
  return it != env.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

bool truthy(const std::string* v) {
  return v && (*v == "True" || *v == "true" || *v == "1" || *v == "TRUE");
}

// Fills the node fields from local sizes when the launcher gives no node rank/count.
void derive_nodes(LaunchEnv& e) {
  if (e.local_world_size < 1) e.local_world_size = 1;
  e.node_rank = e.rank / e.local_world_size;
  e.num_nodes = (e.world_size + e.local_world_size - 1) / e.local_world_size;
}

std::string first_slurm_host(const EnvMap& env) {
  for (const char* n : {"SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST"})
    if (const std::string* v = get(env, n)) {
      auto hosts = expand_slurm_nodelist(*v);
      if (!hosts.empty()) return hosts.front();
    }
  return {};
}

void validate(const LaunchEnv& e) {
  auto bad = [](const std::string& what) {
    throw_usage("inconsistent launch environment: " + what, "RANK/WORLD_SIZE/LOCAL_RANK",
                "check the variables your launcher sets (torchrun, mpirun, srun)");
  };
  if (e.world_size < 1) bad("world size " + std::to_string(e.world_size) + " < 1");
  if (e.rank < 0 || e.rank >= e.world_size)
    bad("rank " + std::to_string(e.rank) + " outside [0, " + std::to_string(e.world_size) + ")");
  if (e.local_world_size < 1 || e.local_world_size > e.world_size)
    bad("local world size " + std::to_string(e.local_world_size));
  if (e.local_rank < 0 || e.local_rank >= e.local_world_size)
    bad("local rank " + std::to_string(e.local_rank) + " outside [0, " +
        std::to_string(e.local_world_size) + ")");
  if (e.num_nodes < 1 || e.node_rank < 0 || e.node_rank >= e.num_nodes)
    bad("node rank " + std::to_string(e.node_rank) + " of " + std::to_string(e.num_nodes));
  if (e.master_port < 1 || e.master_port > 65535)
    throw_usage("MASTER_PORT " + std::to_string(e.master_port) + " is not a TCP port",
                "MASTER_PORT", "use a port in 1..65535");
}

}  // namespace

int slurm_port_from_job_id(long long job_id) {
  if (job_id < 0) job_id = -job_id;
  return static_cast<int>(10000 + job_id % 20000);
}

std::vector<int> parse_slurm_tasks_per_node(const std::string& value) {
  std::vector<int> out;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    int repeat = 1;
    auto paren = item.find('(');
    std::string count = item.substr(0, paren);
    if (paren != std::string::npos) {
      // "8(x2)"
      if (item.size() < paren + 4 || item[paren + 1] != 'x' || item.back() != ')')
        throw_usage("cannot parse Slurm tasks-per-node '" + value + "'", "SLURM_NTASKS_PER_NODE");
      repeat = static_cast<int>(
          parse_ll(item.substr(paren + 2, item.size() - paren - 3), "SLURM_NTASKS_PER_NODE"));
    }
    int n = static_cast<int>(parse_ll(count, "SLURM_NTASKS_PER_NODE"));
    for (int i = 0; i < repeat; ++i) out.push_back(n);
  }
  return out;
}

namespace {
void expand_item(const std::string& item, const std::string& whole, std::vector<std::string>& out) {
  auto open = item.find('[');
  if (open == std::string::npos) {
    if (item.find(']') != std::string::npos)
      throw_usage("unbalanced ']' in Slurm node list '" + whole + "'", "SLURM_JOB_NODELIST");
    out.push_back(item);
    return;
  }
  auto close = item.find(']', open);
  if (close == std::string::npos || item.find('[', open + 1) < close)
    throw_usage("unbalanced '[' in Slurm node list '" + whole + "'", "SLURM_JOB_NODELIST");
  std::string prefix = item.substr(0, open);
  std::string inside = item.substr(open + 1, close - open - 1);
  std::vector<std::string> tails;
  expand_item(item.substr(close + 1), whole, tails);
  std::stringstream ss(inside);
  std::string range;
  bool any = false;
  while (std::getline(ss, range, ',')) {
    auto dash = range.find('-');
    std::string lo = range.substr(0, dash);
    std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
    bool digits = !lo.empty() && !hi.empty() &&
                  lo.find_first_not_of("0123456789") == std::string::npos &&
                  hi.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(hi) < std::stoll(lo))
      throw_usage("bad range '" + range + "' in Slurm node list '" + whole + "'",
                  "SLURM_JOB_NODELIST");
    for (long long v = std::stoll(lo); v <= std::stoll(hi); ++v) {
      std::string num = std::to_string(v);
      if (num.size() < lo.size()) num = std::string(lo.size() - num.size(), '0') + num;
      for (const auto& t : tails) out.push_back(prefix + num + t);
    }
    any = true;
  }
  if (!any) throw_usage("empty brackets in Slurm node list '" + whole + "'", "SLURM_JOB_NODELIST");
}
}  // namespace

std::vector<std::string> expand_slurm_nodelist(const std::string& nodelist) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  for (size_t i = 0; i <= nodelist.size(); ++i) {
    char c = i < nodelist.size() ? nodelist[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0)
      throw_usage("unbalanced ']' in Slurm node list '" + nodelist + "'", "SLURM_JOB_NODELIST");
    if (c == ',' && depth == 0) {
      if (!item.empty()) expand_item(item, nodelist, out);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  if (depth != 0)
    throw_usage("unbalanced '[' in Slurm node list '" + nodelist + "'", "SLURM_JOB_NODELIST");
  return out;
}

LaunchEnv detect_launch_env(const EnvMap& env) {
  LaunchEnv e;
  bool accelerate = has_prefix(env, "ACCELERATE_");
  if (has_any(env, {"RANK", "WORLD_SIZE"})) {
    // torchrun, accelerate launch (multi-process) and our own launcher share this contract.
    e.world_size = int_var(env, {"WORLD_SIZE"}, 1);
    if (!get(env, "RANK") && e.world_size > 1)
      throw_usage("WORLD_SIZE=" + std::to_string(e.world_size) + " is set but RANK is not", "RANK",
                  "launch with torchrun or lerobot-cpp train --num_processes=N");
    e.rank = int_var(env, {"RANK"}, 0);
    e.local_world_size = int_var(env, {"LOCAL_WORLD_SIZE"}, 0);
    int group_world = int_var(env, {"GROUP_WORLD_SIZE"}, 0);
    if (e.local_world_size <= 0)
      e.local_world_size = group_world > 0 ? e.world_size / group_world : e.world_size;
    e.local_rank = int_var(env, {"LOCAL_RANK"}, e.rank % std::max(1, e.local_world_size));
    derive_nodes(e);
    e.node_rank = int_var(env, {"GROUP_RANK"}, e.node_rank);
    if (group_world > 0) e.num_nodes = group_world;
    e.use_agent_store = truthy(get(env, "TORCHELASTIC_USE_AGENT_STORE"));
    e.restart_count = int_var(env, {"TORCHELASTIC_RESTART_COUNT"}, 0);
    if (const std::string* l = get(env, "LEROBOT_LAUNCHER")) e.launcher = *l;
    else e.launcher = accelerate ? "accelerate" : "torchrun";
  } else if (get(env, "OMPI_COMM_WORLD_RANK")) {
    e.launcher = "openmpi";
    e.rank = int_var(env, {"OMPI_COMM_WORLD_RANK"}, 0);
    e.world_size = int_var(env, {"OMPI_COMM_WORLD_SIZE"}, 1);
    e.local_rank = int_var(env, {"OMPI_COMM_WORLD_LOCAL_RANK"}, 0);
    e.local_world_size = int_var(env, {"OMPI_COMM_WORLD_LOCAL_SIZE"}, e.world_size);
    derive_nodes(e);
  } else if (get(env, "PMI_RANK")) {
    e.launcher = "mpich";
    e.rank = int_var(env, {"PMI_RANK"}, 0);
    e.world_size = int_var(env, {"PMI_SIZE"}, 1);
    e.local_rank = int_var(env, {"MPI_LOCALRANKID"}, 0);
    e.local_world_size = int_var(env, {"MPI_LOCALNRANKS"}, e.world_size);
    derive_nodes(e);
  } else if (get(env, "MV2_COMM_WORLD_RANK")) {
    e.launcher = "mvapich";
    e.rank = int_var(env, {"MV2_COMM_WORLD_RANK"}, 0);
    e.world_size = int_var(env, {"MV2_COMM_WORLD_SIZE"}, 1);
    e.local_rank = int_var(env, {"MV2_COMM_WORLD_LOCAL_RANK"}, 0);
    e.local_world_size = int_var(env, {"MV2_COMM_WORLD_LOCAL_SIZE"}, e.world_size);
    derive_nodes(e);
  } else if (get(env, "SLURM_PROCID") && has_any(env, {"SLURM_NTASKS", "SLURM_NPROCS"})) {
    e.launcher = "slurm";
    e.rank = int_var(env, {"SLURM_PROCID"}, 0);
    e.world_size = int_var(env, {"SLURM_NTASKS", "SLURM_NPROCS"}, 1);
    e.local_rank = int_var(env, {"SLURM_LOCALID"}, 0);
    e.num_nodes = int_var(env, {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}, 1);
    e.node_rank = int_var(env, {"SLURM_NODEID"}, 0);
    const std::string* per = get(env, "SLURM_NTASKS_PER_NODE");
    if (!per) per = get(env, "SLURM_TASKS_PER_NODE");
    std::vector<int> counts = per ? parse_slurm_tasks_per_node(*per) : std::vector<int>{};
    if (counts.empty()) e.local_world_size = std::max(1, e.world_size / std::max(1, e.num_nodes));
    else if (e.node_rank < static_cast<int>(counts.size())) e.local_world_size = counts[e.node_rank];
    else e.local_world_size = counts.front();
    std::string host = first_slurm_host(env);
    if (!host.empty()) e.master_addr = host;
    const std::string* job = get(env, "SLURM_JOB_ID");
    if (!job) job = get(env, "SLURM_JOBID");
    if (job) e.master_port = slurm_port_from_job_id(parse_ll(*job, "SLURM_JOB_ID"));
  } else if (accelerate) {
    e.launcher = "accelerate";  // `accelerate launch --no_python` with one process sets no RANK
  } else if (has_any(env, {"MASTER_ADDR", "MASTER_PORT"})) {
    e.launcher = "env";
  }

  // MPI launchers do not say where rank 0 runs: loopback on one node, else the Slurm head node.
  bool mpi = e.launcher == "openmpi" || e.launcher == "mpich" || e.launcher == "mvapich";
  if (mpi && e.num_nodes > 1) {
    std::string host = first_slurm_host(env);
    e.master_addr = host;  // empty: make_process_group asks for MASTER_ADDR
  }
  if (const std::string* a = get(env, "MASTER_ADDR")) e.master_addr = *a;
  if (const std::string* p = get(env, "MASTER_PORT"))
    e.master_port = static_cast<int>(parse_ll(*p, "MASTER_PORT"));
  validate(e);
  return e;
}

EnvMap process_env() {
  EnvMap out;
  for (char** p = environ; p && *p; ++p) {
    std::string kv(*p);
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

LaunchEnv detect_launch_env() { return detect_launch_env(process_env()); }

std::string describe(const LaunchEnv& e) {
  std::ostringstream os;
  os << "rank " << e.rank << "/" << e.world_size << " (local " << e.local_rank << "/"
     << e.local_world_size << ", node " << e.node_rank << "/" << e.num_nodes << ") via "
     << e.launcher << ", store " << (e.master_addr.empty() ? "?" : e.master_addr) << ":"
     << e.master_port << (e.use_agent_store ? " (agent store)" : "");
  return os.str();
}

}  // namespace lerobot
