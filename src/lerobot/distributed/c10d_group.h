// C10dGroup<Backend>: ProcessGroup over a concrete c10d backend (Gloo or NCCL), with timeouts that
// end in an error naming the ranks at fault. Internal to distributed/.
#pragma once

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <functional>
#include <memory>

#include "lerobot/common/timer.h"
#include "lerobot/distributed/peer_monitor.h"
#include "lerobot/distributed/process_group.h"

namespace lerobot {

// Everything a C10dGroup shares with the works it hands out.
struct C10dContext {
  std::shared_ptr<PeerMonitor> monitor;
  std::chrono::milliseconds timeout;
  // Blocks until `work` is done or throws (the backend's own error, or a timeout).
  std::function<void(const c10::intrusive_ptr<c10d::Work>&)> wait;
};

class C10dWork : public CollectiveWork {
 public:
  C10dWork(std::shared_ptr<C10dContext> ctx, c10::intrusive_ptr<c10d::Work> work, std::string op,
           int64_t seq, torch::Tensor tensor, double divide_by)
      : ctx_(std::move(ctx)), work_(std::move(work)), op_(std::move(op)), seq_(seq),
        tensor_(std::move(tensor)), divide_by_(divide_by),
        done_ns_(std::make_shared<std::atomic<int64_t>>(0)) {
    try {
      auto done = done_ns_;
      work_->getFuture()->addCallback([done](c10::ivalue::Future&) { *done = steady_now_ns(); });
    } catch (const std::exception&) {
      // No future on this backend: completion time is taken at wait().
    }
  }
  void wait() override {
    if (waited_) return;
    try {
      ctx_->wait(work_);
    } catch (const std::exception& e) {
      ctx_->monitor->fail(op_, seq_, e.what());
    }
    waited_ = true;
    if (done_ns_->load() == 0) *done_ns_ = steady_now_ns();
    if (divide_by_ != 1.0) tensor_.div_(divide_by_);
  }
  int64_t completed_at_ns() const override { return done_ns_->load(); }

 private:
  std::shared_ptr<C10dContext> ctx_;
  c10::intrusive_ptr<c10d::Work> work_;
  std::string op_;
  int64_t seq_;
  torch::Tensor tensor_;
  double divide_by_;
  std::shared_ptr<std::atomic<int64_t>> done_ns_;
  bool waited_ = false;
};

// A work followed by host-side completion (e.g. summing the chunks an all-to-all brought in).
class ThenWork : public CollectiveWork {
 public:
  ThenWork(std::unique_ptr<CollectiveWork> inner, std::function<void()> then)
      : inner_(std::move(inner)), then_(std::move(then)) {}
  void wait() override {
    inner_->wait();
    if (then_) {
      auto f = std::move(then_);
      then_ = nullptr;
      f();
    }
  }
  int64_t completed_at_ns() const override { return inner_->completed_at_ns(); }

 private:
  std::unique_ptr<CollectiveWork> inner_;
  std::function<void()> then_;
};

template <class Backend>
class C10dGroup : public ProcessGroup {
 public:
  // Builds the backend over a store for `size` ranks (the group's own, and its subgroups').
  using MakeBackend = std::function<c10::intrusive_ptr<Backend>(const c10::intrusive_ptr<c10d::Store>&, int rank, int size)>;

  C10dGroup(c10::intrusive_ptr<c10d::Store> store, MakeBackend make, std::shared_ptr<C10dContext> ctx, int rank, int world,
            std::string name, torch::Device device)
      : store_(std::move(store)), make_(std::move(make)), ctx_(std::move(ctx)), rank_(rank), world_(world),
        name_(std::move(name)), device_(device) {
    try {
      pg_ = make_(store_, rank_, world_);
    } catch (const std::exception& e) {
      ctx_->monitor->fail(name_ + " connect", 0, e.what());
    }
  }

  ~C10dGroup() override {
    if (!shutdown_ || !pg_) return;
    try {
      shutdown_(*pg_);
    } catch (const std::exception&) {
      // Best effort at teardown: the process is ending or the group failed already.
    }
  }
  // Called once when the group goes away (NCCL: shut the communicators down); subgroups too.
  void set_shutdown(std::function<void(Backend&)> f) { shutdown_ = std::move(f); }

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string backend() const override { return name_; }
  torch::Device device() const override { return device_; }

  std::unique_ptr<CollectiveWork> all_reduce_async(torch::Tensor tensor, ReduceOp op) override {
    if (name_ == "gloo" && tensor.scalar_type() == torch::kBFloat16) {  // 1.13's Gloo has no bfloat16
      torch::Tensor wide = tensor.to(torch::kFloat32);
      return std::make_unique<ThenWork>(all_reduce_async(wide, op), [tensor, wide]() mutable {
        torch::NoGradGuard no_grad;
        tensor.copy_(wide);
      });
    }
    int64_t seq = ctx_->monitor->enter();
    std::vector<at::Tensor> v{tensor};
    c10d::AllreduceOptions o;
    o.reduceOp = op == ReduceOp::kMax ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
    o.timeout = ctx_->timeout;
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = pg_->allreduce(v, o);
    } catch (const std::exception& e) {
      ctx_->monitor->fail("all_reduce", seq, e.what());
    }
    return std::make_unique<C10dWork>(ctx_, work, "all_reduce", seq, tensor,
                                      op == ReduceOp::kAvg ? static_cast<double>(world_) : 1.0);
  }

  std::unique_ptr<CollectiveWork> all_gather_into_async(torch::Tensor output, torch::Tensor input) override {
    int64_t seq = ctx_->monitor->enter();
    c10d::AllgatherOptions o;
    o.timeout = ctx_->timeout;
    c10::intrusive_ptr<c10d::Work> work;
    try {
      if (name_ == "nccl") {
        work = pg_->_allgather_base(output, input, o);
      } else {  // Gloo: the list form (its flat form is missing in 1.13); it copies into the views.
        // bfloat16 travels as float32 (1.13's Gloo has no bfloat16).
        const bool widen = input.scalar_type() == torch::kBFloat16;
        torch::Tensor in_t = widen ? input.to(torch::kFloat32) : input;
        torch::Tensor out_t = widen ? torch::empty({output.numel()}, in_t.options()) : output;
        std::vector<std::vector<at::Tensor>> out(1);
        for (int r = 0; r < world_; ++r) out[0].push_back(out_t.narrow(0, r * in_t.numel(), in_t.numel()).view(in_t.sizes()));
        std::vector<at::Tensor> in{in_t};
        work = pg_->allgather(out, in, o);
        auto inner = std::make_unique<C10dWork>(ctx_, work, "all_gather", seq, torch::Tensor(), 1.0);
        if (!widen) return inner;
        return std::make_unique<ThenWork>(std::move(inner), [output, out_t]() mutable {
          torch::NoGradGuard no_grad;
          output.copy_(out_t);
        });
      }
    } catch (const std::exception& e) {
      ctx_->monitor->fail("all_gather", seq, e.what());
    }
    return std::make_unique<C10dWork>(ctx_, work, "all_gather", seq, torch::Tensor(), 1.0);
  }

  std::unique_ptr<CollectiveWork> reduce_scatter_async(torch::Tensor output, torch::Tensor input,
                                                       ReduceOp op) override {
    int64_t seq = ctx_->monitor->enter();
    const double divide = op == ReduceOp::kAvg ? static_cast<double>(world_) : 1.0;
    c10::intrusive_ptr<c10d::Work> work;
    try {
      if (name_ == "nccl") {
        c10d::ReduceScatterOptions o;
        o.reduceOp = c10d::ReduceOp::SUM;
        o.timeout = ctx_->timeout;
        work = pg_->_reduce_scatter_base(output, input, o);
        return std::make_unique<C10dWork>(ctx_, work, "reduce_scatter", seq, output, divide);
      }
      // Gloo has no reduce-scatter: an all-to-all brings every rank's chunk r to rank r (the same
      // bytes on the wire), and the chunks are summed here.
      // bfloat16 travels and is summed as float32 (1.13's Gloo has no bfloat16).
      c10d::AllToAllOptions o;
      o.timeout = ctx_->timeout;
      torch::Tensor send = input.scalar_type() == torch::kBFloat16 ? input.to(torch::kFloat32) : input;
      auto received = torch::empty_like(send);
      std::vector<int64_t> counts;  // empty: equal splits
      work = pg_->alltoall_base(received, send, counts, counts, o);
      auto inner = std::make_unique<C10dWork>(ctx_, work, "reduce_scatter", seq, torch::Tensor(), 1.0);
      const int64_t world = world_;
      return std::make_unique<ThenWork>(std::move(inner), [received, send, output, world, divide]() mutable {
        torch::NoGradGuard no_grad;
        torch::Tensor sum = received.view({world, output.numel()}).sum(0);
        if (divide != 1.0) sum.div_(divide);
        output.copy_(sum);
      });
    } catch (const std::exception& e) {
      ctx_->monitor->fail("reduce_scatter", seq, e.what());
    }
    return nullptr;  // not reached: fail() throws
  }

  void broadcast(torch::Tensor tensor, int root) override {
    if (name_ == "gloo" && tensor.scalar_type() == torch::kBFloat16) {  // 1.13's Gloo has no bfloat16 (exact in float32)
      torch::Tensor wide = tensor.to(torch::kFloat32);
      broadcast(wide, root);
      torch::NoGradGuard no_grad;
      tensor.copy_(wide);
      return;
    }
    int64_t seq = ctx_->monitor->enter();
    std::vector<at::Tensor> v{tensor};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    o.timeout = ctx_->timeout;
    run("broadcast", seq, [&] { return pg_->broadcast(v, o); });
  }

  void barrier() override {
    // An all-reduce of one element: the same on every backend, no device guessing for NCCL.
    auto t = torch::zeros({1}, torch::TensorOptions().dtype(torch::kFloat).device(device_));
    all_reduce_async(t, ReduceOp::kSum)->wait();
  }

  void wait_for_rank0(const std::string& what) override {
    const int64_t seq = ctx_->monitor->enter();  // rank 0's heartbeat shows this number once it is here
    if (rank_ != 0) ctx_->monitor->wait_for_rank(0, seq, what);
    barrier();  // everyone is here now: a short one
  }

  std::vector<double> all_gather(double value) override {
    int64_t seq = ctx_->monitor->enter();
    auto opts = torch::TensorOptions().dtype(torch::kDouble).device(device_);
    std::vector<at::Tensor> in{torch::full({1}, value, opts)};
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < world_; ++r) out[0].push_back(torch::zeros({1}, opts));
    c10d::AllgatherOptions o;
    o.timeout = ctx_->timeout;
    run("all_gather", seq, [&] { return pg_->allgather(out, in, o); });
    std::vector<double> values;
    for (auto& t : out[0]) values.push_back(t.cpu().item<double>());
    return values;
  }

 protected:
  std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& ranks, int index, int64_t call) override {
    std::string key = "subgroup/" + std::to_string(call);
    for (int r : ranks) key += "/" + std::to_string(r);
    auto store = c10::make_intrusive<c10d::PrefixStore>(key + "/", store_);
    auto sub = std::make_shared<C10dGroup<Backend>>(store, make_, ctx_, index, static_cast<int>(ranks.size()), name_, device_);
    sub->set_shutdown(shutdown_);
    return sub;
  }

 private:
  template <class F>
  void run(const char* op, int64_t seq, F&& launch) {
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = launch();
    } catch (const std::exception& e) {
      ctx_->monitor->fail(op, seq, e.what());
    }
    C10dWork(ctx_, work, op, seq, torch::Tensor(), 1.0).wait();
  }

  c10::intrusive_ptr<c10d::Store> store_;
  MakeBackend make_;
  std::shared_ptr<C10dContext> ctx_;
  int rank_;
  int world_;
  std::string name_;
  torch::Device device_;
  c10::intrusive_ptr<Backend> pg_;
  std::function<void(Backend&)> shutdown_;
};

// Shared set-up for the c10d groups: connects to (or hosts) the TCPStore, checks every rank in,
// starts the heartbeat. Returns the store prefixed for the backend ("<ns>/<backend>/").
struct Rendezvous {
  c10::intrusive_ptr<c10d::Store> store;  // for the backend
  std::shared_ptr<PeerMonitor> monitor;
};
Rendezvous rendezvous(const LaunchEnv& env, const ProcessGroupOptions& options,
                      const std::string& backend);

#ifdef LEROBOT_WITH_GLOO
std::shared_ptr<ProcessGroup> make_gloo_group(const LaunchEnv& env,
                                              const ProcessGroupOptions& options);
#endif
#ifdef LEROBOT_WITH_NCCL
std::shared_ptr<ProcessGroup> make_nccl_group(const LaunchEnv& env,
                                              const ProcessGroupOptions& options);
#endif

}  // namespace lerobot
