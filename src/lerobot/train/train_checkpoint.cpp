// Training checkpoint contents (see train_checkpoint.h).
#include "lerobot/train/train_checkpoint.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/hub/cache_layout.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/optimizer_state.h"
#include "lerobot/policies/lora/peft_adapter_io.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/rng_state.h"
#include "lerobot/train/train_setup.h"

namespace lerobot {

namespace {
constexpr const char* kLossScalerFile = "loss_scaler.json";  // lerobot.cpp extension (fp16 runs)
constexpr const char* kEmaStateFile = "ema_state.pt";        // LeRobot's EMA_STATE_FILENAME
constexpr const char* kPretrainedModelEmaDir = "pretrained_model_ema";

TrainingStepInfo step_info(const TrainSetup& s, int64_t step) {
  TrainingStepInfo info;
  info.step = step;
  info.dp_world_size = s.world_size();
  info.dp_shard = s.sharded ? s.sharded->params().world_size() : 1;  // the shard group's size (HSDP: < the world)
  info.batch_size = s.cfg.batch_size;
  info.grad_accum_steps = s.cfg.accelerator.gradient_accumulation.steps;
  return info;
}
}  // namespace

void write_pretrained_model(TrainSetup& s, const fs::path& dir, bool ema_weights) {
  fs::create_directories(dir);
  std::optional<EmaWeightsScope> weights;
  if (ema_weights && s.ema) weights.emplace(*s.ema, s.policy->parameters());
  if (s.peft) {
    // LeRobot's save_checkpoint with cfg.peft: PeftModel.save_pretrained (adapter_config.json and
    // adapter_model.safetensors, no model.safetensors) and the policy's config.json (use_peft true).
    const std::string type = s.policy->type();
    static const std::map<std::string, std::string> classes = {
        {"act", "ACTPolicy"}, {"diffusion", "DiffusionPolicy"}, {"vqbet", "VQBeTPolicy"},
        {"smolvla", "SmolVLAPolicy"}, {"pi0", "PI0Policy"}, {"pi05", "PI05Policy"}};
    const auto cls = classes.find(type);
    // A run started from an adapter checkpoint (--policy.path=<a --peft.* run's pretrained_model>)
    // trains those adapters on their base: the new adapter_config.json names that base, as PEFT's
    // PeftModel keeps the base_model_name_or_path it was loaded with.
    // A base given as a Hub id (--policy.path=lerobot/smolvla_base) was fetched into its snapshot
    // folder before the config was parsed; adapter_config.json names the id, as LeRobot's does, so
    // a pushed adapter finds its base on any machine.
    const std::string base =
        lora::adapter_base(s.peft_base).value_or(hub::model_repo_id_of_snapshot(s.peft_base).value_or(s.peft_base));
    // A sharded run's checkpoint reads the adapters from the weights gathered unit by unit.
    lora::save_adapter_folder(dir, *s.policy, *s.peft, base, cls == classes.end() ? type : cls->second,
                              "lerobot.policies." + type + ".modeling_" + type,
                              s.sharded && !s.sharded_weights.empty() ? &s.sharded_weights : nullptr);
    Json config = Json::parse(policy_config_json(s.policy->config()));
    config["use_peft"] = true;
    write_file_atomic(dir / kConfigFile, config.dump(4));
  } else if (s.sharded && !s.sharded_weights.empty()) {
    // The weights gathered unit by unit (save_train_checkpoint), as save_pretrained writes them;
    // elsewhere (publishing after training) the whole model is gathered and written as usual.
    write_file_atomic(dir / kConfigFile, policy_config_json(s.policy->config()));
    save_safetensors(dir / kModelFile, s.sharded_weights);
  } else {
    save_pretrained(*s.policy, dir);
  }
  save_policy_processors(dir, s.processors);
  write_train_config(s.cfg, dir);
}

void save_train_checkpoint(TrainSetup& s, int64_t step) {
  s.group->barrier();
  // A sharded run: the model copied to rank 0's host unit by unit, and the optimizer state in the
  // non-sharded layout (both collective, before rank 0 writes alone).
  TensorMap full_optimizer_state;
  if (s.sharded) {
    s.sharded_weights = s.sharded->gathered_state_dict(*s.policy, s.is_main());
    sync_optimizer_steps_to_host(*s.optimizer);
    full_optimizer_state = s.sharded->full_optimizer_state(*s.optimizer);
  }
  if (s.is_main()) {
    CheckpointWriters w;
    w.pretrained_model = [&](const fs::path& dir) { write_pretrained_model(s, dir); };
    w.training_state = [&](const fs::path& dir) {
      sync_optimizer_steps_to_host(*s.optimizer);  // fused kernels count steps on the device
      const auto initial_lrs = s.scheduler ? std::optional<std::vector<double>>(s.scheduler->base_lrs()) : std::nullopt;
      if (s.sharded) s.sharded->save_optimizer_state(*s.optimizer, full_optimizer_state, dir, initial_lrs);
      else save_optimizer_state(*s.optimizer, dir, initial_lrs);
      if (s.scheduler) s.scheduler->save(dir / kSchedulerStateFile);
      if (s.scaler) write_file_atomic(dir / kLossScalerFile, s.scaler->state_dict().dump(4));
      save_rng_state(dir / kRngStateFile, s.seed, s.device);
      write_file_atomic(dir / kTrainingStepFile, to_json(step_info(s, step)).dump(4));
      if (s.ema) s.ema->save(dir / kEmaStateFile);
    };
    if (s.ema) {  // the EMA weights as a loadable policy (lerobot-eval --policy.path=<ckpt>/pretrained_model_ema)
      w.extra = [&](const fs::path& dir) {
        write_pretrained_model(s, dir / kPretrainedModelEmaDir, true);
      };
    }
    const fs::path dir = save_checkpoint(s.output_dir, step, s.cfg.steps, w);
    s.sharded_weights.clear();
    LOG_INFO << "Checkpoint policy after step " << step << " -> " << dir.string();
    if (s.uploader) s.uploader->push(dir);  // --save_checkpoint_to_hub, on the uploader's thread
  }
  s.group->wait_for_rank0("the checkpoint at step " + std::to_string(step));  // a slow disk may outlast the timeout
}

int64_t load_training_state(TrainSetup& s, const fs::path& checkpoint_dir) {
  const fs::path dir = checkpoint_dir / kTrainingStateDir;
  const TrainingStepInfo info = read_training_step(dir);
  // As LeRobot: another process count or batch size is allowed; the data order resumes at the
  // epoch and offset the checkpoint's values give, no longer sample for sample.
  if (info.dp_world_size > 0 && info.dp_world_size != s.world_size()) {
    s.resumed_world_size = info.dp_world_size;
    if (s.is_main())
      LOG_WARNING << "Resuming with " << s.world_size() << " process(es) but the checkpoint was written by "
                  << info.dp_world_size << ": the data order resumes at the right epoch and offset, but sample for "
                  << "sample only with --num_processes=" << info.dp_world_size;
  }
  if (info.batch_size > 0 && info.batch_size != s.cfg.batch_size) {
    s.resumed_batch_size = info.batch_size;
    if (s.is_main())
      LOG_WARNING << "Resuming with batch_size " << s.cfg.batch_size << " but the checkpoint was trained with "
                  << info.batch_size << ": the data order resumes at the right epoch and offset, but sample for "
                  << "sample only with --batch_size=" << info.batch_size;
  }
  const int64_t accum = s.cfg.accelerator.gradient_accumulation.steps;
  if (info.grad_accum_steps != accum)
    throw_usage("the checkpoint was trained with " + std::to_string(info.grad_accum_steps) +
                    " gradient accumulation steps, this run uses " + std::to_string(accum),
                "--accelerator.gradient_accumulation.steps",
                "drop the flag or set it to " + std::to_string(info.grad_accum_steps));
  if (info.step % accum != 0)
    LOG_WARNING << "the checkpoint at step " << info.step << " was written in the middle of a gradient accumulation ("
                << info.step % accum << " of " << accum << " micro-batches): their gradients are not in a checkpoint, so "
                << "the first optimizer step after resuming averages fewer micro-batches than the run that went on";
  if (s.sharded) s.sharded->load_optimizer_state(*s.optimizer, dir);  // any world size's, resharded
  else load_optimizer_state(*s.optimizer, dir);
  if (s.scheduler) s.scheduler->load(dir / kSchedulerStateFile);
  if (s.scaler && fs::exists(dir / kLossScalerFile)) s.scaler->load_state_dict(load_json_or_yaml(dir / kLossScalerFile));
  load_rng_state(dir / kRngStateFile, s.device);
  if (s.ema) {
    if (fs::exists(dir / kEmaStateFile)) {
      s.ema->load(dir / kEmaStateFile);
      LOG_INFO << "Resumed EMA shadow from " << (dir / kEmaStateFile).string();
    } else {
      LOG_WARNING << "Resuming with --ema.enable=true but " << (dir / kEmaStateFile).string()
                  << " is missing; restarting the average from the current weights";
    }
  }
  return info.step;
}

}  // namespace lerobot
