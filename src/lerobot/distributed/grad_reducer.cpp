// GradReducer: buckets, AccumulateGrad post-hooks, async all-reduce and the end-of-step unpack.
#include "lerobot/distributed/grad_reducer.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "lerobot/common/error.h"
#include "lerobot/common/timer.h"

namespace lerobot {
struct GradReducer::State {
  struct Bucket {
    std::vector<size_t> params;   // indices into State::params
    std::vector<int64_t> offsets;  // element offset of each param in flat
    int64_t grad_numel = 0;        // flat = [grads..., one used-flag per param]
    torch::Tensor flat;
    torch::Tensor comm;  // what travels (flat, or its bf16 copy)
    int pending = 0;
    bool ready = false;
    std::unique_ptr<CollectiveWork> work;
    int64_t launched_ns = 0;
  };

  std::vector<torch::Tensor> params;
  std::vector<int> bucket_of;
  std::vector<bool> arrived;
  std::vector<Bucket> buckets;
  std::shared_ptr<ProcessGroup> group;
  GradReducerOptions options;
  bool sync = true;
  bool started = false;    // a hook fired in this step
  bool finished = false;   // backward finished (engine callback ran)
  size_t next_launch = 0;  // buckets launch in index order on every rank
  int64_t backward_end_ns = 0;
  bool rebuilt = false;         // buckets follow the observed gradient order (after step 1)
  std::vector<size_t> arrival;  // gradient-ready order seen in the first synchronised step
  std::string error;  // an error seen inside a hook, thrown by synchronize()
  GradReducerTimings timings;
  std::mutex mutex;

  bool active() const { return sync && group->world_size() > 1; }

  // Packs the parameters into buckets in `order` (the order their gradients are expected):
  // one open bucket per (dtype, device). The first bucket is small so communication starts early
  // (as DDP); so is the last one, which can only start when backward ends and is never hidden.
  void assign_buckets(const std::vector<size_t>& order) {
    buckets.clear();
    bucket_of.assign(params.size(), -1);
    auto nbytes_of = [&](size_t i) { return params[i].numel() * static_cast<int64_t>(params[i].element_size()); };
    size_t tail_start = order.size();
    for (int64_t tail = 0; tail_start > 0;) {
      tail += nbytes_of(order[tail_start - 1]);
      if (tail > options.first_bucket_cap_bytes && tail_start < order.size()) break;
      --tail_start;
    }
    std::map<std::pair<int, std::string>, int> open;
    std::vector<int64_t> bytes;
    for (size_t pos = 0; pos < order.size(); ++pos) {
      const size_t i = order[pos];
      if (pos == tail_start && pos > 0) open.clear();  // the small last bucket(s) start here
      const auto& p = params[i];
      auto key = std::make_pair(static_cast<int>(p.scalar_type()), p.device().str());
      const int64_t nbytes = nbytes_of(i);
      auto it = open.find(key);
      if (it != open.end()) {
        int64_t cap = it->second == 0 ? options.first_bucket_cap_bytes : options.bucket_cap_bytes;
        if (bytes[it->second] + nbytes > cap && !buckets[it->second].params.empty()) open.erase(it);
      }
      if (open.find(key) == open.end()) {
        open[key] = static_cast<int>(buckets.size());
        buckets.emplace_back();
        bytes.push_back(0);
      }
      int b = open[key];
      Bucket& bucket = buckets[b];
      bucket.params.push_back(i);
      bucket.offsets.push_back(bucket.grad_numel);
      bucket.grad_numel += p.numel();
      bytes[b] += nbytes;
      bucket_of[i] = b;
    }
    for (auto& b : buckets) {
      const auto& p0 = params[b.params.front()];
      b.flat = torch::zeros({b.grad_numel + static_cast<int64_t>(b.params.size())},
                            torch::TensorOptions().dtype(p0.scalar_type()).device(
                                group->world_size() > 1 ? group->device() : p0.device()));
    }
    reset_step();
  }

  // After the first synchronised step, as DDP does: re-pack the buckets in the order gradients
  // actually arrived (parameters that got none go last), so that a bucket fills as early in
  // backward as it can. Rank 0's order is broadcast so every rank packs identical buckets.
  void rebuild_buckets() {
    rebuilt = true;
    std::vector<bool> seen(params.size(), false);
    std::vector<int64_t> order;
    for (size_t i : arrival) {
      if (!seen[i]) order.push_back(static_cast<int64_t>(i));
      seen[i] = true;
    }
    for (size_t i = params.size(); i-- > 0;)
      if (!seen[i]) order.push_back(static_cast<int64_t>(i));
    arrival.clear();
    auto t = torch::tensor(order, torch::kLong).to(group->device());
    group->broadcast(t, 0);
    t = t.cpu();
    std::vector<size_t> agreed(params.size());
    for (size_t k = 0; k < agreed.size(); ++k) agreed[k] = static_cast<size_t>(t[k].item<int64_t>());
    assign_buckets(agreed);
  }

  void launch(Bucket& b) {
    torch::NoGradGuard no_grad;
    auto flags = b.flat.narrow(0, b.grad_numel, static_cast<int64_t>(b.params.size()));
    for (size_t k = 0; k < b.params.size(); ++k) {
      const torch::Tensor& g = params[b.params[k]].grad();
      auto slot = b.flat.narrow(0, b.offsets[k], params[b.params[k]].numel());
      if (g.defined()) {
        slot.copy_(g.reshape({-1}));
        flags[k].fill_(1);
      } else {
        slot.zero_();
        flags[k].fill_(0);
      }
    }
    const double world = group->world_size();
    if (options.bf16_compress && b.flat.scalar_type() == torch::kFloat) {
      // Gloo (1.13) cannot reduce bfloat16: it gets float16, with the same 2-byte traffic.
      auto dtype = group->backend() == "gloo" ? torch::kHalf : torch::kBFloat16;
      b.comm = b.flat.to(dtype).div_(world);  // average before summing, like DDP's hook
    } else if (b.flat.scalar_type() == torch::kBFloat16 && group->backend() == "gloo") {
      // bfloat16 parameters (SmolVLA's backbone): Gloo (1.13) has no bfloat16 sum, so they are
      // summed in float32 and rounded back.
      b.comm = b.flat.to(torch::kFloat).div_(world);
    } else {
      b.comm = b.flat;
    }
    b.launched_ns = steady_now_ns();
    b.work = group->all_reduce_async(b.comm, ReduceOp::kSum);
  }

  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].ready) launch(buckets[next_launch++]);
  }

  void finish_backward() {
    if (finished) return;
    finished = true;
    backward_end_ns = steady_now_ns();
    for (auto& b : buckets) b.ready = true;  // unused parameters: zeros with flag 0
    launch_ready();
  }

  void on_grad(size_t index, const std::weak_ptr<State>& self) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!active()) return;
    if (!started) {
      started = true;
      torch::autograd::Engine::get_default_engine().queue_callback([self] {
        if (auto s = self.lock()) {
          std::lock_guard<std::mutex> l(s->mutex);
          try {
            s->finish_backward();
          } catch (const std::exception& e) {
            s->error = e.what();
          }
        }
      });
    }
    if (finished || arrived[index]) {
      error = "parameter " + std::to_string(index) +
              " received a second gradient after its bucket was reduced (backward ran twice in "
              "one synchronised step)";
      return;
    }
    arrived[index] = true;
    if (!rebuilt) arrival.push_back(index);
    Bucket& b = buckets[bucket_of[index]];
    if (--b.pending == 0) {
      b.ready = true;
      try {
        launch_ready();
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
  }

  void reset_step() {
    started = finished = false;
    next_launch = 0;
    std::fill(arrived.begin(), arrived.end(), false);
    for (auto& b : buckets) {
      b.pending = static_cast<int>(b.params.size());
      b.ready = false;
      b.work.reset();
      b.comm = torch::Tensor();
    }
  }
};

namespace {
class ReadyHook : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(std::weak_ptr<GradReducer::State> state, size_t index)
      : state_(std::move(state)), index_(index) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    if (auto s = state_.lock()) s->on_grad(index_, state_);
    return outputs;
  }

 private:
  std::weak_ptr<GradReducer::State> state_;
  size_t index_;
};
}  // namespace

GradReducer::GradReducer(torch::nn::Module& module, std::shared_ptr<ProcessGroup> group,
                         GradReducerOptions options)
    : GradReducer(module.parameters(), std::move(group), options) {}

GradReducer::GradReducer(std::vector<torch::Tensor> parameters,
                         std::shared_ptr<ProcessGroup> group, GradReducerOptions options)
    : state_(std::make_shared<State>()) {
  LEROBOT_CHECK(group != nullptr, "GradReducer needs a process group");
  State& s = *state_;
  s.group = std::move(group);
  s.options = options;
  for (auto& p : parameters)
    if (p.requires_grad()) s.params.push_back(p);
  s.bucket_of.assign(s.params.size(), -1);
  s.arrived.assign(s.params.size(), false);

  std::vector<size_t> reverse(s.params.size());
  for (size_t i = 0; i < reverse.size(); ++i) reverse[i] = reverse.size() - 1 - i;
  s.assign_buckets(reverse);

  std::weak_ptr<State> weak = state_;
  for (size_t i = 0; i < s.params.size(); ++i) {
    auto acc = torch::autograd::impl::grad_accumulator(s.params[i]);
    LEROBOT_CHECK(acc != nullptr, "a parameter that requires grad must be a leaf tensor");
    hook_keys_.push_back(acc->add_post_hook(std::make_unique<ReadyHook>(weak, i)));
    accumulators_.push_back(std::move(acc));
  }
}

GradReducer::~GradReducer() {
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hook_keys_[i]);
}

void GradReducer::set_sync(bool sync) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  LEROBOT_CHECK(!state_->started, "set_sync() called between backward and synchronize()");
  state_->sync = sync;
}

bool GradReducer::sync() const { return state_->sync; }

bool GradReducer::synchronize() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.active()) return false;
  if (!s.error.empty()) {
    std::string e = s.error;
    s.error.clear();
    s.reset_step();
    throw_runtime("gradient reduction failed: " + e, "distributed gradient reducer",
                  "call backward once per synchronised step; use set_sync(false) on accumulation "
                  "micro-steps");
  }
  s.finish_backward();  // no-op when the engine callback already ran
  const double world = s.group->world_size();
  torch::NoGradGuard no_grad;
  std::vector<std::pair<int64_t, int64_t>> in_flight;  // [launch, completion] per bucket
  for (auto& b : s.buckets) {
    int64_t t0 = steady_now_ns();
    b.work->wait();
    int64_t t1 = steady_now_ns();
    s.timings.wait_s += (t1 - t0) * 1e-9;
    int64_t done = b.work->completed_at_ns() > 0 ? b.work->completed_at_ns() : t1;
    in_flight.emplace_back(b.launched_ns, std::max(done, b.launched_ns));
    ++s.timings.buckets;

    if (b.comm.data_ptr() != b.flat.data_ptr()) {
      b.flat.copy_(b.comm);  // bf16: already averaged, flags divided by world too
    } else {
      b.flat.div_(world);
    }
    auto used = b.flat.narrow(0, b.grad_numel, static_cast<int64_t>(b.params.size())).cpu();
    auto used_acc = used.to(torch::kFloat);
    for (size_t k = 0; k < b.params.size(); ++k) {
      if (used_acc[k].item<float>() <= 0.25f / static_cast<float>(world)) continue;  // unused everywhere
      torch::Tensor& p = s.params[b.params[k]];
      auto slot = b.flat.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        p.mutable_grad().copy_(slot);
      } else {
        p.mutable_grad() = slot.to(p.device()).clone();
      }
    }
  }
  // Wall time with at least one bucket in flight, and its part before backward finished.
  std::sort(in_flight.begin(), in_flight.end());
  int64_t cur_start = -1, cur_end = -1;
  auto close = [&] {
    if (cur_start < 0) return;
    s.timings.allreduce_s += (cur_end - cur_start) * 1e-9;
    int64_t hidden_end = std::min(cur_end, s.backward_end_ns);
    if (hidden_end > cur_start) s.timings.overlapped_s += (hidden_end - cur_start) * 1e-9;
  };
  for (const auto& iv : in_flight) {
    if (cur_start >= 0 && iv.first <= cur_end) {
      cur_end = std::max(cur_end, iv.second);
    } else {
      close();
      cur_start = iv.first;
      cur_end = iv.second;
    }
  }
  close();
  ++s.timings.steps;
  s.reset_step();
  if (!s.rebuilt && s.options.rebuild_buckets) s.rebuild_buckets();
  return true;
}

const GradReducerTimings& GradReducer::timings() const { return state_->timings; }
void GradReducer::reset_timings() { state_->timings = GradReducerTimings(); }

std::vector<std::vector<size_t>> GradReducer::buckets() const {
  std::vector<std::vector<size_t>> out;
  for (const auto& b : state_->buckets) out.push_back(b.params);
  return out;
}

std::vector<int64_t> GradReducer::bucket_bytes() const {
  std::vector<int64_t> out;
  for (const auto& b : state_->buckets) out.push_back(b.grad_numel * b.flat.element_size());
  return out;
}

}  // namespace lerobot
