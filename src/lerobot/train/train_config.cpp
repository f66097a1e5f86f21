// TrainPipelineConfig field declarations and cross-field checks.
#include "lerobot/train/train_config.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "lerobot/common/config/flags.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/logging.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/register_policies.h"
#include "lerobot/train/hub_publish.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/unused_flags.h"

namespace lerobot {

void GradientAccumulationConfig::validate() const {
  if (steps < 1)
    throw_usage("gradient accumulation steps must be >= 1, got " + std::to_string(steps),
                "accelerator.gradient_accumulation.steps");
}

void AcceleratorConfig::validate() const {
  if (mixed_precision != "no" && mixed_precision != "bf16" && mixed_precision != "fp16")
    throw_usage("mixed_precision must be no, bf16 or fp16, got '" + mixed_precision + "'",
                "accelerator.mixed_precision", "pass --accelerator.mixed_precision=bf16 (or fp16, no)");
}

void TrainPipelineConfig::visit(FieldVisitor& v) {
  field(v, "dataset", dataset, "Dataset");
  field(v, "env", env, "Simulated environment for evaluation during training");
  field(v, "policy", policy, "Policy to train");
  field(v, "reward_model", reward_model, "LeRobot's reward-model training (not available: only null)");
  field(v, "output_dir", output_dir, "Output directory (default outputs/train/<date>/<time>_<job_name>)");
  field(v, "job_name", job_name, "Job name (default <env.type>_<policy.type> or <policy.type>)");
  field(v, "resume", resume, "Resume from --config_path=<checkpoint>/pretrained_model");
  field(v, "seed", seed, "Seed for the sampler, model init and noise (same on every rank)");
  field(v, "cudnn_deterministic", cudnn_deterministic, "Deterministic cuDNN (slower)");
  field(v, "num_workers", num_workers, "Data loader worker threads");
  field(v, "batch_size", batch_size, "Batch size per process (effective = batch_size x processes x accumulation)");
  field(v, "prefetch_factor", prefetch_factor, "Batches prefetched per worker");
  field(v, "persistent_workers", persistent_workers, "Keep loader workers between epochs");
  field(v, "dataloader_multiprocessing_context", dataloader_multiprocessing_context,
        "Python worker start method (loader workers are threads here)");
  field(v, "steps", steps, "Training steps (micro-batches per process)");
  field(v, "env_eval_freq", env_eval_freq, "Evaluate in --env.type every N steps (0: off)");
  field(v, "log_freq", log_freq, "Log metrics every N steps");
  field(v, "eval_steps", eval_steps, "Held-out eval loss every N steps (needs dataset.eval_split > 0)");
  field(v, "max_eval_samples", max_eval_samples, "Cap on held-out eval samples (0: all)");
  field(v, "tolerance_s", tolerance_s, "Timestamp tolerance for frames and delta timestamps, seconds");
  field(v, "save_checkpoint", save_checkpoint, "Write checkpoints");
  field(v, "save_freq", save_freq, "Checkpoint every N steps (<=0: only at the end)");
  field(v, "checkpoint_format", checkpoint_format, "safetensors");
  field(v, "use_policy_training_preset", use_policy_training_preset, "Use the policy's optimizer/scheduler preset (ignores --optimizer.*/--scheduler.*)");
  field(v, "optimizer", optimizer, "Optimizer (used when the preset is off)");
  field(v, "scheduler", scheduler, "Learning-rate scheduler (used when the preset is off)");
  field(v, "parallelism", parallelism, "Parallelism layout");
  field(v, "accelerator", accelerator, "Mixed precision and gradient accumulation");
  field(v, "eval", eval, "Environment evaluation");
  field(v, "ema", ema, "Exponential moving average of the weights");
  field(v, "wandb", wandb, "Weights & Biases");
  field(v, "peft", peft, "LeRobot's PEFT settings (LoRA only; needs --policy.path)");
  field(v, "job", job, "Where the run happens (LeRobot's HF Jobs; only local)");
  field(v, "save_checkpoint_to_hub", save_checkpoint_to_hub,
        "Push every checkpoint to --policy.repo_id as checkpoints/<step>/, tagged <step> (resume elsewhere with "
        "--resume=true --config_path=<repo>)");
  field(v, "sample_weighting", sample_weighting, "LeRobot's sample weighting, e.g. RA-BC (not available: only null)");
  field(v, "rename_map", rename_map, "Rename observation keys {dataset_key: policy_key}");
  field(v, "checkpoint_path", resumed_from,
        "The checkpoint a resumed run continued (written on resume; the checkpoint to resume is --config_path)");
  field(v, "distributed", distributed, "lerobot.cpp distributed settings");
  field(v, "cuda", cuda, "lerobot.cpp CUDA math settings");
  field(v, "optimizer_impl", optimizer_impl,
        "How the optimizer steps (lerobot.cpp): auto (fused kernels on CUDA where the LibTorch has them, else "
        "foreach), fused, foreach (multi-tensor ops) or per_tensor (torch::optim's own loop)");
  field(v, "max_nonfinite_steps", max_nonfinite_steps,
        "Stop when the loss or gradients are NaN/Inf this many steps in a row (lerobot.cpp)");
}

void TrainPipelineConfig::validate() const {
  if (batch_size < 1) throw_usage("batch_size must be >= 1, got " + std::to_string(batch_size), "batch_size");
  if (steps < 0) throw_usage("steps must be >= 0", "steps");
  if (max_nonfinite_steps < 1) throw_usage("max_nonfinite_steps must be >= 1", "max_nonfinite_steps");
  parse_optimizer_impl(optimizer_impl);
  if (num_workers < 0) throw_usage("num_workers must be >= 0", "num_workers");
  if (!(tolerance_s >= 0.0))
    throw_usage("tolerance_s must be >= 0 seconds, got " + std::to_string(tolerance_s), "tolerance_s",
                "pass --tolerance_s=1e-4 (LeRobot's default)");
  if (seed && *seed < 0) throw_usage("seed must be >= 0, got " + std::to_string(*seed), "seed");
  if (log_freq < 0) throw_usage("log_freq must be >= 0 (0: no metric lines)", "log_freq");
  if (env_eval_freq < 0) throw_usage("env_eval_freq must be >= 0 (0: no evaluation)", "env_eval_freq");
  if (eval_steps < 0) throw_usage("eval_steps must be >= 0", "eval_steps");
  if (prefetch_factor < 1) throw_usage("prefetch_factor must be >= 1", "prefetch_factor");
  if (!(dataset.eval_split >= 0.0 && dataset.eval_split < 1.0))
    throw_usage("eval_split must be in [0.0, 1.0), got " + std::to_string(dataset.eval_split), "dataset.eval_split",
                "pass the fraction of each task's episodes to hold out, e.g. --dataset.eval_split=0.1");
  if (eval_steps > 0 && dataset.eval_split == 0.0)
    throw_usage("eval_steps > 0 requires dataset.eval_split > 0.0 to hold out eval data", "eval_steps",
                "add --dataset.eval_split=0.1 (the last 10% of each task's episodes, at least one, are held out), "
                "or drop --eval_steps");
  if (max_eval_samples < 0)
    throw_usage("max_eval_samples must be >= 0 (0: every held-out frame), got " + std::to_string(max_eval_samples),
                "max_eval_samples");
  // LeRobot features lerobot.cpp does not have yet: refused rather than silently ignored.
  if (!peft.is_null()) {  // LeRobot's wrap_with_peft checks, before any work starts
    const auto pc = lora::peft_config_from_json(peft);
    if (pc && policy)
      lora::resolve_peft(*pc, policy->type(), policy->pretrained_path.has_value() || resume);
    if (ema.enable)
      throw_usage("--ema.enable=true is not supported together with PEFT adapters.", "ema.enable",
                  "drop --ema.enable or --peft.*");
  }
  // A resumed PEFT run has its peft section; a new run from an adapter checkpoint gets the adapters'
  // own (adopt_adapter_checkpoint); use_peft with no checkpoint at all is LeRobot's make_policy error.
  if (policy && policy->use_peft && !resume && !policy->pretrained_path)
    throw_usage("Instantiating a policy with `use_peft=True` without a checkpoint is not supported since that requires "
                "the PEFT config parameters to be set.", "policy.use_peft",
                "drop --policy.use_peft; to train adapters pass --policy.path=<pretrained policy> --peft.method_type=LORA");
  if (policy && policy->use_peft && resume && peft.is_null())
    throw_usage("use_peft: true in a resumed run without its peft settings", "peft",
                "resume from the PEFT run's own checkpoint (--config_path=<checkpoint>/pretrained_model)");
  if (checkpoint_format != "safetensors")
    throw_usage("only checkpoint_format=safetensors is supported, got '" + checkpoint_format + "'",
                "checkpoint_format");
  // --parallelism.dp_shard is resolved against the process count in make_train_setup; here what
  // needs no world size (LeRobot's ParallelismConfig / FSDPConfig __post_init__).
  if (parallelism.dp_replicate < 1)
    throw_usage("dp_replicate must be >= 1, got " + std::to_string(parallelism.dp_replicate), "parallelism.dp_replicate");
  if (parallelism.dp_shard < 1 && parallelism.dp_shard != -1)
    throw_usage("dp_shard must be >= 1, or -1 for every process, got " + std::to_string(parallelism.dp_shard),
                "parallelism.dp_shard");
  if (accelerator.fsdp.wrap_modules && accelerator.fsdp.min_num_params)
    throw_usage("fsdp.wrap_modules and fsdp.min_num_params are mutually exclusive wrap policies",
                "accelerator.fsdp.min_num_params", "pass only one of the two");
  if (accelerator.fsdp.min_num_params && *accelerator.fsdp.min_num_params < 1)
    throw_usage("fsdp.min_num_params must be >= 1, got " + std::to_string(*accelerator.fsdp.min_num_params),
                "accelerator.fsdp.min_num_params");
  refuse_unsupported_lerobot_sections();
}

namespace {

const Json* find_dotted(const Json& root, const std::string& dotted) {
  const Json* at = &root;
  size_t begin = 0;
  while (true) {
    const size_t dot = dotted.find('.', begin);
    const std::string key = dotted.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    if (dot == std::string::npos) return at;
    begin = dot + 1;
  }
}

// The accepted-but-unused keys that `file` (a train_config.json) sets to something other than
// lerobot.cpp's default for them (LeRobot's defaults): what the run's log reports once.
std::vector<std::string> unused_keys_set_in(const Json& file) {
  TrainPipelineConfig defaults;
  if (const Json* type = find_dotted(file, "policy.type"); type && type->is_string())
    defaults.policy.set_type(type->get<std::string>(), "policy.type");
  const Json d = to_json(defaults);
  std::vector<std::string> out;
  for (const auto& u : accepted_unused_train_flags()) {
    const std::string key = u.key;
    if (key == "checkpoint_path") continue;  // LeRobot's own loader ignores it too
    const Json* value = find_dotted(file, key);
    const Json* fallback = find_dotted(d, key);
    if (value && (fallback == nullptr || *value != *fallback)) out.push_back(key);
  }
  return out;
}

}  // namespace

namespace {

// --policy.path=<the pretrained_model of a --peft.* run>, not resumed: LeRobot's make_policy loads
// the base and the adapters (is_trainable) and its trainer skips wrap_with_peft, so the adapters go
// on training with the settings adapter_config.json holds, whatever --peft.* says; --peft.* may be
// left out here (LeRobot needs one to write a loadable checkpoint).
void adopt_adapter_checkpoint(TrainPipelineConfig& cfg) {
  const fs::path dir = *cfg.policy->pretrained_path;
  const fs::path ac = dir / "adapter_config.json";
  if (!fs::exists(ac))
    throw_usage("use_peft is true but '" + dir.string() + "' holds no adapter_config.json", "policy.use_peft",
                "point --policy.path at the pretrained_model folder of a --peft.* run, or drop --policy.use_peft");
  const lora::LoraSettings s = lora::settings_from_adapter_config(load_json_or_yaml(ac));
  const Json adopted = lora::to_json(lora::peft_config_from_settings(s));
  if (!cfg.peft.is_null()) {
    const Json given = lora::to_json(*lora::peft_config_from_json(cfg.peft));
    for (const char* key : {"r", "lora_alpha", "target_modules", "init_type"})
      if (!given[key].is_null() && given[key] != adopted[key])
        LOG_WARNING << "--peft." << key << "=" << given[key].dump() << " is not applied: the adapters loaded from "
                    << ac.string() << " keep their own " << key << " (" << adopted[key].dump() << ")";
  }
  LOG_INFO << "PEFT adapter loaded from checkpoint " << dir.string() << " (LoRA r=" << s.r << " alpha=" << s.lora_alpha
           << "): a new run trains these adapters further";
  cfg.peft = adopted;
}

}  // namespace

TrainPipelineConfig parse_train_config(const std::vector<std::string>& words) {
  register_all_configs();
  TrainPipelineConfig cfg;
  std::vector<Flag> flags = parse_flag_words(words);

  bool has_config = false;
  std::string config_path = take_flag(flags, "config_path", &has_config);
  if (has_config) {
    fs::path p(config_path);
    if (fs::is_directory(p)) p /= "train_config.json";
    if (!fs::exists(p))
      throw_usage("config file not found: " + p.string(), "--config_path",
                  "pass a train_config.json or the checkpoint's pretrained_model directory");
    const Json file = load_json_or_yaml(p);
    apply_json(cfg, file, "");
    cfg.file_unused_keys = unused_keys_set_in(file);
    const fs::path extensions = p.parent_path() / kExtensionConfigFile;
    if (p.filename() == "train_config.json" && fs::exists(extensions))
      apply_json(cfg, load_json_or_yaml(extensions), kExtensionConfigFile);
    cfg.checkpoint_path = config_path;
  }

  // A pretrained policy's config.json names the repo *it* was published to: a fine-tune
  // publishes only where --policy.push_to_hub / --policy.repo_id on the command line say.
  if (take_policy_path_flag(flags, cfg.policy)) {
    bool push_flag = false;
    for (const auto& f : flags) push_flag = push_flag || f.key == "policy.push_to_hub";
    if (cfg.policy->push_to_hub && !push_flag)
      LOG_WARNING << "push_to_hub=true in " << *cfg.policy->pretrained_path
                  << "/config.json is not applied (it names where that policy was published); pass "
                     "--policy.push_to_hub=true --policy.repo_id=<you>/<name> to publish this run";
    cfg.policy->push_to_hub = false;
    cfg.policy->repo_id.reset();
  }
  bool has_mp = false;
  for (const auto& f : flags) has_mp = has_mp || f.key == "accelerator.mixed_precision";
  if (const char* env = std::getenv("ACCELERATE_MIXED_PRECISION"); env && !has_mp && *env)
    flags.push_back({"accelerator.mixed_precision", env});

  for (const auto& f : flags) cfg.given_flags.push_back(f.key);
  apply_flags(cfg, std::move(flags));
  if (cfg.resume && !cfg.checkpoint_path)
    throw_usage("--resume=true needs the checkpoint to continue", "--config_path",
                "pass --config_path=<output_dir>/checkpoints/last/pretrained_model");
  // push_to_hub=true from a --config_path file is honoured (LeRobot's behaviour) when the file
  // also names the repo; a file without one (LeRobot would refuse it) is read with a warning.
  if (cfg.policy && cfg.policy->push_to_hub && !cfg.policy->repo_id &&
      std::find(cfg.given_flags.begin(), cfg.given_flags.end(), "policy.push_to_hub") == cfg.given_flags.end()) {
    LOG_WARNING << "policy.push_to_hub=true in the config file but no policy.repo_id: nothing will be published; "
                   "pass --policy.repo_id=<you>/<name> to publish, or --policy.push_to_hub=false to silence this";
    cfg.policy->push_to_hub = false;
  }
  check_publish_flags(cfg);  // --policy.push_to_hub without a (valid) --policy.repo_id: refused now
  if (!cfg.resume && cfg.policy && cfg.policy->use_peft && cfg.policy->pretrained_path) {
    adopt_adapter_checkpoint(cfg);
    cfg.validate();  // the adopted settings meet the PEFT checks (EMA, method) as given ones would
  }
  return cfg;
}

const std::vector<std::vector<std::string>>& train_config_extension_keys() {
  static const std::vector<std::vector<std::string>> keys = {
      {"distributed"}, {"cuda"}, {"optimizer_impl"}, {"max_nonfinite_steps"}, {"accelerator", "loss_scale_init"}};
  return keys;
}

void write_train_config(TrainPipelineConfig& cfg, const fs::path& dir) {
  Json lerobot = to_json(cfg);
  Json extensions = Json::object();
  for (const auto& path : train_config_extension_keys()) {
    Json* from = &lerobot;
    Json* to = &extensions;
    for (size_t k = 0; k + 1 < path.size(); ++k) {
      from = &(*from)[path[k]];
      to = &(*to)[path[k]];
    }
    (*to)[path.back()] = (*from)[path.back()];
    from->erase(path.back());
  }
  // draccus refuses a choice type it has no class for, so an env type Python LeRobot lacks (our
  // simulated reach2d/push2d) travels in the extension file and train_config.json says null
  // (TrainPipelineConfig.env is optional). A type LeRobot has (pusht) is written with its keys.
  static const std::set<std::string> lerobot_env_types = {"aloha", "pusht", "xarm", "libero", "metaworld"};
  if (Json& env = lerobot["env"]; env.is_object() && !lerobot_env_types.count(env.value("type", ""))) {
    extensions["env"] = env;
    env = nullptr;
  } else if (env.is_object() && env.contains("image_size")) {
    // A LeRobot env type (pusht): its own keys stay, our camera size goes beside them.
    extensions["env"]["image_size"] = env["image_size"];
    env.erase("image_size");
  }
  // LeRobot's checkpoint_path: the checkpoint this (resumed) run continued, null for a fresh run.
  Json resumed = nullptr;
  if (cfg.resume && cfg.checkpoint_path) {
    try {
      resumed = resolve_checkpoint_dir(*cfg.checkpoint_path).string();
    } catch (const Error&) {
    }
  }
  lerobot["checkpoint_path"] = resumed;
  write_file_atomic(dir / kExtensionConfigFile, dump_pretty(extensions));
  write_file_atomic(dir / "train_config.json", dump_pretty(lerobot));
}

void register_all_configs() {
  register_policy_configs();
  register_optim_configs();
  register_env_configs();
}

}  // namespace lerobot
