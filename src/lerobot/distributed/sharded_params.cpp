// Sharded data parallel: flat shards, gather/release per unit, reduce-scatter (see sharded_params.h).
#include "lerobot/distributed/sharded_params.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

// A flat tensor's storage exists only while its unit is gathered: the StorageImpl is kept (the
// module's parameters and the tensors autograd saved alias it) and its bytes come and go.
void release_storage(const torch::Tensor& t) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  if (impl->nbytes() == 0) return;
  impl->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
  impl->set_nbytes(static_cast<size_t>(0));
}

void allocate_storage(const torch::Tensor& t) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  const size_t nbytes = static_cast<size_t>(t.numel()) * t.element_size();
  if (impl->nbytes() == nbytes) return;
  at::Allocator* allocator = impl->allocator() ? impl->allocator() : c10::GetAllocator(t.device().type());
  impl->set_data_ptr_noswap(allocator->allocate(nbytes));
  impl->set_nbytes(nbytes);
}

struct Flat {
  size_t unit = 0;
  int group = -1;
  std::vector<size_t> params;  // indices into State::params
  int64_t numel = 0;
  int64_t chunk = 0;           // per rank (padded)
  torch::Tensor full;          // [chunk × world]: the module's parameters alias its storage
  torch::Tensor shard;         // [chunk]: this rank's slice, a leaf (requires grad when group >= 0)
  torch::Tensor device_shard;  // what the all-gathers read: `shard`, or with cpu_offload its device copy
  std::unique_ptr<CollectiveWork> gather_work;
  torch::Tensor rs_input, rs_output;
  std::unique_ptr<CollectiveWork> rs_work;
  std::string name;
};

struct Unit {
  std::string name;
  std::vector<size_t> flats;
  bool gathered = false;  // storage allocated and (once gather_work is waited for) filled
  int pending_backward = 0;  // forward calls with gradients whose post-backward has not run
  bool reduced = false;      // reduce-scatter launched in this step
  bool ready = false;        // its backward is over in this step
  // cpu_offload: `stale`: its host shards may have been stepped since its device copies were
  // written; `fresh`: step_offloaded wrote them after this step's optimizer step; `uploaded`: that
  // copy, queued on the upload stream (CUDA), which a gather must wait for.
  bool stale = false, fresh = false;
  std::unique_ptr<c10::Event> uploaded;
};

}  // namespace

struct ShardedParameters::State {
  std::shared_ptr<ProcessGroup> group;
  std::shared_ptr<ProcessGroup> replicas;  // HSDP, or null
  ShardedOptions options;
  int world = 1, rank = 0;
  std::vector<ParamInfo> params;
  std::vector<torch::Tensor> module_params;  // parallel to params
  std::vector<Flat> flats;
  std::vector<Unit> units;  // root last
  std::recursive_mutex mutex;
  // This step: units in the order the forward ran them (with gradients), the reduce-scatter order
  // (its reverse) and how far it got. The previous step's order drives the forward prefetch.
  std::vector<size_t> order, previous_order;
  size_t next_reduce = 0;
  bool sync = true;
  bool in_step = false;
  std::optional<c10::Stream> upload_stream;  // cpu_offload on CUDA: step_offloaded's host-to-device copies
  ShardedTraffic traffic;
  int64_t held_bytes = 0, peak_held_bytes = 0;  // gathered (unsharded) bytes now, and the most at once

  size_t root() const { return units.size() - 1; }

  void launch_gather(size_t u) {
    Unit& unit = units[u];
    if (unit.gathered) return;
    upload_unit(u);  // its host shards, when stepped since (cpu_offload)
    for (size_t f : unit.flats) {
      Flat& flat = flats[f];
      allocate_storage(flat.full);
      held_bytes += static_cast<int64_t>(flat.full.storage().nbytes());
      peak_held_bytes = std::max(peak_held_bytes, held_bytes);
      flat.gather_work = group->all_gather_into_async(flat.full, flat.device_shard.detach());
      if (in_step) {
        traffic.gathered_bytes += flat.full.numel() * flat.full.element_size();
        ++traffic.gathers;
      }
    }
    unit.gathered = true;
  }
  void gather(size_t u) {
    launch_gather(u);
    for (size_t f : units[u].flats) {
      Flat& flat = flats[f];
      if (flat.gather_work) {
        flat.gather_work->wait();
        flat.gather_work.reset();
      }
    }
  }
  bool offloaded(const Flat& flat) const { return options.cpu_offload && flat.group >= 0; }
  // cpu_offload: the unit's host shards (the optimizer may have stepped them) to the device copies
  // the gathers read, queued on the current stream (from pinned memory on CUDA), so the
  // collectives, ordered after it, see the new values; or, when step_offloaded already queued that
  // copy on the upload stream, the current stream waits for it.
  void upload_unit(size_t u) {
    Unit& unit = units[u];
    if (unit.uploaded) {
      unit.uploaded->block(current_stream());
      unit.uploaded.reset();
    }
    if (!unit.stale) return;
    unit.stale = false;
    copy_host_shards(unit, /*non_blocking=*/true);
  }
  // The unit's offloaded host shards into their device copies, on the current stream.
  void copy_host_shards(const Unit& unit, bool non_blocking) {
    torch::NoGradGuard no_grad;
    for (size_t f : unit.flats)
      if (offloaded(flats[f])) flats[f].device_shard.copy_(flats[f].shard.detach(), non_blocking);
  }
  // Every unit's device copies taken from the host again, except those step_offloaded wrote since
  // the optimizer's step (begin_forward, gather_all: the host shards may have changed by any path).
  void mark_unrefreshed_stale() {
    if (!options.cpu_offload) return;
    for (Unit& unit : units) unit.stale = unit.stale || !unit.fresh;
  }
  c10::Stream current_stream() const {
    const c10::Device device = group->device();
    return c10::impl::VirtualGuardImpl(device.type()).getStream(device);
  }
  // step_offloaded: the unit's stepped host shards to their device copies, on the upload stream
  // on CUDA (after what the current stream queued: the last reads of the copies), so the copy runs
  // while the host steps the next unit; the unit's next gather waits for it (upload_unit).
  void upload_stepped_unit(size_t u) {
    Unit& unit = units[u];
    const c10::Device device = group->device();
    if (!device.is_cuda()) {  // CPU: the copies are the host's own work
      copy_host_shards(unit, /*non_blocking=*/false);
    } else {
      c10::impl::VirtualGuardImpl impl(device.type());
      if (!upload_stream) upload_stream = impl.getStreamFromGlobalPool(device);
      c10::Event reads_done(device.type());
      reads_done.record(impl.getStream(device));
      reads_done.block(*upload_stream);
      {
        c10::StreamGuard on_upload(*upload_stream);
        copy_host_shards(unit, /*non_blocking=*/true);
      }
      unit.uploaded = std::make_unique<c10::Event>(device.type());
      unit.uploaded->record(*upload_stream);
    }
    unit.stale = false;
    unit.fresh = true;
  }
  void release(size_t u) {
    Unit& unit = units[u];
    if (!unit.gathered) return;
    for (size_t f : unit.flats) {
      Flat& flat = flats[f];
      if (flat.gather_work) {  // a prefetch nobody used: it must land before its buffer goes
        flat.gather_work->wait();
        flat.gather_work.reset();
      }
      held_bytes -= static_cast<int64_t>(flat.full.storage().nbytes());
      release_storage(flat.full);
    }
    unit.gathered = false;
  }
  // The unit after (forward) or before (backward) `u` in a recorded order.
  void prefetch_neighbour(const std::vector<size_t>& in, size_t u, int direction) {
    if (!options.prefetch) return;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i] == u) {
        const int64_t j = static_cast<int64_t>(i) + direction;
        if (j >= 0 && j < static_cast<int64_t>(in.size())) launch_gather(in[j]);
        return;
      }
  }

  void launch_reduce(size_t u) {
    Unit& unit = units[u];
    if (unit.reduced) return;
    unit.reduced = true;
    torch::NoGradGuard no_grad;
    for (size_t f : unit.flats) {
      Flat& flat = flats[f];
      if (flat.group < 0) continue;
      flat.rs_input = torch::zeros({flat.chunk * world}, flat.full.options());
      for (size_t i : flat.params) {
        torch::Tensor& p = module_params[i];
        if (p.grad().defined()) {
          flat.rs_input.narrow(0, params[i].offset, p.numel()).copy_(p.grad().reshape({-1}));
          p.mutable_grad() = torch::Tensor();
        }
      }
      flat.rs_output = torch::empty({flat.chunk}, flat.full.options());
      flat.rs_work = group->reduce_scatter_async(flat.rs_output, flat.rs_input, ReduceOp::kAvg);
      traffic.reduced_bytes += flat.rs_input.numel() * flat.rs_input.element_size();
      ++traffic.reductions;
    }
  }
  // Launches the reduce-scatters whose turn it is (reverse forward order).
  void launch_ready_reductions() {
    while (next_reduce < order.size()) {
      const size_t u = order[order.size() - 1 - next_reduce];
      if (!units[u].ready) return;
      launch_reduce(u);
      if (u != root()) release(u);  // its backward is over: the parameters are not needed again
      ++next_reduce;
    }
  }

  void pre_backward(size_t u) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    gather(u);
    prefetch_neighbour(order, u, -1);
  }
  void post_backward(size_t u) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    Unit& unit = units[u];
    if (--unit.pending_backward > 0) return;
    unit.ready = true;
    if (sync) launch_ready_reductions();  // releases what it reduced
    else release(u);                      // the gradients stay on the module's parameters
  }
};

namespace {

// Identity on the tensors it is attached to; runs `hook` when their gradients pass in backward.
struct HookBackward : public torch::autograd::Node {
  std::weak_ptr<ShardedParameters::State> state;
  size_t unit = 0;
  bool pre = true;  // pre-backward (on a unit's outputs) or post-backward (on its inputs)
  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    if (auto s = state.lock()) {
      if (pre) s->pre_backward(unit);
      else s->post_backward(unit);
    }
    return std::move(grads);
  }
  std::string name() const override { return pre ? "ShardPreBackward" : "ShardPostBackward"; }
};

// Returns `tensors` with those that require a gradient routed through one HookBackward node
// (aliases sharing storage); nullptr node when none does.
std::vector<torch::Tensor> attach(const std::vector<torch::Tensor>& tensors, const std::shared_ptr<ShardedParameters::State>& state,
                                  size_t unit, bool pre, bool* attached) {
  std::vector<torch::Tensor> through;
  for (const auto& t : tensors)
    if (t.defined() && t.requires_grad()) through.push_back(t);
  *attached = !through.empty();
  if (through.empty()) return tensors;
  auto node = std::shared_ptr<HookBackward>(new HookBackward(), torch::autograd::deleteNode);
  node->state = state;
  node->unit = unit;
  node->pre = pre;
  node->set_next_edges(torch::autograd::collect_next_edges(through));
  std::vector<torch::Tensor> out;
  for (const auto& t : tensors) {
    if (!(t.defined() && t.requires_grad())) {
      out.push_back(t);
      continue;
    }
    torch::Tensor alias = t.detach();
    torch::autograd::set_history(alias, node);
    out.push_back(alias);
  }
  return out;
}

}  // namespace

HybridGroups make_hybrid_groups(ProcessGroup& world, int shard_size) {
  const int w = world.world_size(), r = world.rank(), n = shard_size;
  LEROBOT_CHECK(n >= 1 && w % n == 0, "make_hybrid_groups: the shard size must divide the world size");
  std::vector<int> shard_ranks, replica_ranks;
  for (int i = 0; i < n; ++i) shard_ranks.push_back(r / n * n + i);
  for (int i = r % n; i < w; i += n) replica_ranks.push_back(i);
  HybridGroups g;
  g.shard = world.subgroup(shard_ranks);
  g.replicas = world.subgroup(replica_ranks);
  return g;
}

ShardedParameters::ShardedParameters(std::vector<ShardedUnitSpec> specs, std::shared_ptr<ProcessGroup> group,
                                     ShardedOptions options, std::shared_ptr<ProcessGroup> replicas)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  LEROBOT_CHECK(group != nullptr, "ShardedParameters needs a process group");
  s.group = std::move(group);
  if (replicas && replicas->world_size() > 1) s.replicas = std::move(replicas);
  s.options = options;
  s.world = s.group->world_size();
  s.rank = s.group->rank();
  if (specs.empty()) specs.push_back({});  // the root, empty
  std::unordered_set<const void*> seen_storage;
  torch::NoGradGuard no_grad;
  for (size_t u = 0; u < specs.size(); ++u) {
    ShardedUnitSpec& spec = specs[u];
    Unit unit;
    unit.name = u + 1 == specs.size() && spec.name.empty() ? "root" : spec.name;
    std::map<std::pair<int, int>, size_t> flat_of;  // (dtype, group) → flat index
    for (size_t i = 0; i < spec.params.size(); ++i) {
      const torch::Tensor& p = spec.params[i];
      const std::string& name = i < spec.param_names.size() ? spec.param_names[i] : "?";
      const void* storage = p.storage().unsafeGetStorageImpl();
      if (!seen_storage.insert(storage).second)
        throw_usage("parameter '" + name + "' shares its storage with another parameter (tied weights)",
                    "--parallelism.dp_shard", "sharded data parallel needs every parameter to own its storage");
      const int g = i < spec.groups.size() ? spec.groups[i] : -1;
      const auto key = std::make_pair(static_cast<int>(p.scalar_type()), g);
      auto it = flat_of.find(key);
      if (it == flat_of.end()) {
        Flat flat;
        flat.unit = u;
        flat.group = g;
        flat.name = unit.name + "/" + std::string(c10::toString(p.scalar_type())) + (g >= 0 ? "/group" + std::to_string(g) : "/frozen");
        s.flats.push_back(std::move(flat));
        it = flat_of.emplace(key, s.flats.size() - 1).first;
        unit.flats.push_back(it->second);
      }
      Flat& flat = s.flats[it->second];
      ParamInfo info{name, g, p.sizes().vec(), it->second, flat.numel};
      flat.params.push_back(s.params.size());
      flat.numel += p.numel();
      s.params.push_back(info);
      s.module_params.push_back(p);
    }
    s.units.push_back(std::move(unit));
  }
  // Lay each flat out, keep this rank's slice, alias the parameters into the flat storage.
  for (Flat& flat : s.flats) {
    const torch::Tensor& first = s.module_params[flat.params.front()];
    flat.chunk = std::max<int64_t>(1, (flat.numel + s.world - 1) / s.world);
    flat.full = torch::zeros({flat.chunk * s.world}, first.options().requires_grad(false));
    for (size_t i : flat.params)
      flat.full.narrow(0, s.params[i].offset, s.module_params[i].numel()).copy_(s.module_params[i].detach().reshape({-1}));
    flat.shard = flat.full.narrow(0, s.rank * flat.chunk, flat.chunk).clone();
    flat.device_shard = flat.shard;
    if (s.offloaded(flat)) {  // the master on the host, a separate storage even when the device is the CPU
      flat.shard = torch::empty({flat.chunk}, flat.device_shard.options().device(torch::kCPU).pinned_memory(flat.device_shard.is_cuda()));
      flat.shard.copy_(flat.device_shard);
    }
    if (flat.group >= 0) flat.shard.requires_grad_(true);
    for (size_t i : flat.params) {
      torch::Tensor& p = s.module_params[i];
      p.set_data(flat.full.narrow(0, s.params[i].offset, p.numel()).view(p.sizes()));
    }
  }
  for (size_t u = 0; u < s.units.size(); ++u) {
    s.units[u].gathered = true;
    s.release(u);
  }
  s.held_bytes = s.peak_held_bytes = 0;  // the built flats were never counted as gathered
}

ShardedParameters::~ShardedParameters() {
  if (!state_) return;
  try {
    std::lock_guard<std::recursive_mutex> lock(state_->mutex);
    for (Flat& f : state_->flats) {
      if (f.gather_work) f.gather_work->wait();
      if (f.rs_work) f.rs_work->wait();
    }
  } catch (const std::exception&) {
    // Teardown after a failed collective: the error was reported where it happened.
  }
}

int ShardedParameters::world_size() const { return state_->world; }
int ShardedParameters::replicas() const { return state_->replicas ? state_->replicas->world_size() : 1; }
size_t ShardedParameters::num_units() const { return state_->units.size(); }
const std::string& ShardedParameters::unit_name(size_t unit) const { return state_->units.at(unit).name; }
const std::vector<ShardedParameters::ParamInfo>& ShardedParameters::params() const { return state_->params; }
int64_t ShardedParameters::flat_numel(size_t flat) const { return state_->flats.at(flat).numel; }

ShardedTraffic ShardedParameters::traffic() const { return state_->traffic; }

int64_t ShardedParameters::gathered_bytes() const { return state_->held_bytes; }
int64_t ShardedParameters::peak_gathered_bytes() const { return state_->peak_held_bytes; }
void ShardedParameters::reset_peak_gathered() { state_->peak_held_bytes = state_->held_bytes; }

ShardedMemory ShardedParameters::memory() const {
  ShardedMemory m;
  std::vector<int64_t> unit_bytes(state_->units.size(), 0);
  for (const Flat& f : state_->flats) {
    const int64_t es = f.shard.element_size();
    m.shard_bytes += f.chunk * es;
    if (f.group >= 0) m.trainable_shard_bytes += f.chunk * es;
    if (state_->offloaded(f)) m.host_bytes += f.chunk * es;
    m.total_bytes += f.numel * es;
    unit_bytes[f.unit] += f.chunk * state_->world * es;
  }
  for (size_t u = 0; u < unit_bytes.size(); ++u)
    if (unit_bytes[u] > m.largest_unit_bytes) {
      m.largest_unit_bytes = unit_bytes[u];
      m.largest_unit = state_->units[u].name;
    }
  m.root_bytes = unit_bytes.back();
  return m;
}

std::vector<torch::Tensor> ShardedParameters::shards_of_group(int group) const {
  std::vector<torch::Tensor> out;
  for (const Flat& f : state_->flats)
    if (f.group == group) out.push_back(f.shard);
  return out;
}
std::vector<std::string> ShardedParameters::shard_names_of_group(int group) const {
  std::vector<std::string> out;
  for (const Flat& f : state_->flats)
    if (f.group == group) out.push_back(f.name);
  return out;
}
std::vector<size_t> ShardedParameters::trainable_flats() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < state_->flats.size(); ++i)
    if (state_->flats[i].group >= 0) out.push_back(i);
  return out;
}
std::vector<size_t> ShardedParameters::flats_of_group(int group) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < state_->flats.size(); ++i)
    if (state_->flats[i].group == group) out.push_back(i);
  return out;
}
std::vector<torch::Tensor> ShardedParameters::trainable_shards() const {
  std::vector<torch::Tensor> out;
  for (size_t i : trainable_flats()) out.push_back(state_->flats[i].shard);
  return out;
}
std::vector<torch::Tensor> ShardedParameters::trainable_device_shards() const {
  std::vector<torch::Tensor> out;
  for (size_t i : trainable_flats()) out.push_back(state_->flats[i].device_shard);
  return out;
}
bool ShardedParameters::cpu_offload() const { return state_->options.cpu_offload; }
std::vector<std::string> ShardedParameters::trainable_shard_names() const {
  std::vector<std::string> out;
  for (size_t i : trainable_flats()) out.push_back(state_->flats[i].name);
  return out;
}

void ShardedParameters::begin_forward() {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.in_step = true;
  ++s.traffic.steps;
  s.order.clear();
  s.next_reduce = 0;
  for (Unit& u : s.units) {
    u.pending_backward = 0;
    u.reduced = false;
    u.ready = false;
  }
  s.mark_unrefreshed_stale();
  s.gather(s.root());
  if (!s.previous_order.empty() && s.options.prefetch) s.launch_gather(s.previous_order.front());
}

void ShardedParameters::set_sync(bool sync) { state_->sync = sync; }

std::vector<torch::Tensor> ShardedParameters::before_unit(size_t u, const std::vector<torch::Tensor>& inputs) {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.gather(u);
  const bool grad = torch::GradMode::is_enabled() && s.in_step;
  if (grad && std::find(s.order.begin(), s.order.end(), u) == s.order.end()) s.order.push_back(u);
  s.prefetch_neighbour(s.previous_order, u, +1);
  if (!grad) return inputs;
  ++s.units[u].pending_backward;
  bool attached = false;
  auto out = attach(inputs, state_, u, /*pre=*/false, &attached);
  // No input needs a gradient: nothing in backward marks the unit's end; end_backward does.
  if (!attached) --s.units[u].pending_backward;
  return out;
}

std::vector<torch::Tensor> ShardedParameters::after_unit(size_t u, const std::vector<torch::Tensor>& outputs) {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  std::vector<torch::Tensor> out = outputs;
  if (torch::GradMode::is_enabled() && s.in_step) {
    bool attached = false;
    out = attach(outputs, state_, u, /*pre=*/true, &attached);
  }
  if (s.options.reshard_after_forward || !s.in_step) s.release(u);
  return out;
}

void ShardedParameters::end_backward(bool sync) {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  if (sync) {
    // What backward did not reach, in a fixed order: the rest of the reverse forward order, then
    // every other unit by index (the root last).
    for (size_t u : s.order) s.units[u].ready = true;
    s.launch_ready_reductions();
    for (size_t u = 0; u < s.units.size(); ++u) s.launch_reduce(u);
    torch::NoGradGuard no_grad;
    std::vector<std::pair<Flat*, torch::Tensor>> grads;
    bool from_cuda = false;
    std::vector<std::unique_ptr<CollectiveWork>> replica_works;
    for (Flat& f : s.flats) {
      if (!f.rs_work) continue;
      f.rs_work->wait();
      f.rs_work.reset();
      if (s.replicas) {  // HSDP: the shard group's average, averaged over the replicas
        replica_works.push_back(s.replicas->all_reduce_async(f.rs_output, ReduceOp::kAvg));
        s.traffic.replica_reduced_bytes += f.rs_output.numel() * f.rs_output.element_size();
      }
    }
    for (auto& w : replica_works) w->wait();
    for (Flat& f : s.flats) {
      if (!f.rs_output.defined()) continue;
      torch::Tensor g = f.rs_output;
      if (s.offloaded(f)) {  // to the host master's .grad (non-blocking into pinned memory on CUDA)
        g = torch::empty({f.chunk}, f.shard.options().requires_grad(false));
        g.copy_(f.rs_output, /*non_blocking=*/true);
        from_cuda = from_cuda || f.rs_output.is_cuda();
      }
      grads.emplace_back(&f, g);
      f.rs_input = torch::Tensor();
    }
    if (from_cuda) torch::cuda::synchronize(s.group->device().has_index() ? s.group->device().index() : -1);
    for (auto& [f, g] : grads) {
      if (f->shard.grad().defined()) f->shard.mutable_grad().add_(g);
      else f->shard.mutable_grad() = g;
      f->rs_output = torch::Tensor();
    }
    for (Unit& unit : s.units) {  // the optimizer steps the host shards next
      unit.stale = s.options.cpu_offload;
      unit.fresh = false;
    }
  }
  for (size_t u = 0; u < s.units.size(); ++u) s.release(u);
  s.previous_order = s.order;
  s.in_step = false;
}

void ShardedParameters::step_offloaded(const std::function<void()>& step) {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  if (!s.options.cpu_offload) {
    step();
    return;
  }
  // The next forward's order: the root, the units as this step's forward ran them, the rest.
  std::vector<size_t> sequence{s.root()};
  for (size_t u : s.previous_order)
    if (u != s.root()) sequence.push_back(u);
  for (size_t u = 0; u + 1 < s.units.size(); ++u)
    if (std::find(sequence.begin(), sequence.end(), u) == sequence.end()) sequence.push_back(u);
  // Every trainable shard's gradient set aside; each unit's given back for its own step.
  std::vector<torch::Tensor> grads(s.flats.size());
  for (size_t f = 0; f < s.flats.size(); ++f)
    if (s.flats[f].group >= 0) {
      grads[f] = s.flats[f].shard.grad();
      s.flats[f].shard.mutable_grad() = torch::Tensor();
    }
  const auto give_back = [&] {
    for (size_t f = 0; f < s.flats.size(); ++f)
      if (grads[f].defined()) s.flats[f].shard.mutable_grad() = grads[f];
  };
  try {
    for (size_t u : sequence) {
      bool any = false;
      for (size_t f : s.units[u].flats)
        if (grads[f].defined()) {
          s.flats[f].shard.mutable_grad() = grads[f];
          any = true;
        }
      if (!any) continue;
      step();
      for (size_t f : s.units[u].flats)
        if (grads[f].defined()) s.flats[f].shard.mutable_grad() = torch::Tensor();
      if (s.units[u].stale) s.upload_stepped_unit(u);
    }
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

torch::Tensor ShardedParameters::clip_grad_norm_(double max_norm) {
  State& s = *state_;
  torch::NoGradGuard no_grad;
  torch::Tensor sum_sq = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(s.group->device()));
  std::vector<torch::Tensor> grads;
  for (size_t i : trainable_flats()) {
    const torch::Tensor& g = s.flats[i].shard.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    sum_sq = sum_sq + g.to(torch::kFloat32).pow(2).sum().to(sum_sq.device());
  }
  torch::Tensor flat_sum = sum_sq.reshape({1}).contiguous();
  s.group->all_reduce(flat_sum, ReduceOp::kSum);
  torch::Tensor total = flat_sum.reshape({}).sqrt();
  if (max_norm > 0 && !grads.empty()) {
    const torch::Tensor coef = torch::clamp_max(torch::reciprocal(total + 1e-6) * max_norm, 1.0).to(grads.front().device());
    for (auto& g : grads) g.mul_(coef.to(g.device()).to(g.scalar_type()));
  }
  // cpu_offload: the norm stays on the device (the host grads' sums went there), as without.
  return grads.empty() || s.options.cpu_offload ? total : total.to(grads.front().device());
}

void ShardedParameters::gather_all() {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.mark_unrefreshed_stale();
  for (size_t u = 0; u < s.units.size(); ++u) s.launch_gather(u);
  for (size_t u = 0; u < s.units.size(); ++u) s.gather(u);
}

void ShardedParameters::release_all() {
  State& s = *state_;
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  for (size_t u = 0; u < s.units.size(); ++u) s.release(u);
}

void ShardedParameters::gather_unit(size_t unit) {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  state_->gather(unit);
}

void ShardedParameters::release_unit(size_t unit) {
  std::lock_guard<std::recursive_mutex> lock(state_->mutex);
  state_->release(unit);
}

size_t ShardedParameters::flat_unit(size_t flat) const { return state_->flats.at(flat).unit; }
const torch::Tensor& ShardedParameters::module_param(size_t i) const { return state_->module_params.at(i); }

torch::Tensor ShardedParameters::gather_flat(size_t flat, const torch::Tensor& shard_like) {
  const Flat& f = state_->flats.at(flat);
  torch::NoGradGuard no_grad;
  torch::Tensor in = shard_like.detach().reshape({-1}).to(state_->group->device()).contiguous();
  LEROBOT_CHECK(in.numel() == f.chunk, "gather_flat: a tensor of the shard's size is needed");
  torch::Tensor out = torch::empty({f.chunk * state_->world}, in.options());
  state_->group->all_gather_into_async(out, in)->wait();
  return out.narrow(0, 0, f.numel);
}

torch::Tensor ShardedParameters::shard_of_flat(size_t flat, const torch::Tensor& full) const {
  const Flat& f = state_->flats.at(flat);
  torch::NoGradGuard no_grad;
  torch::Tensor flat_full = full.detach().reshape({-1});
  LEROBOT_CHECK(flat_full.numel() == f.numel || flat_full.numel() == f.chunk * state_->world,
                "shard_of_flat: a tensor of the flat's size is needed");
  torch::Tensor padded = torch::zeros({f.chunk * state_->world}, flat_full.options());
  padded.narrow(0, 0, flat_full.numel()).copy_(flat_full);
  return padded.narrow(0, state_->rank * f.chunk, f.chunk).clone();
}

}  // namespace lerobot
