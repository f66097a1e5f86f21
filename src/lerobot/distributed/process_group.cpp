// ProcessGroup helpers, the single-process group, parameter/buffer broadcast and the factory.
#include "lerobot/distributed/process_group.h"

#include <map>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/distributed/c10d_group.h"

namespace lerobot {
namespace {

class DoneWork : public CollectiveWork {
 public:
  void wait() override {}
  int64_t completed_at_ns() const override { return done_; }

 private:
  int64_t done_ = steady_now_ns();
};

// Broadcasts `tensors` from rank 0, one flat buffer per (dtype, device).
void broadcast_coalesced(const std::vector<torch::Tensor>& tensors, ProcessGroup& group) {
  if (group.world_size() == 1 || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  std::map<std::pair<int, std::string>, std::vector<torch::Tensor>> groups;
  for (const auto& t : tensors)
    if (t.defined() && t.numel() > 0)
      groups[{static_cast<int>(t.scalar_type()), t.device().str()}].push_back(t);
  for (auto& kv : groups) {
    std::vector<torch::Tensor> flat_parts;
    for (auto& t : kv.second) flat_parts.push_back(t.detach().reshape({-1}).to(group.device()));
    torch::Tensor flat = torch::cat(flat_parts);
    // Gloo has no bool collectives: bool buffers (VQ-BeT's phase flags) travel as bytes (the group
    // itself widens bfloat16 on Gloo).
    const auto dtype = flat.scalar_type();
    if (dtype == torch::kBool) flat = flat.to(torch::kUInt8);
    group.broadcast(flat, 0);
    flat = flat.to(dtype);
    int64_t offset = 0;
    for (auto& t : kv.second) {
      t.detach().copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

}  // namespace

double ProcessGroup::all_reduce(double value, ReduceOp op) {
  auto t = torch::full({1}, value, torch::TensorOptions().dtype(torch::kDouble).device(device()));
  all_reduce_async(t, op)->wait();
  return t.cpu().item<double>();
}

std::shared_ptr<ProcessGroup> ProcessGroup::subgroup(const std::vector<int>& ranks) {
  int index = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    LEROBOT_CHECK(ranks[i] >= 0 && ranks[i] < world_size() && (i == 0 || ranks[i] > ranks[i - 1]),
                  "subgroup: ranks must be sorted, distinct and below the world size");
    if (ranks[i] == rank()) index = static_cast<int>(i);
  }
  LEROBOT_CHECK(index >= 0, "subgroup: this rank is not among the subgroup's ranks");
  if (ranks.size() == 1) return std::make_shared<SingleProcessGroup>(device());
  return make_subgroup(ranks, index, subgroups_made_++);
}

std::shared_ptr<ProcessGroup> ProcessGroup::make_subgroup(const std::vector<int>&, int, int64_t) {
  throw_runtime("the " + backend() + " process group cannot make subgroups");
}

std::unique_ptr<CollectiveWork> SingleProcessGroup::all_reduce_async(torch::Tensor, ReduceOp) {
  return std::make_unique<DoneWork>();
}

std::unique_ptr<CollectiveWork> SingleProcessGroup::all_gather_into_async(torch::Tensor output, torch::Tensor input) {
  output.copy_(input.reshape(output.sizes()));
  return std::make_unique<DoneWork>();
}

std::unique_ptr<CollectiveWork> SingleProcessGroup::reduce_scatter_async(torch::Tensor output, torch::Tensor input,
                                                                         ReduceOp) {
  output.copy_(input.reshape(output.sizes()));
  return std::make_unique<DoneWork>();
}

void broadcast_parameters(torch::nn::Module& module, ProcessGroup& group) {
  std::vector<torch::Tensor> all = module.parameters();
  for (auto& b : module.buffers()) all.push_back(b);
  broadcast_coalesced(all, group);
}

void broadcast_buffers(torch::nn::Module& module, ProcessGroup& group) {
  broadcast_coalesced(module.buffers(), group);
}

std::shared_ptr<ProcessGroup> make_process_group(const LaunchEnv& env,
                                                 const ProcessGroupOptions& options) {
  std::string backend = options.backend;
  if (backend != "auto" && backend != "gloo" && backend != "nccl")
    throw_usage("unknown distributed backend '" + backend + "'", "--distributed.backend",
                "use auto, gloo or nccl");
  set_log_rank(env.rank, env.world_size);
  if (options.timeout.count() <= 0)
    throw_usage("the distributed timeout must be positive", "--distributed.timeout_s");
#ifdef LEROBOT_WITH_NCCL
  const bool have_nccl = true;
#else
  const bool have_nccl = false;
#endif
  if (backend == "nccl" && !have_nccl)
    throw_usage("this build of lerobot.cpp has no NCCL (its LibTorch lacks c10d NCCL)",
                "--distributed.backend", "use gloo, or rebuild against a CUDA LibTorch 2.x");
  if (backend == "auto") backend = have_nccl && torch::cuda::is_available() ? "nccl" : "gloo";
  if (env.world_size == 1) {
    // One process: collectives are no-ops, unless NCCL was asked for by name. Then a real
    // one-rank NCCL group runs (its own store on a free loopback port when no launcher gave one),
    // so the NCCL path is exercised on one GPU exactly as on eight.
#ifdef LEROBOT_WITH_NCCL
    if (options.backend == "nccl") {
      if (!torch::cuda::is_available())
        throw_usage("--distributed.backend=nccl needs a CUDA device, and none is visible",
                    "--distributed.backend", "use gloo (or auto) on a machine without a GPU");
      LaunchEnv one = env;
      if (one.launcher == "none") {
        one.master_addr = "127.0.0.1";
        one.master_port = 0;  // any free port
        one.use_agent_store = false;
      }
      LOG_INFO << "one-process nccl group on cuda:" << one.local_rank;
      return make_nccl_group(one, options);
    }
#endif
    return std::make_shared<SingleProcessGroup>();
  }
  LOG_INFO << "joining " << backend << " process group: " << describe(env);
#ifdef LEROBOT_WITH_NCCL
  if (backend == "nccl") return make_nccl_group(env, options);
#endif
#ifdef LEROBOT_WITH_GLOO
  return make_gloo_group(env, options);
#else
  throw_usage("this build of lerobot.cpp has no Gloo process group (no gloo headers were found when it "
                  "was configured), so it cannot run several CPU processes",
              "--distributed.backend",
              "install libgloo-dev (or pass -DGLOO_INCLUDE_DIR=<dir holding gloo/>) and build again, "
              "or use NCCL on GPUs");
#endif
}

}  // namespace lerobot
