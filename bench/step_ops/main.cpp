// Counts the ATen operators and host synchronisations of one training step of ACT (or the policy
// --policy.type names: forward, backward, clip, optimizer, scheduler, the trainer's own
// UpdateStep) with the optimizer stepping per tensor
// (torch::optim's loop, what the trainer did before) and multi-tensor (foreach). On a GPU each
// operator is one or more kernel launches and each sync a stall of the host, so these counts say
// what a step costs in launches on any machine; the ratio is measured in one run.
//
//   bench_step_ops [--steps=3] [--image_size=96] [--top=0] [--attention=fused|composite]
//                  [--foreach_only] [any train flag, e.g. --policy.dim_model=256]
//
// --foreach_only measures the multi-tensor step alone (big policies such as π0/π0.5 on a CPU).
//
// --top=N also lists the N operators the multi-tensor step dispatches most often (where to cut).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/common/op_counter.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/record.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/policies/act/attention.h"
#include "lerobot/train/batch_prep.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/train_setup.h"
#include "lerobot/train/update_step.h"

using namespace lerobot;

namespace {

struct StepCounts {
  double ops = 0, syncs = 0;
  std::string sync_sites;  // of the last counted step
  std::map<std::string, int64_t> by_name;  // top-level operators of the last counted step
  double clip_and_step_ops = 0;  // gradient clipping + optimizer step + zero_grad alone
  int64_t tensors = 0;
};

StepCounts measure(const fs::path& data, const fs::path& out, const std::string& impl, int steps,
                   const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--policy.type=act", "--dataset.root=" + data.string(), "--batch_size=8",
                                   "--num_workers=0", "--steps=1000", "--policy.device=cpu",
                                   "--optimizer_impl=" + impl, "--output_dir=" + out.string()};
  bool resnet = true;  // the ResNet policies start from random weights here (no download)
  for (const auto& a : extra)
    resnet = resnet && a != "--policy.type=smolvla" && a != "--policy.type=pi0" && a != "--policy.type=pi05";
  if (resnet) args.push_back("--policy.pretrained_backbone_weights=null");
  args.insert(args.end(), extra.begin(), extra.end());
  auto setup = make_train_setup(parse_train_config(args), LaunchEnv{}, std::nullopt);
  UpdateStep update(update_step_parts(*setup));
  setup->policy->train();
  StepCounts c;
  for (const auto& p : setup->policy->parameters())
    if (p.requires_grad()) ++c.tensors;
  for (int s = 0; s < steps + 1; ++s) {
    const DataBatch raw = setup->loader->next();
    const Batch batch = prepare_batch(raw.tensors, setup->processors, setup->device, raw.tasks);
    if (s == 0) {  // the first step initialises the optimizer state: not counted
      update.run(batch, s);
      continue;
    }
    OpCounter counter;
    update.run(batch, s);
    c.ops += static_cast<double>(counter.ops()) / steps;
    c.syncs += static_cast<double>(counter.syncs()) / steps;
    c.sync_sites = counter.sync_sites_text();
    c.by_name = counter.by_name();
    // The optimizer-plus-clip part of one more step on its own.
    UpdateResult r;
    const DataBatch raw2 = setup->loader->next();
    update.forward_backward(prepare_batch(raw2.tensors, setup->processors, setup->device, raw2.tasks), r);
    counter.reset();
    update.clip_and_step(s, r);
    c.clip_and_step_ops += static_cast<double>(counter.ops()) / steps;
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 3, top = 0;
  bool foreach_only = false;
  int64_t image_size = 96;
  std::vector<std::string> extra;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--steps=", 0) == 0) steps = std::stoi(a.substr(8));
    else if (a.rfind("--image_size=", 0) == 0) image_size = std::stoll(a.substr(13));
    else if (a.rfind("--top=", 0) == 0) top = std::stoi(a.substr(6));
    else if (a == "--foreach_only") foreach_only = true;
    else if (a == "--attention=composite") set_attention_kernel(AttentionKernel::kComposite);
    else if (a == "--attention=fused") set_attention_kernel(AttentionKernel::kFused);
    else if (a == "--help" || a == "-h") {
      std::printf("usage: bench_step_ops [--steps=3] [--image_size=96] [--top=0] [--attention=fused|composite] "
                  "[--foreach_only] [any lerobot-cpp train flag]\n");
      return 0;
    } else extra.push_back(a);
  }
  const fs::path dir = fs::temp_directory_path() / ("lerobot_step_ops_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Reach2dEnvConfig env;
  env.image_size = image_size;
  const fs::path data = record_expert_dataset(env, 4, dir / "data").root;
  const StepCounts foreach = measure(data, dir / "foreach", "foreach", steps, extra);
  const StepCounts per = foreach_only ? StepCounts{} : measure(data, dir / "per_tensor", "per_tensor", steps, extra);
  // Fused kernels decide a non-finite step's skip on the device: the step reads nothing back.
  // CPU has them from LibTorch 2.4 on (CUDA from 2.1).
  std::optional<StepCounts> fused;
  if (!foreach_only && fused_adam_available(c10::Device(c10::kCPU))) fused = measure(data, dir / "fused", "fused", steps, extra);
  fs::remove_all(dir);
  std::string policy = "act", batch = "8";
  for (const auto& a : extra) {
    if (a.rfind("--policy.type=", 0) == 0) policy = a.substr(14);
    if (a.rfind("--batch_size=", 0) == 0) batch = a.substr(13);
  }
  std::printf("%s (default sizes unless flags say otherwise), %lld parameter tensors, batch %s, %lldx%lld image, "
              "%d counted steps each, %s attention, LibTorch %s\n",
              policy.c_str(), static_cast<long long>(foreach.tensors), batch.c_str(), static_cast<long long>(image_size),
              static_cast<long long>(image_size), steps,
              attention_kernel() == AttentionKernel::kFused ? "fused" : "composite", TORCH_VERSION);
  std::printf("%-28s %12s %12s %16s\n", "optimizer step", "ops/step", "syncs/step", "clip+optim ops");
  if (!foreach_only)
    std::printf("%-28s %12.0f %12.1f %16.0f\n", "per-tensor (torch::optim)", per.ops, per.syncs, per.clip_and_step_ops);
  std::printf("%-28s %12.0f %12.1f %16.0f\n", "multi-tensor (foreach)", foreach.ops, foreach.syncs,
              foreach.clip_and_step_ops);
  if (fused)
    std::printf("%-28s %12.0f %12.1f %16.0f\n", "fused (device-side skip)", fused->ops, fused->syncs,
                fused->clip_and_step_ops);
  else if (!foreach_only) std::printf("fused: not measured (this LibTorch has no fused Adam kernels for the CPU; CUDA has them from 2.1)\n");
  const auto sites = [](const StepCounts& c) { return c.sync_sites.empty() ? "none" : c.sync_sites.c_str(); };
  if (foreach_only) std::printf("host syncs, by the operator they happened in: foreach: %s", sites(foreach));
  else std::printf("host syncs, by the operator they happened in: per-tensor: %s; foreach: %s", sites(per), sites(foreach));
  if (fused) std::printf("; fused: %s", sites(*fused));
  std::printf("\n");
  if (top > 0) {
    std::vector<std::pair<int64_t, std::string>> ranked;
    for (const auto& [name, n] : foreach.by_name) ranked.emplace_back(n, name);
    std::sort(ranked.rbegin(), ranked.rend());
    std::printf("most dispatched operators of one multi-tensor step:\n");
    for (int i = 0; i < top && i < static_cast<int>(ranked.size()); ++i)
      std::printf("  %6lld  %s\n", static_cast<long long>(ranked[i].first), ranked[i].second.c_str());
  }
  if (!foreach_only)
    std::printf("ratio per-tensor / foreach: %.2fx fewer operators per step (%.0f fewer)\n", per.ops / foreach.ops,
                per.ops - foreach.ops);
  return 0;
}
