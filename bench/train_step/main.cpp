// Times the trainer's real training step (UpdateStep: forward, backward, clip, optimizer, scheduler)
// on one batch kept on the device, so the figure is the step alone (no data loading), and counts
// its operators and host synchronisations. bench/train_step/peer.py (ACT) and peer_diffusion.py
// (Diffusion) run the same step in PyTorch with LeRobot's structure; compare the printed ms/step
// from runs on the same machine.
//
//   bench_train_step [--steps=20] [--warmup=3] [--image_size=96] [--infer_iters=0]
//                    [--attention=fused|composite (ACT; fused is the default on LibTorch 2.x)] [any train flag:
//                    --policy.type=act|diffusion --batch_size=8 --policy.device=cuda
//                    --accelerator.mixed_precision=bf16 --optimizer_impl=foreach --cuda.graphs=false
//                    --policy.dim_model=256 --policy.noise_scheduler_type=DDIM ...]
//
// The dataset is recorded with the built-in simulator at min(image_size, 96) pixels (encoding
// large frames would dominate the run); a larger --image_size replaces the cameras of the batch
// with random frames of that size (a synthetic batch: the step's work depends on the shape only).
// --infer_iters=N also times predict_action_chunk on one sample (batch 1, eval mode, no grad).
// --shard_one_process runs the step sharded over a one-process group (each unit gathered and
// freed around its forward and backward; NCCL on CUDA): against the plain step, the gather/free
// cost; its start-up and traffic lines are printed.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/device.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/host_allocator.h"
#include "lerobot/common/op_counter.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/policies/act/attention.h"
#include "lerobot/policies/graphed_inference.h"
#include "lerobot/eval/record.h"
#include "lerobot/distributed/process_group.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/scheduler.h"
#include "lerobot/train/batch_prep.h"
#include "lerobot/train/sharded_training.h"
#include "lerobot/train/step_capture.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/train_setup.h"
#include "lerobot/train/update_step.h"

using namespace lerobot;

namespace {

void wait_for(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double max_rss_gb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

}  // namespace

int run_bench(int argc, char** argv);

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("usage: bench_train_step [--steps=20] [--warmup=3] [--image_size=96] [--batch_size=8] [--shard_one_process] "
                  "[--infer_iters=0] [--attention=fused|composite] [--policy.type=act|diffusion] [any lerobot-cpp train flag]\n");
      return 0;
    }
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

int run_bench(int argc, char** argv) {
  // As lerobot-cpp does at start (LEROBOT_CPP_HOST_ALLOCATOR=default measures glibc's defaults).
  const HostAllocatorTuning alloc = tune_host_allocator();
  int steps = 20, warmup = 3;
  int64_t image_size = 96, batch_size = 8, infer_iters = 0;
  std::string policy_type = "act";
  bool shard_one_process = false;
  std::vector<std::string> extra;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--steps=", 0) == 0) steps = std::stoi(a.substr(8));
    else if (a.rfind("--warmup=", 0) == 0) warmup = std::stoi(a.substr(9));
    else if (a.rfind("--image_size=", 0) == 0) image_size = std::stoll(a.substr(13));
    else if (a.rfind("--batch_size=", 0) == 0) batch_size = std::stoll(a.substr(13));
    else if (a.rfind("--infer_iters=", 0) == 0) infer_iters = std::stoll(a.substr(14));
    else if (a.rfind("--policy.type=", 0) == 0) policy_type = a.substr(14);
    else if (a == "--shard_one_process") shard_one_process = true;
    else if (a == "--attention=composite") set_attention_kernel(AttentionKernel::kComposite);
    else if (a == "--attention=fused") set_attention_kernel(AttentionKernel::kFused);
    else extra.push_back(a);
  }
  const fs::path dir = fs::temp_directory_path() / ("lerobot_train_step_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Reach2dEnvConfig env;
  env.image_size = std::min<int64_t>(image_size, 96);
  // Enough frames that the batch is not capped to the dataset.
  const int64_t episodes = std::max<int64_t>(4, batch_size / 8 + 2);
  const fs::path data = record_expert_dataset(env, episodes, dir / "data", RecordOptions{}).root;
  std::vector<std::string> args = {"--policy.type=" + policy_type, "--dataset.root=" + data.string(),
                                   "--batch_size=" + std::to_string(batch_size), "--num_workers=0",
                                   "--steps=100000", "--output_dir=" + (dir / "out").string()};
  // The ResNet-backbone policies: no pretrained torchvision weights (the others have no such field).
  if (policy_type == "act" || policy_type == "diffusion" || policy_type == "vqbet")
    args.push_back("--policy.pretrained_backbone_weights=null");
  args.insert(args.end(), extra.begin(), extra.end());
  auto setup = make_train_setup(parse_train_config(args), LaunchEnv{}, std::nullopt);
  UpdateStepParts parts = update_step_parts(*setup);
  // --shard_one_process: the same step sharded over a one-process group (NCCL by name on CUDA, as
  // on eight GPUs; the no-op group on the CPU): every unit is gathered and freed around its forward
  // and backward and its gradients reduce-scattered, so the difference to the plain step is what
  // gather/free costs per step (#40's one-GPU figure).
  std::shared_ptr<ProcessGroup> shard_group;
  std::unique_ptr<ShardedTraining> sharded;
  std::unique_ptr<torch::optim::Optimizer> sharded_optimizer;
  std::unique_ptr<Scheduler> sharded_scheduler;
  if (shard_one_process) {
    shard_group = make_process_group(LaunchEnv{}, process_group_options(setup->device.is_cuda() ? "nccl" : "gloo", 600));
    sharded = std::make_unique<ShardedTraining>(*setup->policy, training_param_groups(setup->cfg, *setup->policy),
                                                setup->cfg.accelerator.fsdp, shard_group, 1,
                                                setup->checkpoint_runner.get());
    sharded_optimizer = make_optimizer(*setup->cfg.optimizer, sharded->optimizer_groups(),
                                       parse_optimizer_impl(setup->cfg.optimizer_impl));
    sharded_scheduler = make_scheduler(setup->cfg.scheduler.ptr(), *sharded_optimizer, setup->cfg.steps);
    parts.optimizer = sharded_optimizer.get();
    parts.scheduler = sharded_scheduler.get();
    parts.sharded = &sharded->params();
    parts.unit_runner = sharded->runner();
    std::printf("%s\n", sharded->report().c_str());
  }
  UpdateStep plain(parts);
  // --cuda.graphs (default true): the trainer's whole-step capture where it is safe.
  CapturedUpdateStep update(
      plain, parts, plan_step_capture(step_capture_facts(parts, plain, setup->cfg.cuda.graphs, setup->world_size())));
  if (update.plan().capture) warmup = std::max(warmup, 5);  // 3 eager warm-up steps, then the capture
  setup->policy->train();
  int64_t n_params = 0, n_tensors = 0;
  for (const auto& p : setup->policy->parameters())
    if (p.requires_grad()) n_params += p.numel(), ++n_tensors;
  auto sample = setup->loader->next();
  std::map<std::string, torch::Tensor> raw = sample.tensors;
  if (image_size != env.image_size)
    for (auto& [key, t] : raw)
      if (key.rfind("observation.image", 0) == 0) {  // (..., C, H, W) uint8 frames
        std::vector<int64_t> shape = t.sizes().vec();
        shape[shape.size() - 2] = shape[shape.size() - 1] = image_size;
        t = torch::randint(0, 256, shape, torch::TensorOptions().dtype(t.scalar_type()));
      }
  // The task strings go to the processors as the trainer passes them (π, SmolVLA tokenize them).
  const Batch batch = prepare_batch(raw, setup->processors, setup->device, sample.tasks);

  int64_t step = 0;
  for (int i = 0; i < warmup; ++i) update.run(batch, step++);
  wait_for(setup->device);
  double ops = 0, syncs = 0;
  std::string sync_sites;
  {
    OpCounter counter;
    update.run(batch, step++);
    ops = static_cast<double>(counter.ops());
    syncs = static_cast<double>(counter.syncs());
    sync_sites = counter.sync_sites_text();
  }
  wait_for(setup->device);
  std::vector<double> ms;
  std::vector<torch::Tensor> losses;  // read after the timed loop, as the trainer's logger does
  const auto start = std::chrono::steady_clock::now();
  const auto window_start = std::chrono::system_clock::now();
  for (int i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const torch::Tensor loss = update.run(batch, step++).loss;
    // A captured step refills the same result tensor every replay: keep copies of the two read.
    if (i == 0 || i == steps - 1) losses.push_back(loss.detach().clone());
    wait_for(setup->device);  // per-step figure on a GPU includes the device's work
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto window_end = std::chrono::system_clock::now();
  auto unix_ms = [](std::chrono::system_clock::time_point t) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
  };
  std::sort(ms.begin(), ms.end());
  const auto peak = device_memory_peak(setup->device);

  // Inference: one action chunk for the first sample of the batch, as the policy runs it and as a
  // CUDA-graph replay (policies/graphed_inference.h) where the device has graphs.
  std::vector<double> infer_ms, graphed_ms;
  std::string graphed_why_not;
  if (infer_iters > 0) {
    Batch one;
    for (const auto& [k, v] : batch) one[k] = v.narrow(0, 0, 1);
    setup->policy->eval();
    torch::NoGradGuard no_grad;
    GraphedChunkPredictor graphed(*setup->policy);
    auto time_calls = [&](const std::function<void()>& call, std::vector<double>& out) {
      for (int64_t i = 0; i < infer_iters + 3; ++i) {  // 3 untimed: warm-up (and the capture)
        const auto t0 = std::chrono::steady_clock::now();
        call();
        wait_for(setup->device);
        if (i >= 3) out.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(out.begin(), out.end());
    };
    time_calls([&] { setup->policy->predict_action_chunk(one); }, infer_ms);
    if (graphed.why_not().empty()) time_calls([&] { graphed.predict(one); }, graphed_ms);
    graphed_why_not = graphed.replaying() ? "" : graphed.why_not();
  }

  const std::string policy_name = policy_type == "act"         ? "ACT"
                                  : policy_type == "diffusion" ? "Diffusion"
                                  : policy_type == "pi05"      ? "PI05"
                                  : policy_type == "pi0"       ? "PI0"
                                                               : policy_type;
  std::printf("lerobot.cpp %s step: %lld parameters in %lld tensors, batch %lld, %lldx%lld image, device %s, "
              "mixed_precision %s\n",
              policy_name.c_str(), static_cast<long long>(n_params), static_cast<long long>(n_tensors), static_cast<long long>(batch_size),
              static_cast<long long>(image_size), static_cast<long long>(image_size), setup->device.str().c_str(),
              setup->cfg.accelerator.mixed_precision.c_str());
  std::printf("cuda graphs: %s\n", update.plan().capture ? "on (captured)" : ("off: " + update.plan().why_not).c_str());
  std::printf("host allocator: %s%s\n", alloc.applied ? "" : "glibc defaults: ", alloc.reason.c_str());
  std::printf("ms/step: median %.2f  mean %.2f  min %.2f  (%d steps after %d warm-up)\n", ms[ms.size() / 2],
              total_ms / steps, ms.front(), steps, warmup);
  // For GPU-busy sampling from outside (nvidia-smi --query-gpu=timestamp,utilization.gpu).
  std::printf("timed window (unix ms): %lld %lld\n", unix_ms(window_start), unix_ms(window_end));
  std::printf("samples/s: %.1f\n", 1000.0 * static_cast<double>(batch_size) / ms[ms.size() / 2]);
  std::printf("operators/step: %.0f  host syncs/step: %.0f%s\n", ops, syncs,
              sync_sites.empty() ? "" : (" (in " + sync_sites + ")").c_str());
  std::printf("loss: first timed step %.6f  last %.6f\n", losses.front().item<double>(), losses.back().item<double>());
  auto print_chunks = [](const char* label, const std::vector<double>& v) {
    std::printf("%s: median %.2f  mean %.2f  min %.2f  (%lld chunks, batch 1)\n", label, v[v.size() / 2],
                std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()), v.front(),
                static_cast<long long>(v.size()));
  };
  if (!infer_ms.empty()) print_chunks("ms/chunk", infer_ms);
  if (!graphed_ms.empty()) print_chunks("ms/chunk graphed", graphed_ms);
  else if (infer_iters > 0) std::printf("inference graphs: off: %s\n", graphed_why_not.c_str());
  if (sharded) std::printf("%s\n", sharded->traffic_report().c_str());
  if (peak) std::printf("peak device memory: %.2f GiB allocated, %.2f GiB reserved\n", peak->allocated_gb, peak->reserved_gb);
  else std::printf("peak host memory (max RSS): %.2f GiB\n", max_rss_gb());
  std::fflush(stdout);
  fs::remove_all(dir);  // after the figures are out
  return 0;
}
