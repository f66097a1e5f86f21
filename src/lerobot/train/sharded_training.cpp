// Sharded data parallel in a training run (see sharded_training.h).
#include "lerobot/train/sharded_training.h"

#include <map>
#include <set>
#include <sstream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/optim/optimizer_state.h"
#include "lerobot/policies/policy_units.h"
#include "lerobot/train/train_config.h"

namespace lerobot {

namespace {

std::string mb(int64_t bytes) {
  std::ostringstream s;
  s.precision(3);
  s << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MB";
  return s.str();
}

}  // namespace

int64_t resolve_dp_shard(const ParallelismConfig& parallelism, int world_size) {
  // dp_replicate >= 1 and dp_shard >= 1 or -1: checked when the config was parsed (validate()).
  const int64_t replicate = parallelism.dp_replicate;
  int64_t shard = parallelism.dp_shard;
  if (shard == -1) {
    if (world_size % replicate != 0)
      throw_usage("cannot infer dp_shard: " + std::to_string(world_size) + " processes are not divisible by dp_replicate=" +
                      std::to_string(replicate),
                  "--parallelism.dp_shard", "set --parallelism.dp_replicate to a divisor of the process count");
    shard = world_size / replicate;
  }
  if (shard == 1) {  // plain data parallel: dp_replicate is the process count (LeRobot fills an untouched 1)
    if (replicate != 1 && replicate != world_size)
      throw_usage("the parallelism degrees do not multiply to the process count: dp_replicate=" + std::to_string(replicate) +
                      " x dp_shard=1 != " + std::to_string(world_size) + " processes",
                  "--parallelism.dp_replicate", "drop --parallelism.dp_replicate (it is the process count without sharding)");
    return 1;
  }
  if (replicate * shard != world_size)
    throw_usage("the parallelism degrees do not multiply to the process count: dp_replicate=" + std::to_string(replicate) +
                    " x dp_shard=" + std::to_string(shard) + " != " + std::to_string(world_size) + " processes",
                "--parallelism.dp_shard",
                "set --parallelism.dp_shard=" + std::to_string(world_size / replicate) + " (or -1)" +
                    (world_size % replicate == 0 ? std::string() : " with a dp_replicate that divides the process count") +
                    ", or launch " + std::to_string(replicate * shard) + " processes (--num_processes=" +
                    std::to_string(replicate * shard) + ")");
  return shard;
}

int64_t sharded_static_bytes(const ShardedMemory& m, bool reshard_after_forward, bool cpu_offload) {
  const int64_t gathered = reshard_after_forward ? m.root_bytes + 2 * m.largest_unit_bytes : m.total_bytes;
  return m.shard_bytes + m.trainable_shard_bytes * (cpu_offload ? 1 : 3) + gathered;
}

void check_sharded_fits(const ShardedMemory& m, bool reshard_after_forward, bool cpu_offload, int64_t device_bytes) {
  const int64_t need = sharded_static_bytes(m, reshard_after_forward, cpu_offload);
  if (need <= device_bytes) return;
  const std::string sizes = " needs " + mb(need) + " on a GPU of " + mb(device_bytes) + " before any activation";
  // What no shard count changes: the root and the largest unit gathered (with its prefetch).
  const int64_t fixed = m.root_bytes + 2 * m.largest_unit_bytes;
  if (reshard_after_forward && fixed > device_bytes / 2)
    throw_usage("the unit '" + m.largest_unit + "' is too large to shard: gathered with its neighbour (" +
                    mb(2 * m.largest_unit_bytes) + ") and the parameters outside units (" + mb(m.root_bytes) + "), the step" + sizes,
                "--accelerator.fsdp.wrap_modules",
                "wrap smaller modules (--accelerator.fsdp.wrap_modules, or a lower --accelerator.fsdp.min_num_params), "
                "or use a GPU with more memory; `lerobot-cpp estimate` shows the per-GPU sizes");
  throw_usage("the sharded step" + sizes, "--parallelism.dp_shard",
              std::string(reshard_after_forward ? "" : "keep --accelerator.fsdp.reshard_after_forward=true, ") +
                  "shard over more processes (--parallelism.dp_shard)" +
                  (cpu_offload ? "" : " or set --accelerator.fsdp.cpu_offload=true") +
                  "; `lerobot-cpp estimate --gpu_memory_gb=G` says what fits");
}

std::vector<PolicyUnit> chosen_units(Policy& policy, const FsdpConfig& fsdp) {
  std::vector<PolicyUnit> units = policy.units();
  std::vector<std::string> classes;
  for (const auto& u : units)
    if (std::find(classes.begin(), classes.end(), u.class_name) == classes.end()) classes.push_back(u.class_name);
  if (units.empty())
    throw_usage("policy type '" + policy.type() + "' declares no units to shard (sharding only the whole model saves nothing)",
                "--parallelism.dp_shard", "train it with plain data parallelism (--parallelism.dp_shard=1)");
  // wrap_modules and min_num_params exclusive, min_num_params >= 1: checked by validate().
  std::vector<PolicyUnit> out;
  if (fsdp.wrap_modules) {
    for (const auto& name : *fsdp.wrap_modules)
      if (std::find(classes.begin(), classes.end(), name) == classes.end())
        throw_usage("wrap module '" + name + "' matches no unit of policy type '" + policy.type() + "'",
                    "--accelerator.fsdp.wrap_modules", "use some of: " + join(classes, ", "));
    for (const auto& u : units)
      if (std::find(fsdp.wrap_modules->begin(), fsdp.wrap_modules->end(), u.class_name) != fsdp.wrap_modules->end())
        out.push_back(u);
    return out;
  }
  if (fsdp.min_num_params) {
    for (const auto& u : units) {
      int64_t n = 0;
      for (const auto& p : unit_parameters(policy, u)) n += p.numel();
      if (n >= *fsdp.min_num_params) out.push_back(u);
    }
    return out;
  }
  return units;
}

class ShardedTraining::Runner : public UnitRunner {
 public:
  Runner(ShardedParameters& params, std::map<const torch::nn::Module*, size_t> index, UnitRunner* inner)
      : params_(params), index_(std::move(index)), inner_(inner) {}
  std::vector<torch::Tensor> run(torch::nn::Module& unit, const std::vector<torch::Tensor>& inputs,
                                 const UnitFn& fn) override {
    const auto it = index_.find(&unit);
    if (it == index_.end()) return inner_ ? inner_->run(unit, inputs, fn) : fn(inputs);
    const std::vector<torch::Tensor> in = params_.before_unit(it->second, inputs);
    const std::vector<torch::Tensor> out = inner_ ? inner_->run(unit, in, fn) : fn(in);
    return params_.after_unit(it->second, out);
  }

 private:
  ShardedParameters& params_;
  std::map<const torch::nn::Module*, size_t> index_;
  UnitRunner* inner_;
};

ShardedTraining::ShardedTraining(Policy& policy, const std::vector<PolicyParamGroup>& groups, const FsdpConfig& fsdp,
                                 std::shared_ptr<ProcessGroup> world, int64_t dp_shard, UnitRunner* inner)
    : groups_(groups) {
  if (fsdp.ignored_modules)
    throw_usage("fsdp.ignored_modules is not supported: every parameter is sharded", "--accelerator.fsdp.ignored_modules",
                "drop --accelerator.fsdp.ignored_modules");
  const std::vector<PolicyUnit> units = chosen_units(policy, fsdp);
  std::map<const void*, int> group_of;
  for (size_t g = 0; g < groups.size(); ++g) {
    group_sizes_.push_back(groups[g].params.size());
    for (const auto& p : groups[g].params) group_of[p.unsafeGetTensorImpl()] = static_cast<int>(g);
  }
  std::vector<ShardedUnitSpec> specs(units.size() + 1);
  std::map<const torch::nn::Module*, size_t> index;
  for (size_t u = 0; u < units.size(); ++u) {
    specs[u].name = units[u].prefixes.empty() ? units[u].class_name : units[u].prefixes.front();
    if (!specs[u].name.empty() && specs[u].name.back() == '.') specs[u].name.pop_back();
    index[units[u].module] = u;
  }
  specs.back().name = "root";
  // Each parameter in the first unit that holds it, the rest in the root.
  std::map<const void*, size_t> unit_of;
  for (size_t u = 0; u < units.size(); ++u)
    for (const auto& p : unit_parameters(policy, units[u])) unit_of.emplace(p.unsafeGetTensorImpl(), u);
  for (const auto& p : policy.named_parameters()) {
    const auto in_unit = unit_of.find(p.value().unsafeGetTensorImpl());
    const size_t u = in_unit == unit_of.end() ? units.size() : in_unit->second;
    const auto g = group_of.find(p.value().unsafeGetTensorImpl());
    specs[u].param_names.push_back(p.key());
    specs[u].params.push_back(p.value());
    specs[u].groups.push_back(g == group_of.end() ? -1 : g->second);
  }
  for (const auto& s : specs) unit_names_.push_back(s.name);
  ShardedOptions options;
  options.reshard_after_forward = fsdp.reshard_after_forward;
  options.cpu_offload = fsdp.cpu_offload;
  reshard_ = fsdp.reshard_after_forward;
  // Over the whole world, or HSDP: shard groups of dp_shard consecutive ranks and their replicas.
  HybridGroups layout{world, nullptr};
  if (dp_shard != world->world_size()) layout = make_hybrid_groups(*world, static_cast<int>(dp_shard));
  params_ = std::make_unique<ShardedParameters>(std::move(specs), layout.shard, options, layout.replicas);
  runner_ = std::make_unique<Runner>(*params_, std::move(index), inner);

  // The non-sharded layout: the policy's parameters in group order.
  std::map<const void*, size_t> sharded_index;  // the module's tensors stay the same tensors when sharded
  for (size_t i = 0; i < params_->params().size(); ++i) sharded_index[params_->module_param(i).unsafeGetTensorImpl()] = i;
  nonsharded_of_.assign(params_->params().size(), SIZE_MAX);
  size_t next = 0;
  for (const auto& g : groups)
    for (const auto& p : g.params) nonsharded_of_[sharded_index.at(p.unsafeGetTensorImpl())] = next++;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t f : params_->flats_of_group(static_cast<int>(g))) shard_flats_.push_back(f);
}

ShardedTraining::~ShardedTraining() = default;

UnitRunner* ShardedTraining::runner() { return runner_.get(); }

std::vector<ParamGroup> ShardedTraining::optimizer_groups() const {
  std::vector<ParamGroup> out;
  for (size_t g = 0; g < groups_.size(); ++g)
    out.push_back(ParamGroup{params_->shards_of_group(static_cast<int>(g)), params_->shard_names_of_group(static_cast<int>(g)),
                             groups_[g].lr, groups_[g].weight_decay});
  return out;
}

std::string ShardedTraining::report() const {
  const ShardedMemory m = params_->memory();
  std::ostringstream s;
  s << "Sharded data parallel over " << params_->world_size() << " processes";
  if (params_->replicas() > 1) s << " (hybrid: " << params_->replicas() << " replicas of the shards, dp_replicate)";
  s << ": " << unit_names_.size() - 1
    << " units and the root; parameters per process " << mb(m.shard_bytes) << " of " << mb(m.total_bytes)
    << " (gradients and optimizer state follow the shards: " << mb(m.trainable_shard_bytes) << " trainable), largest unit gathered "
    << mb(m.largest_unit_bytes);
  if (params_->cpu_offload()) {
    const auto device_shards = params_->trainable_device_shards();
    const bool pinned = !device_shards.empty() && device_shards.front().is_cuda();
    s << "; optimizer state on the host (cpu_offload" << (pinned ? ", pinned memory" : "") << "): the stepped shards ("
      << mb(m.host_bytes) << "), their gradients and the optimizer's state, stepped by the CPU; the device keeps a copy of the "
      << "shards for the gathers";
  } else
    s << "; optimizer state on the device";
  return s.str();
}

void ShardedTraining::check_fits(int64_t device_bytes) const {
  check_sharded_fits(params_->memory(), reshard_, params_->cpu_offload(), device_bytes);
}

std::string ShardedTraining::traffic_report() const {
  const ShardedTraffic t = params_->traffic();
  const ShardedMemory m = params_->memory();
  if (t.steps == 0) return "Sharded data parallel: no step ran";
  // DDP all-reduces every trainable gradient once per optimizer step: twice its bytes (a
  // reduce-scatter and an all-gather), the unit this and the sharded volume are counted in.
  const double trainable = static_cast<double>(m.trainable_shard_bytes) * params_->world_size();
  // Theory: the root gathered once, every unit once per forward and (resharded) once more for its
  // backward, every trainable byte reduce-scattered once: 1.5x an all-reduce when units hold
  // everything, 1.0x without resharding.
  const double units = static_cast<double>(m.total_bytes - m.root_bytes);
  const double expected = (m.root_bytes + units * (reshard_ ? 2.0 : 1.0) + trainable) / (2.0 * trainable);
  std::ostringstream s;
  s.precision(3);
  s << "Sharded data parallel traffic per step: all-gathered " << mb(t.gathered_bytes / t.steps) << " ("
    << static_cast<double>(t.gathers) / t.steps << " gathers), reduce-scattered " << mb(t.reduced_bytes / t.steps) << " ("
    << static_cast<double>(t.reductions) / t.steps << " reductions); "
    << (static_cast<double>(t.gathered_bytes + t.reduced_bytes) / t.steps) / (2.0 * trainable)
    << "x the volume of DDP's all-reduce of the trainable gradients (expected for this layout: " << expected << "x)";
  if (params_->replicas() > 1)
    s << "; across the " << params_->replicas() << " replicas the shards' gradients all-reduced, "
      << mb(t.replica_reduced_bytes / t.steps) << " per step";
  return s.str();
}

TensorMap ShardedTraining::gathered_state_dict(const Policy& policy, bool keep) {
  TensorMap out;
  const auto& infos = params_->params();
  for (size_t u = 0; u < params_->num_units(); ++u) {
    params_->gather_unit(u);
    if (keep)
      for (size_t i = 0; i < infos.size(); ++i)
        if (params_->flat_unit(infos[i].flat) == u) out[infos[i].name] = params_->module_param(i).detach().to(torch::kCPU).clone();
    params_->release_unit(u);
  }
  if (keep)
    for (const auto& b : policy.named_buffers(true)) out[b.key()] = b.value().detach().to(torch::kCPU).clone();
  return out;
}

TensorMap ShardedTraining::full_optimizer_state(const torch::optim::Optimizer& optimizer) {
  const TensorMap sharded = optimizer_state_tensors(optimizer);
  const auto& infos = params_->params();
  TensorMap out;
  for (size_t k = 0; k < shard_flats_.size(); ++k) {
    const std::string prefix = "state/" + std::to_string(k) + "/";
    const size_t f = shard_flats_[k];
    for (auto it = sharded.lower_bound(prefix); it != sharded.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const std::string key = it->first.substr(prefix.size());
      const torch::Tensor full = key == "step" ? it->second : params_->gather_flat(f, it->second).cpu();
      for (size_t i = 0; i < infos.size(); ++i) {
        if (infos[i].flat != f || nonsharded_of_[i] == SIZE_MAX) continue;
        int64_t numel = 1;
        for (int64_t d : infos[i].shape) numel *= d;
        out["state/" + std::to_string(nonsharded_of_[i]) + "/" + key] =
            key == "step" ? full.clone() : full.narrow(0, infos[i].offset, numel).reshape(infos[i].shape).clone();
      }
    }
  }
  return out;
}

void ShardedTraining::save_optimizer_state(const torch::optim::Optimizer& optimizer, const TensorMap& full_state,
                                           const fs::path& dir, const std::optional<std::vector<double>>& initial_lrs) const {
  Json groups = optimizer_param_groups_json(optimizer, initial_lrs);
  size_t next = 0;
  for (size_t g = 0; g < groups.size() && g < group_sizes_.size(); ++g) {
    Json ids = Json::array();
    for (size_t j = 0; j < group_sizes_[g]; ++j) ids.push_back(next++);
    groups[g]["params"] = ids;
  }
  fs::create_directories(dir);
  save_safetensors(dir / kOptimizerStateFile, full_state, {});
  write_file_atomic(dir / kOptimizerParamGroupsFile, dump_pretty(groups, 4));
}

void ShardedTraining::load_optimizer_state(torch::optim::Optimizer& optimizer, const fs::path& dir) const {
  const TensorMap full = load_safetensors(dir / kOptimizerStateFile);
  Json groups;
  try {
    groups = Json::parse(read_file(dir / kOptimizerParamGroupsFile));
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("invalid JSON: ") + e.what(), (dir / kOptimizerParamGroupsFile).string());
  }
  const auto& infos = params_->params();
  TensorMap sharded;
  for (size_t k = 0; k < shard_flats_.size(); ++k) {
    const size_t f = shard_flats_[k];
    std::vector<size_t> members;  // non-sharded indices of the flat's parameters, in flat order
    for (size_t i = 0; i < infos.size(); ++i)
      if (infos[i].flat == f && nonsharded_of_[i] != SIZE_MAX) members.push_back(nonsharded_of_[i]);
    if (members.empty()) continue;
    for (const char* key : {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer"}) {
      std::vector<torch::Tensor> parts;
      for (size_t ns : members) {
        const auto it = full.find("state/" + std::to_string(ns) + "/" + key);
        if (it == full.end()) break;
        parts.push_back(it->second);
      }
      if (parts.size() != members.size()) continue;  // a key this optimizer or this flat does not have
      const std::string out_key = "state/" + std::to_string(k) + "/" + key;
      if (std::string(key) == "step") {
        sharded[out_key] = parts.front();
        continue;
      }
      std::vector<torch::Tensor> flat_parts;
      for (auto& t : parts) flat_parts.push_back(t.reshape({-1}));
      sharded[out_key] = params_->shard_of_flat(f, torch::cat(flat_parts));
    }
  }
  // The param groups' indices in the sharded layout.
  size_t next = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const size_t count = params_->shards_of_group(static_cast<int>(g)).size();
    Json ids = Json::array();
    for (size_t j = 0; j < count; ++j) ids.push_back(next++);
    groups[g]["params"] = ids;
  }
  lerobot::load_optimizer_state(optimizer, sharded, groups, dir.string());
}

FullParametersScope::FullParametersScope(ShardedTraining* sharded) : sharded_(sharded) {
  if (sharded_) sharded_->params().gather_all();
}
FullParametersScope::~FullParametersScope() {
  if (sharded_) sharded_->params().release_all();
}

UnitByUnitScope::UnitByUnitScope(ShardedTraining* sharded) : sharded_(sharded) {
  if (!sharded_) return;
  ShardedParameters& p = sharded_->params();
  p.release_all();
  p.reset_peak_gathered();
  p.gather_unit(p.num_units() - 1);  // the root (collective)
  units_.emplace(sharded_->runner());
}
UnitByUnitScope::~UnitByUnitScope() {
  units_.reset();
  if (sharded_) sharded_->params().release_all();
}
int64_t UnitByUnitScope::peak_gathered_bytes() const {
  return sharded_ ? sharded_->params().peak_gathered_bytes() : 0;
}

}  // namespace lerobot
