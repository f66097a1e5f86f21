// GradReducer: DDP-style gradient averaging — bucketed all-reduces launched from gradient hooks
// while backward still runs.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "lerobot/distributed/process_group.h"

namespace lerobot {

struct GradReducerOptions {
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  int64_t first_bucket_cap_bytes = 1024 * 1024;  // the first bucket reduces early, like DDP
  // Re-pack the buckets once, after the first synchronised step, in the order gradients arrived
  // (rank 0's order, like DDP's bucket rebuild).
  bool rebuild_buckets = true;
  // All-reduce float32 buckets as bfloat16 (NCCL) — float16 on Gloo, which has no bfloat16 sum.
  bool bf16_compress = false;
};

// Cumulative over synchronised steps (reset_timings() clears).
struct GradReducerTimings {
  int64_t steps = 0;
  int64_t buckets = 0;
  double allreduce_s = 0;   // wall time with at least one bucket in flight (launch → completion)
  double overlapped_s = 0;  // the part of allreduce_s before backward finished
  double wait_s = 0;        // time synchronize() spent blocked on the buckets (exposed comms)
  double overlap_share() const { return allreduce_s > 0 ? overlapped_s / allreduce_s : 0.0; }
};

// Usage per optimizer step (with N accumulation micro-steps):
//   reducer.set_sync(micro == N - 1);   // no communication on the earlier micro-steps
//   loss.backward();                    // buckets are launched from gradient hooks
//   reducer.synchronize();              // after backward: wait, average, write .grad
// Every rank must run the same sequence. Parameters that got no gradient this step still take
// part (zeros + a "used" flag per parameter travel in their bucket): a parameter used on some rank
// gets the average over all ranks; one unused everywhere keeps an undefined .grad (as DDP with
// find_unused_parameters=True).
class GradReducer {
 public:
  // `parameters` in registration order (module.parameters()); those without requires_grad are
  // skipped. Buckets are filled in reverse registration order (≈ the order backward produces them).
  GradReducer(std::vector<torch::Tensor> parameters, std::shared_ptr<ProcessGroup> group,
              GradReducerOptions options = {});
  GradReducer(torch::nn::Module& module, std::shared_ptr<ProcessGroup> group,
              GradReducerOptions options = {});
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // false: backward only accumulates into .grad locally (gradient-accumulation micro-steps).
  void set_sync(bool sync);
  bool sync() const;

  // Call after backward on every rank. On a sync step with world_size > 1: launches the buckets
  // that backward did not complete, waits for all, averages over ranks and copies into .grad.
  // Returns whether it reduced anything. Throws a lerobot::Error when a rank does not answer.
  bool synchronize();

  const GradReducerTimings& timings() const;
  void reset_timings();
  // Parameter indices (into the requires_grad parameters, registration order) of each bucket:
  // reverse registration order until the first synchronised step, the observed order after it.
  std::vector<std::vector<size_t>> buckets() const;
  // Gradient bytes of each bucket (same order as buckets()).
  std::vector<int64_t> bucket_bytes() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // keep the hooks alive
  std::vector<uintptr_t> hook_keys_;
};

}  // namespace lerobot
