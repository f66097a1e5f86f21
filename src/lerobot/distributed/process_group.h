// ProcessGroup: the collectives the trainer needs, behind one interface (single, Gloo, NCCL).
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/distributed/launch_env.h"

namespace lerobot {

enum class ReduceOp { kSum, kAvg, kMax };

// A collective in flight. wait() blocks until it finished (throws a lerobot::Error naming the ranks
// that did not answer when it fails or times out); the result is then in the tensor(s) passed.
class CollectiveWork {
 public:
  virtual ~CollectiveWork() = default;
  virtual void wait() = 0;
  // Steady-clock time (ns since epoch of std::chrono::steady_clock) at which the collective
  // completed, or 0 while unknown. Used for overlap statistics.
  virtual int64_t completed_at_ns() const { return 0; }
};

// On Gloo, bfloat16 tensors travel (and are summed) as float32: 1.13's Gloo has no bfloat16.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;  // "single", "gloo", "nccl"
  // Device the collectives expect tensors on (cpu for Gloo, cuda:LOCAL_RANK for NCCL).
  virtual torch::Device device() const = 0;

  // In place on `tensor` (contiguous, on device()). kAvg = sum / world_size.
  virtual std::unique_ptr<CollectiveWork> all_reduce_async(torch::Tensor tensor, ReduceOp op) = 0;
  void all_reduce(torch::Tensor tensor, ReduceOp op = ReduceOp::kSum) {
    all_reduce_async(std::move(tensor), op)->wait();
  }
  // All-gather into one buffer: `output` (contiguous, numel = world_size × input.numel()) ends
  // with rank r's `input` in its r-th chunk.
  virtual std::unique_ptr<CollectiveWork> all_gather_into_async(torch::Tensor output, torch::Tensor input) = 0;
  // Reduce-scatter: `input` (contiguous, world_size chunks of output.numel()) is reduced over
  // ranks chunk-wise and rank r's `output` receives chunk r (kSum or kAvg).
  virtual std::unique_ptr<CollectiveWork> reduce_scatter_async(torch::Tensor output, torch::Tensor input,
                                                               ReduceOp op) = 0;
  // In place: every rank ends with root's values.
  virtual void broadcast(torch::Tensor tensor, int root = 0) = 0;
  virtual void barrier() = 0;
  // A barrier at the end of work only rank 0 does (an evaluation, writing a checkpoint): the other
  // ranks wait without a deadline for as long as rank 0's heartbeat goes on, and fail naming rank 0
  // when it stops (exited, crashed, frozen). A plain barrier would fail them after the collective
  // timeout while rank 0 is still evaluating. `what` names the work in their log and errors.
  virtual void wait_for_rank0(const std::string& what) = 0;
  // One value per rank, indexed by rank.
  virtual std::vector<double> all_gather(double value) = 0;
  // Convenience: reduce one number.
  double all_reduce(double value, ReduceOp op);

  // A group of some of this group's ranks (sorted, distinct, this rank among them), on the same
  // backend and device; its rank is this rank's index in `ranks`. Every member must ask for it,
  // and every rank must ask for its groups in the same order (the members meet in the store under
  // the ranks' names and the call's number). One rank: a SingleProcessGroup. Its failures name the
  // ranks of the whole run (the heartbeat is shared).
  std::shared_ptr<ProcessGroup> subgroup(const std::vector<int>& ranks);

 protected:
  // Called by subgroup() for two or more members, after the checks; `index`: this rank's in `ranks`,
  // `call`: how many subgroups this group made before.
  virtual std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& ranks, int index, int64_t call);

 private:
  int64_t subgroups_made_ = 0;
};

// world 1: every collective is a no-op (all_reduce with kAvg/kSum/kMax leaves the tensor as is).
class SingleProcessGroup : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string backend() const override { return "single"; }
  torch::Device device() const override { return device_; }
  std::unique_ptr<CollectiveWork> all_reduce_async(torch::Tensor tensor, ReduceOp op) override;
  std::unique_ptr<CollectiveWork> all_gather_into_async(torch::Tensor output, torch::Tensor input) override;
  std::unique_ptr<CollectiveWork> reduce_scatter_async(torch::Tensor output, torch::Tensor input, ReduceOp op) override;
  void broadcast(torch::Tensor, int) override {}
  void barrier() override {}
  void wait_for_rank0(const std::string&) override {}
  std::vector<double> all_gather(double value) override { return {value}; }
  explicit SingleProcessGroup(torch::Device device = torch::kCPU) : device_(device) {}

 private:
  torch::Device device_;
};

struct ProcessGroupOptions {
  std::string backend = "auto";  // "auto" (nccl when built with it and CUDA is available, else gloo),
                                 // "gloo", "nccl"
  std::chrono::milliseconds timeout{std::chrono::seconds(1800)};
  // Interval of the store heartbeat that lets a failing rank tell dead peers from slow ones.
  std::chrono::milliseconds heartbeat{std::chrono::milliseconds(500)};
};

// world_size 1 → SingleProcessGroup. Otherwise connects to the TCPStore at master_addr:master_port
// (rank 0 hosts it unless use_agent_store), checks in every rank (naming the ranks that did not
// arrive within the timeout) and builds the backend. Usage errors for an unknown backend, NCCL
// asked for in a build without it, or a missing master address.
std::shared_ptr<ProcessGroup> make_process_group(const LaunchEnv& env,
                                                 const ProcessGroupOptions& options = {});

// Seconds → the options' timeout (a convenience for the trainer's --distributed.timeout_s).
inline ProcessGroupOptions process_group_options(const std::string& backend, double timeout_s) {
  ProcessGroupOptions o;
  o.backend = backend;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0));
  return o;
}

// The training run's backend: "auto" is gloo when the policy is on the CPU, also on a machine with
// GPUs (as accelerate's cpu=True; NCCL would reduce on a GPU the policy does not use, and a second
// rank may have no GPU at all); with the policy on CUDA it stays "auto" (nccl where built with it).
// A backend named on the command line is kept (and refused later where it cannot run).
inline std::string backend_for_device(const std::string& backend, bool policy_on_cuda) {
  return backend == "auto" && !policy_on_cuda ? "gloo" : backend;
}

// Broadcasts every parameter and buffer of `module` from rank 0 (at start-up, so replicas agree).
void broadcast_parameters(torch::nn::Module& module, ProcessGroup& group);
// Broadcasts only the buffers (BatchNorm running stats) from rank 0; call once per step.
void broadcast_buffers(torch::nn::Module& module, ProcessGroup& group);

}  // namespace lerobot
