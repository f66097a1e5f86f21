// dist_test_helper's "sharded" mode: one rank of a ShardedParameters run. A small network of three
// units (Linear + tanh, one with a frozen bias) between a root input and output layer trains for a
// few AdamW steps with gradient clipping on this rank's half of each global batch; every rank also
// trains an unsharded copy on the whole global batch in-process (the one-process reference) and on
// its own half only (a run that must differ: the negative control). Results go to
// <out>/sharded_rank<R>.txt: the relative parameter-update differences and the bytes per rank.
// Variant "offload" (cpu_offload): also whether the host masters the optimizer steps and the
// device copies the gathers read are distinct storages, and whether they agree after the run.
#include <fstream>
#include <iomanip>
#include <set>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/distributed/process_group.h"
#include "lerobot/distributed/sharded_params.h"
#include "sharded_helper.h"

namespace lerobot_test {
namespace {

using namespace lerobot;

struct Net : torch::nn::Module {
  torch::nn::Linear in{nullptr}, out{nullptr};
  std::vector<torch::nn::Linear> layers;
  Net() {
    torch::manual_seed(3);
    in = register_module("in", torch::nn::Linear(4, 16));
    for (int i = 0; i < 3; ++i) layers.push_back(register_module("layer" + std::to_string(i), torch::nn::Linear(16, 16)));
    out = register_module("out", torch::nn::Linear(16, 2));
    layers[1]->bias.requires_grad_(false);  // a frozen parameter inside a unit
  }
  // `sharded` wraps each unit (the sharded run's before/after hooks); plain when null.
  torch::Tensor forward(torch::Tensor x, ShardedParameters* sharded) {
    x = torch::tanh(in->forward(x));
    for (size_t i = 0; i < layers.size(); ++i) {
      std::vector<torch::Tensor> io{x};
      if (sharded) io = sharded->before_unit(i, io);
      io = {torch::tanh(layers[i]->forward(io[0]))};
      if (sharded) io = sharded->after_unit(i, io);
      x = io[0];
    }
    return out->forward(x);
  }
};

std::pair<torch::Tensor, torch::Tensor> batch(int step, int micro, int rows) {
  torch::manual_seed(1000 + step * 10 + micro);
  auto x = torch::randn({rows, 4});
  auto y = torch::randn({rows, 2});
  return {x, y};
}

std::map<std::string, torch::Tensor> snapshot(Net& net) {
  std::map<std::string, torch::Tensor> m;
  for (const auto& p : net.named_parameters()) m[p.key()] = p.value().detach().clone();
  return m;
}

double relative_update_diff(const std::map<std::string, torch::Tensor>& init, const std::map<std::string, torch::Tensor>& a,
                            const std::map<std::string, torch::Tensor>& b) {
  double num = 0, den = 0;
  for (const auto& [k, t0] : init) {
    auto da = (a.at(k) - t0).to(torch::kDouble), db = (b.at(k) - t0).to(torch::kDouble);
    num += (da - db).pow(2).sum().item<double>();
    den += da.pow(2).sum().item<double>();
  }
  return std::sqrt(num / den);
}

// AdamW with clipping (both blind to a gradient's scale), or, for "sgd", plain SGD without
// clipping, whose update is the gradient itself (a wrong average shows).
std::unique_ptr<torch::optim::Optimizer> make_opt(std::vector<torch::Tensor> params, const std::string& variant) {
  if (variant == "sgd") return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.1));
  return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-2).weight_decay(0.01));
}
double clip_norm(const std::string& variant) { return variant == "sgd" ? 0.0 : 0.05; }

// Trains `net` unsharded on rows [first, first + rows) of each global micro-batch.
void train_plain(Net& net, int steps, int micro_steps, int global_rows, int first, int rows, const std::string& variant) {
  auto opt_ptr = make_opt(net.parameters(), variant);
  torch::optim::Optimizer& opt = *opt_ptr;
  for (int s = 0; s < steps; ++s) {
    for (int m = 0; m < micro_steps; ++m) {
      auto [x, y] = batch(s, m, global_rows);
      auto loss = torch::mse_loss(net.forward(x.narrow(0, first, rows), nullptr), y.narrow(0, first, rows)) / micro_steps;
      loss.backward();
    }
    if (clip_norm(variant) > 0) torch::nn::utils::clip_grad_norm_(net.parameters(), clip_norm(variant));
    opt.step();
    opt.zero_grad();
  }
}

}  // namespace

int sharded(std::shared_ptr<ProcessGroup> pg, const std::string& out_dir, const std::string& variant) {
  const int r = pg->rank(), w = pg->world_size();
  const int per_rank = 4, steps = 4;
  const int micro_steps = variant == "accum" ? 2 : 1;
  Net reference, own_half, net;
  const auto init = snapshot(net);
  train_plain(reference, steps, micro_steps, per_rank * w, 0, per_rank * w, variant);
  train_plain(own_half, steps, micro_steps, per_rank * w, r * per_rank, per_rank, variant);

  // Units: the three layers in forward order; the root holds `in` and `out`.
  std::vector<ShardedUnitSpec> units;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    ShardedUnitSpec u;
    u.name = "layer" + std::to_string(i);
    for (const auto& p : net.layers[i]->named_parameters()) {
      u.param_names.push_back(u.name + "." + p.key());
      u.params.push_back(p.value());
      u.groups.push_back(p.value().requires_grad() ? 0 : -1);
    }
    units.push_back(u);
  }
  ShardedUnitSpec root;
  for (auto* m : {&net.in, &net.out})
    for (const auto& p : (*m)->named_parameters()) {
      root.param_names.push_back(p.key());
      root.params.push_back(p.value());
      root.groups.push_back(0);
    }
  units.push_back(root);
  ShardedOptions options;
  options.reshard_after_forward = variant != "keep";
  // "offload_by_unit": the optimizer's host step through step_offloaded, unit by unit.
  options.cpu_offload = variant == "offload" || variant == "offload_by_unit";
  // HSDP ("hybrid", 4 ranks): shard groups {0,1} and {2,3}, replicas {0,2} and {1,3}. Without the
  // replicas ("hybrid_unreplicated", a planted defect) each shard group averages only its own half.
  std::shared_ptr<ProcessGroup> shard_group = pg, replicas;
  double bf16_replica_sum = 0;
  if (variant.rfind("hybrid", 0) == 0) {
    const HybridGroups groups = make_hybrid_groups(*pg, 2);
    shard_group = groups.shard;
    auto replica_group = groups.replicas;
    if (variant == "hybrid") replicas = replica_group;
    // A bfloat16 all-reduce over the replicas (Gloo widens it): the sum of their ranks + 1.
    auto t = torch::full({3}, r + 1, torch::kBFloat16);
    replica_group->all_reduce(t, ReduceOp::kSum);
    bf16_replica_sum = t[2].item<double>();
  }
  ShardedParameters sharded(units, shard_group, options, replicas);
  // The optimizer's tensors against the gathers' (with cpu_offload: other storages, none shared).
  int64_t shared_storages = 0;
  {
    std::set<const void*> stepped;
    for (const auto& t : sharded.trainable_shards()) stepped.insert(t.storage().data());
    for (const auto& t : sharded.trainable_device_shards()) shared_storages += stepped.count(t.storage().data());
  }
  auto opt_ptr = make_opt(sharded.shards_of_group(0), variant);
  torch::optim::Optimizer& opt = *opt_ptr;
  int64_t held_after_forward = 0, optimizer_calls = 0;
  for (int s = 0; s < steps; ++s) {
    for (int m = 0; m < micro_steps; ++m) {
      auto [x, y] = batch(s, m, per_rank * w);
      const bool sync = m == micro_steps - 1;
      sharded.set_sync(sync);
      sharded.begin_forward();
      auto loss = torch::mse_loss(net.forward(x.narrow(0, r * per_rank, per_rank), &sharded), y.narrow(0, r * per_rank, per_rank)) /
                  micro_steps;
      held_after_forward = sharded.gathered_bytes();
      loss.backward();
      sharded.end_backward(sync);
    }
    sharded.clip_grad_norm_(clip_norm(variant));
    if (variant == "offload_by_unit") {
      sharded.step_offloaded([&] {
        ++optimizer_calls;
        opt.step();
      });
    } else {
      ++optimizer_calls;
      opt.step();
    }
    opt.zero_grad();
  }
  const int64_t held_after_step = sharded.gathered_bytes();
  const ShardedTraffic traffic = sharded.traffic();
  sharded.gather_all();  // with cpu_offload: the host masters copied to the device copies first
  const auto trained = snapshot(net);
  lerobot::save_safetensors(out_dir + "/sharded_trained_rank" + std::to_string(r) + ".safetensors", trained);
  sharded.release_all();
  double device_vs_host = 0;
  {
    const auto host = sharded.trainable_shards(), device = sharded.trainable_device_shards();
    for (size_t i = 0; i < host.size(); ++i)
      device_vs_host = std::max(device_vs_host, (host[i].detach() - device[i].to(host[i].device())).abs().max().item<double>());
  }

  std::ofstream f(out_dir + "/sharded_rank" + std::to_string(r) + ".txt");
  f << std::setprecision(10);
  f << "vs_reference " << relative_update_diff(init, snapshot(reference), trained) << "\n";
  f << "own_half_vs_reference " << relative_update_diff(init, snapshot(reference), snapshot(own_half)) << "\n";
  const ShardedMemory mem = sharded.memory();
  f << "shard_bytes " << mem.shard_bytes << "\n";
  f << "total_bytes " << mem.total_bytes << "\n";
  f << "largest_unit_bytes " << mem.largest_unit_bytes << "\n";
  f << "held_after_forward " << held_after_forward << "\n";
  f << "held_after_step " << held_after_step << "\n";
  f << "gathers_per_step " << static_cast<double>(traffic.gathers) / traffic.steps << "\n";
  f << "reductions_per_step " << static_cast<double>(traffic.reductions) / traffic.steps << "\n";
  f << "trainable_shard_bytes " << mem.trainable_shard_bytes << "\n";
  f << "host_bytes " << mem.host_bytes << "\n";
  f << "shared_storages " << shared_storages << "\n";
  f << "num_trainable_shards " << sharded.trainable_shards().size() << "\n";
  f << "device_vs_host " << device_vs_host << "\n";
  f << "shard_world " << sharded.world_size() << "\n";
  f << "optimizer_calls_per_step " << static_cast<double>(optimizer_calls) / steps << "\n";
  f << "replicas " << sharded.replicas() << "\n";
  f << "bf16_replica_sum " << bf16_replica_sum << "\n";
  f << "replica_reduced_bytes_per_step " << static_cast<double>(traffic.replica_reduced_bytes) / traffic.steps << "\n";
  return 0;
}

}  // namespace lerobot_test
