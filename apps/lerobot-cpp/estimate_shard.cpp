// `lerobot-cpp estimate` for a sharded run: the per-GPU peak of --parallelism.dp_shard=N with
// --accelerator.fsdp.*, term by term, and whether it fits --gpu_memory_gb, with the changes that
// would make it fit. The memory model itself is lerobot/train/shard_memory.h.
#include "estimate_shard.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "lerobot/common/error.h"

namespace lerobot::app {
namespace {

double gb(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

bool parse_bool(const std::string& value, const std::string& key) {
  std::string v = value;
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw_usage("bad value '" + value + "' for " + key, key, "give " + key + "=true or " + key + "=false");
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

ShardFlags take_shard_flags(Args& args) {
  ShardFlags f;
  const auto taken = take_named_flags(args, {"parallelism.dp_shard", "accelerator.fsdp.reshard_after_forward",
                                             "accelerator.fsdp.cpu_offload", "gpu_memory_gb"});
  for (const auto& [name, value] : taken) {
    const std::string key = "--" + name;
    f.given = true;
    if (name == "parallelism.dp_shard") {
      size_t pos = 0;
      int64_t n = 0;
      try {
        n = std::stoll(value, &pos);
      } catch (const std::exception&) {
        pos = std::string::npos;
      }
      if (pos != value.size() || n == 0 || n < -1)
        throw_usage("bad value '" + value + "' for " + key + " (the number of GPUs each parameter is sharded over)",
                    key, "give a shard count >= 1, or -1 for all --num_gpus (1: no sharding)");
      f.dp_shard = n;
    } else if (name == "gpu_memory_gb") {
      size_t pos = 0;
      double g = 0;
      try {
        g = std::stod(value, &pos);
      } catch (const std::exception&) {
        pos = std::string::npos;
      }
      if (pos != value.size() || !(g > 0))
        throw_usage("bad value '" + value + "' for " + key + " (one GPU's memory)", key,
                    "give one GPU's memory in GB, a number > 0, e.g. --gpu_memory_gb=24");
      f.gpu_memory_gb = g;
    } else if (name == "accelerator.fsdp.reshard_after_forward") {
      f.reshard_after_forward = parse_bool(value, key);
    } else {
      f.cpu_offload = parse_bool(value, key);
    }
  }
  return f;
}

std::pair<int64_t, int64_t> estimate_dp_shard(const ShardFlags& flags, int64_t num_gpus) {
  const int64_t asked = flags.dp_shard.value_or(1);
  if (asked == -1) return {std::max<int64_t>(num_gpus, 1), std::max<int64_t>(num_gpus, 1)};
  if (num_gpus == 0) return {asked, asked};
  if (num_gpus % asked != 0)
    throw_usage("--parallelism.dp_shard=" + std::to_string(asked) + " does not divide --num_gpus=" +
                    std::to_string(num_gpus) + " (processes = dp_shard x replicas)",
                "--parallelism.dp_shard", "give a dp_shard that divides --num_gpus, or -1 for all of them");
  return {asked, num_gpus};
}

void print_shard_estimate(const ShardFlags& flags, int64_t dp_shard, int64_t batch,
                          std::optional<bool> checkpointing, const std::string& dtype, const ModelAt& model) {
  ShardPlan plan{dp_shard, flags.reshard_after_forward, flags.cpu_offload};
  const bool ckpt = checkpointing.value_or(false);
  const ModelBytes m = model(batch, ckpt);
  const ShardMemory s = shard_memory(m, plan);
  std::printf("per GPU at --parallelism.dp_shard=%lld, reshard_after_forward=%s, cpu_offload=%s, %s%s, batch %lld "
              "per process (an estimate from sizes, not a measurement), in GB:\n",
              static_cast<long long>(dp_shard), plan.reshard_after_forward ? "true" : "false",
              plan.cpu_offload ? "true" : "false", dtype.c_str(),
              checkpointing ? (ckpt ? ", gradient_checkpointing=true" : ", gradient_checkpointing=false") : "",
              static_cast<long long>(batch));
  const std::string part = dp_shard > 1 ? " (1/" + std::to_string(dp_shard) + ")" : " (whole)";
  auto row = [](const std::string& what, double v) { std::printf("  %-58s %8.2f\n", what.c_str(), v); };
  row("parameters" + part, gb(s.parameters));
  row("gradients" + part, gb(s.gradients));
  row(plan.cpu_offload ? "AdamW state (on the host: cpu_offload)" : "AdamW state" + part, gb(s.optimizer));
  row("parameters outside units, gathered whole", gb(s.outside_units));
  row(plan.reshard_after_forward
          ? "largest unit x2 (" + m.largest_unit_name + ", gathered; prefetch)"
          : "every unit, gathered from forward to backward",
      gb(s.gathered_units));
  row("largest unit's gradient before its reduce-scatter", gb(s.unit_gradient));
  if (s.activations)
    row("activations", gb(*s.activations));
  else
    std::printf("  %-58s %8s\n", "activations", "?");
  row(s.activations ? "total on the GPU" : "total on the GPU, activations not counted", gb(s.device()));
  if (plan.cpu_offload) row("on the host: AdamW state and float32 master shard", gb(s.host));
  if (!flags.gpu_memory_gb) {
    std::printf("(pass --gpu_memory_gb=G to check that it fits a G GB GPU)\n");
    return;
  }
  const double limit = *flags.gpu_memory_gb;
  auto fits = [&](const ModelBytes& mm, const ShardPlan& p) { return gb(shard_memory(mm, p).device()) <= limit; };
  if (gb(s.device()) <= limit) {
    std::printf("fits in %s GB per GPU: needs %.1f GB%s\n", number(limit).c_str(), gb(s.device()),
                s.activations ? "" : " without the activations, which only a step on a GPU measures");
    return;
  }
  // What alone would make it fit, keeping the rest as asked.
  std::vector<std::string> fixes, all;
  all.push_back("--parallelism.dp_shard=N");
  for (int64_t n = dp_shard + 1; n <= 1024; ++n) {
    ShardPlan p = plan;
    p.dp_shard = n;
    if (fits(m, p)) {
      fixes.push_back("--parallelism.dp_shard=" + std::to_string(n));
      break;
    }
  }
  if (checkpointing && !ckpt) {
    all.push_back("--policy.gradient_checkpointing=true");
    if (fits(model(batch, true), plan)) fixes.push_back(all.back());
  }
  if (!plan.cpu_offload) {
    all.push_back("--accelerator.fsdp.cpu_offload=true");
    ShardPlan p = plan;
    p.cpu_offload = true;
    if (fits(m, p)) fixes.push_back(all.back());
  }
  if (s.activations && batch > 1) {
    all.push_back("smaller --batch_size");
    for (int64_t b = batch - 1; b >= 1; --b)
      if (fits(model(b, ckpt), plan)) {
        fixes.push_back("--batch_size=" + std::to_string(b));
        break;
      }
  }
  std::string tries;
  for (const auto& f : fixes.empty() ? all : fixes) tries += (tries.empty() ? "" : " / ") + f;
  std::printf("does not fit: needs %.1f GB%s; try %s%s\n", gb(s.device()),
              s.activations ? "" : " without the activations", tries.c_str(),
              fixes.empty() ? " (none of them alone is enough: combine them)" : "");
}

}  // namespace lerobot::app
