// `lerobot-cpp estimate`: how many steps and how long a training run would take, from a short
// measured run of the real trainer on this machine (same flags as `train`).
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <torch/cuda.h>

#include "commands.h"
#include "estimate_pi.h"
#include "estimate_shard.h"
#include "lerobot/common/device.h"
#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/pi_config_base.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/train_logging.h"
#include "lerobot/train/trainer.h"

namespace lerobot::app {
namespace {

const char* kEstimateUsage = R"(usage: lerobot-cpp estimate --policy.type=act --dataset.root=DIR [--num_gpus=N] [--epochs=E]
                            [--measure_steps=K] [any train flag ...]

Trains K warm-up steps and K timed steps (K = --measure_steps, default 10) with the given train
flags in a temporary directory (when the dataset's first epoch ends on a smaller batch inside
those steps, the warm-up runs past it: a batch of a new shape runs once without the CUDA graph
while cuDNN picks its kernels, which a long run pays once), and prints: the policy size and its
weights + gradients + AdamW state per process (a frozen parameter: its weight only), the
dataset's frames, the optimizer steps for --epochs passes over it with
--batch_size x --num_gpus processes x accumulation, and the time that takes if each of the
--num_gpus processes runs as fast as the measured one (communication not included: on one
machine with NVLink DDP keeps most of it hidden; see docs/BENCHMARKS.md for measured overlap).

estimate flags:
  --num_gpus=<int>        data-parallel processes of the planned run (default: 1)
  --epochs=<float>        passes over the dataset (default: 1)
  --measure_steps=<int>   steps timed after as many warm-up steps, or after the first epoch's
                          smaller last batch when it comes within 2K steps (default: 10)
  --cameras=<int>         pi0/pi05: cameras to size the prefix for (default: the dataset's, else 3)

does a sharded run fit? (any of these prints the per-GPU peak, term by term; docs/DISTRIBUTED.md,
"When to shard", says what it counts and leaves out):
  --parallelism.dp_shard=<int>                   GPUs each parameter, gradient and AdamW state is
                                                 sharded over (-1: all --num_gpus; default 1;
                                                 without --num_gpus the run has N processes)
  --accelerator.fsdp.reshard_after_forward=<bool> true: a unit is gathered only while it runs;
                                                 false: kept gathered from forward to backward
  --accelerator.fsdp.cpu_offload=<bool>          AdamW state and a float32 master copy on the host
  --gpu_memory_gb=<float>                        one GPU's memory: prints "fits in G GB per GPU" or
                                                 what it needs and what to try
  (pi0/pi05 also follow --policy.dtype and --policy.gradient_checkpointing; other policies' units
  are not declared to estimate, so the whole model counts as one unit, and their activations are
  the measured step's, on a GPU only)

With --peft.* (LeRobot's PEFT flags, e.g. --peft.r=16) a pi0/pi05 estimate also prints the LoRA
adapters' trainable parameters and AdamW state for the policy's default targets (or
--peft.target_modules), counted without building the model.

For --policy.type=pi0 or pi05 it first prints the model's parameters by part and the memory per
process (weights, gradients, AdamW state, activations with and without gradient_checkpointing,
float32 and bfloat16), computed without building the model; the dataset is then optional, and a
step is timed only on a GPU.
)";

struct EstimateFlags {
  int num_gpus = 1;
  bool num_gpus_given = false;
  double epochs = 1.0;
  int measure_steps = 10;
  int cameras = 0;  // π0/π0.5 without a dataset: cameras to size for (0: the dataset's, else 3)
};

EstimateFlags take_estimate_flags(Args& args) {
  EstimateFlags f;
  for (const auto& [name, value] : take_named_flags(args, {"num_gpus", "epochs", "measure_steps", "cameras"})) {
    const std::string key = "--" + name;
    auto number = [&](double lo) {
      try {
        size_t pos = 0;
        const double v = std::stod(value, &pos);
        if (pos == value.size() && v >= lo) return v;
      } catch (const std::exception&) {
      }
      throw_usage("bad value '" + value + "' for " + key, key, "give a number >= " + std::to_string(static_cast<int>(lo)));
    };
    if (name == "num_gpus") {
      f.num_gpus = static_cast<int>(number(1));
      f.num_gpus_given = true;
    }
    else if (name == "cameras") f.cameras = static_cast<int>(number(1));
    else if (name == "epochs") f.epochs = number(0);
    else f.measure_steps = static_cast<int>(number(1));
  }
  return f;
}

// Warm-up steps before the K timed ones: K, or past the first epoch's last batch when that batch is
// smaller than the others and comes within the first 2K steps (the loader keeps the smaller batch,
// as LeRobot's drop_last=False). Its new shape costs a one-off (on CUDA an eager step with cuDNN's
// kernel search: 2.3 s in a 10-step window whose other steps took 5 ms, H200 2026-11-27); a long
// run pays it once, so it stays out of the timed window. A multiple of K, so that the last log
// window is the timed one.
int64_t warmup_steps(int64_t frames, int64_t batch, int64_t k) {
  const int64_t epoch_steps = (frames + batch - 1) / batch;
  if (frames % batch == 0 || epoch_steps > 2 * k) return k;
  return k * ((epoch_steps + k - 1) / k);
}

// Frames the run would train on: the selected episodes (or all), minus the excluded ones.
int64_t dataset_frames(const DatasetConfig& d) {
  const DatasetMetadata meta = load_dataset_metadata(*d.root);
  std::vector<bool> use(meta.episodes.size(), !d.episodes.has_value());
  if (d.episodes)
    for (int64_t e : *d.episodes) use.at(static_cast<size_t>(meta.episode(e).episode_index)) = true;
  if (d.exclude_episodes)
    for (int64_t e : *d.exclude_episodes) use.at(static_cast<size_t>(meta.episode(e).episode_index)) = false;
  int64_t frames = 0;
  for (size_t i = 0; i < use.size(); ++i)
    if (use[i]) frames += meta.episodes[i].length;
  return frames;
}

std::string duration(double s) {
  char buf[64];
  if (s < 120) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

// "; GPU peak X GB allocated, Y GB reserved" for a CUDA run (the caching allocator's high-water
// marks, what torch.cuda.max_memory_allocated/reserved report); "" on CPU.
std::string gpu_peak_memory(const std::string& device) {
  const auto peak = device_memory_peak(torch::Device(device));
  if (!peak) return "";
  char text[128];
  std::snprintf(text, sizeof text, "; GPU peak %.2f GB allocated, %.2f GB reserved", peak->allocated_gb,
                peak->reserved_gb);
  return text;
}

}  // namespace

int estimate_main(const Args& input) {
  if (wants_help(input)) {
    std::cout << kEstimateUsage;
    return 0;
  }
  Args args = input;
  EstimateFlags ef = take_estimate_flags(args);
  const ShardFlags shard = take_shard_flags(args);
  const auto [dp_shard, processes] = estimate_dp_shard(shard, ef.num_gpus_given ? ef.num_gpus : 0);
  ef.num_gpus = static_cast<int>(processes);
  // π with --peft.*: the adapters are sized here as a fine-tune of the policy (LeRobot's PEFT always
  // starts from a checkpoint, which sizing does not need), so those flags stay out of the train
  // config; any other policy's --peft.* run is measured as given.
  Args without_peft = args;
  Json peft_flags = nullptr;
  for (const auto& [name, value] : take_flags_with_prefix(without_peft, "peft.")) {
    const std::string key = name.substr(5);
    // A list as the flag parser reads one ('[q_proj,v_proj]'); anything else as text (a regex stays whole).
    peft_flags[key] = !value.empty() && value.front() == '[' ? parse_yaml(value, "--" + name) : Json(value);
  }
  TrainPipelineConfig cfg = parse_train_config(without_peft);
  std::optional<lora::LoraSettings> lora_settings;
  if (!peft_flags.is_null()) {
    if (cfg.policy.as<PiConfigBase>())
      lora_settings = lora::resolve_peft(*lora::peft_config_from_json(peft_flags), cfg.policy->type(), true);
    else
      cfg = parse_train_config(args);
  }
  if (const auto* pi = cfg.policy.as<PiConfigBase>()) {
    int64_t cameras = ef.cameras;
    if (cameras == 0 && cfg.dataset.root)
      cameras = static_cast<int64_t>(load_dataset_metadata(*cfg.dataset.root).camera_keys().size()) + pi->empty_cameras;
    if (cameras == 0) cameras = 3;
    print_pi_estimate(*pi, cfg.batch_size, cameras, lora_settings ? &*lora_settings : nullptr);
    if (shard.given)
      print_shard_estimate(shard, dp_shard, cfg.batch_size, pi->gradient_checkpointing, pi->dtype,
                           [&](int64_t b, bool ckpt) { return pi_model_bytes(*pi, b, cameras, ckpt); });
    if (!torch::cuda::is_available() || !cfg.dataset.root) {
      std::printf("not timed: %s\n", torch::cuda::is_available()
                                           ? "pass --dataset.root to time training steps on this GPU"
                                           : "this host has no GPU, and a step of the full-size model is not timed on a CPU");
      return 0;
    }
  }
  if (!cfg.dataset.root)
    throw_usage("estimate needs a dataset", "--dataset.root", "pass --dataset.root=DIR (a LeRobot dataset)");
  const int64_t frames = dataset_frames(cfg.dataset);

  // The measured run: the real trainer, no checkpoints, no evaluation, one log window per K steps.
  char tmpl[] = "/tmp/lerobot_estimate_XXXXXX";
  const fs::path work = mkdtemp(tmpl);
  cfg.output_dir = (work / "run").string();
  const int64_t warmup = warmup_steps(frames, cfg.batch_size, ef.measure_steps);
  cfg.steps = warmup + ef.measure_steps;
  cfg.log_freq = ef.measure_steps;
  cfg.save_checkpoint = false;
  cfg.env_eval_freq = 0;
  cfg.eval_steps = 0;
  cfg.resume = false;
  const int64_t accumulation = cfg.accelerator.gradient_accumulation.steps;
  const int64_t batch = cfg.batch_size;
  LOG_INFO << "estimate: training " << cfg.steps << " steps in " << work.string() << " to time the last "
           << ef.measure_steps;
  TrainResult result;
  try {
    result = train(cfg, LaunchEnv{});
  } catch (...) {
    fs::remove_all(work);
    throw;
  }
  Json last;
  {
    std::istringstream lines(read_file(result.output_dir / kMetricsJsonl));
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) last = Json::parse(line);
  }
  fs::remove_all(work);
  auto metric = [&](const char* key) { return last.contains(key) ? last[key].get<double>() : 0.0; };
  const double step_s = metric("step_s"), update_s = metric("update_s"), data_s = metric("dataloading_s");
  if (step_s <= 0) throw_runtime("the measured run logged no step time", (result.output_dir / kMetricsJsonl).string());

  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double peak_rss_gb = ru.ru_maxrss / (1024.0 * 1024.0);
  const double params = static_cast<double>(result.num_learnable_params);

  const int64_t per_update = batch * ef.num_gpus * accumulation;  // samples per optimizer step
  const double samples = ef.epochs * static_cast<double>(frames);
  const int64_t loop_steps = static_cast<int64_t>(std::ceil(samples / (batch * ef.num_gpus)));
  const int64_t updates = static_cast<int64_t>(std::ceil(samples / per_update));
  // Each learnable parameter holds its weight, gradient and AdamW's two moments in its own dtype;
  // a frozen one (SmolVLA's backbone) only its weight.
  auto listing = [](const std::map<std::string, TrainResult::ParamCount>& by_dtype) {
    std::string out;
    for (const auto& [dtype, c] : by_dtype) {
      char part[64];
      std::snprintf(part, sizeof part, "%s%.4g M %s", out.empty() ? "" : ", ", c.numel / 1e6, dtype.c_str());
      out += part;
    }
    return out;
  };
  double state_bytes = 0;
  for (const auto& [dtype, c] : result.learnable_by_dtype) state_bytes += 4.0 * static_cast<double>(c.bytes);
  for (const auto& [dtype, c] : result.frozen_by_dtype) state_bytes += static_cast<double>(c.bytes);
  std::printf("policy %s: %.1f M learnable parameters (%s)%s; weights + gradients + AdamW state: %.0f MB per process\n",
              cfg.policy->type().c_str(), params / 1e6, listing(result.learnable_by_dtype).c_str(),
              result.frozen_by_dtype.empty() ? "" : ("; frozen: " + listing(result.frozen_by_dtype)).c_str(),
              state_bytes / (1024 * 1024));
  std::printf("dataset: %lld frames; %.3g epoch(s) = %.0f samples\n", static_cast<long long>(frames), ef.epochs, samples);
  std::printf("layout: batch %lld x %d process(es) x accumulation %lld = %lld samples per optimizer step\n",
              static_cast<long long>(batch), ef.num_gpus, static_cast<long long>(accumulation),
              static_cast<long long>(per_update));
  std::printf("steps: --steps=%lld (loop steps per process; %lld optimizer updates)\n",
              static_cast<long long>(loop_steps), static_cast<long long>(updates));
  std::printf("measured here (%s, %d steps after %lld warm-up): %.3f s/step (update %.3f s, data wait %.3f s); "
              "peak memory (RSS) %.2f GB%s\n",
              result.device.c_str(), ef.measure_steps, static_cast<long long>(warmup), step_s, update_s,
              data_s, peak_rss_gb, gpu_peak_memory(result.device).c_str());
  std::printf("estimated time: %s (%lld steps x %.3f s; each of the %d process(es) as fast as this one, "
              "communication not included)\n",
              duration(static_cast<double>(loop_steps) * step_s).c_str(), static_cast<long long>(loop_steps), step_s,
              ef.num_gpus);
  if (shard.given && !cfg.policy.as<PiConfigBase>()) {
    // No units declared here: the whole model is one, gathered whole; activations are what the
    // measured step held on a GPU beyond its weights, gradients and AdamW state (unknown on a CPU).
    ModelBytes m;
    for (const auto& [dtype, c] : result.learnable_by_dtype) {
      m.weights += c.bytes;
      m.gradients += c.bytes;
      m.trained_parameters += c.numel;
    }
    for (const auto& [dtype, c] : result.frozen_by_dtype) m.weights += c.bytes;
    m.optimizer = 2 * m.gradients;
    m.largest_unit = m.all_units = m.weights;
    m.largest_unit_gradients = m.gradients;
    m.largest_unit_name = "the whole model";
    std::optional<int64_t> measured;
    if (const auto peak = device_memory_peak(torch::Device(result.device)))
      measured = std::max<int64_t>(0, static_cast<int64_t>(peak->allocated_gb * 1024.0 * 1024.0 * 1024.0) -
                                          m.weights - m.gradients - m.optimizer);
    std::string dtypes;
    for (const auto& [dtype, c] : result.learnable_by_dtype) dtypes += (dtypes.empty() ? "" : "+") + dtype;
    print_shard_estimate(shard, dp_shard, batch, std::nullopt, dtypes, [&](int64_t b, bool) {
      ModelBytes at = m;
      if (measured) at.activations = *measured * b / batch;  // taken as proportional to the batch
      return at;
    });
  }
  return 0;
}

}  // namespace lerobot::app
