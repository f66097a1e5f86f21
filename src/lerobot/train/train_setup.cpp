// Builds a training run from its config (LeRobot's train() up to the loop, §1.2 steps 2-14).
#include "lerobot/train/train_setup.h"
#include "lerobot/train/sharded_training.h"
#include "lerobot/train/hub_dataset.h"
#include "lerobot/hub/torchvision_weights.h"
#include "lerobot/hub/policy_models.h"
#include "lerobot/policies/resnet_backbone.h"

#include <cstdlib>
#include <ctime>
#include <random>

#include "lerobot/common/device.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/optim/presets.h"
#include "lerobot/policies/activation_checkpoint.h"
#include "lerobot/policies/factory.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/memory_format.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/eval_split.h"
#include "lerobot/train/finetune.h"
#include "lerobot/train/policy_features.h"
#include "lerobot/train/rng_state.h"
#include "lerobot/train/train_checks.h"
#include "lerobot/train/unused_flags.h"
#include "lerobot/train/train_checkpoint.h"

namespace lerobot {
namespace {

// LeRobot's use_policy_training_preset: the policy's own optimizer (and scheduler) settings.
void apply_policy_preset(TrainPipelineConfig& cfg) {
  const auto preset = cfg.policy->training_preset();
  if (!preset)
    throw_usage("policy type '" + cfg.policy->type() + "' has no training preset", "--use_policy_training_preset",
                "pass --use_policy_training_preset=false with --optimizer.type=...");
  apply_training_preset(*preset, cfg.optimizer, cfg.scheduler);
}

// What a sharded run cannot do yet, refused by name before any work.
void refuse_with_sharding(const TrainPipelineConfig& cfg) {
  const std::string fix = "drop it, or train with plain data parallelism (--parallelism.dp_shard=1)";
  if (cfg.ema.enable) throw_usage("--ema.enable is not built for sharded runs yet", "--ema.enable", fix);
  if (!cfg.distributed.reduce_gradients)
    throw_usage("--distributed.reduce_gradients=false has no meaning in a sharded run (the shards are the reduction)",
                "--distributed.reduce_gradients", "drop it");
}

std::vector<ParamGroup> to_param_groups(const std::vector<PolicyParamGroup>& groups) {
  std::vector<ParamGroup> out;
  for (const auto& g : groups) out.push_back(ParamGroup{g.params, g.names, g.lr, g.weight_decay});
  return out;
}

// --rename_map {dataset key: policy key}: two keys onto one name would overwrite a feature; a key
// the dataset lacks is kept (the map also renames environment observations in eval) but said.
void check_rename_map(const std::map<std::string, std::string>& rename_map, const DatasetMetadata& meta, bool main) {
  std::map<std::string, std::string> target_of;
  for (const auto& [from, to] : rename_map) {
    if (to.empty()) throw_usage("--rename_map maps '" + from + "' to an empty name", "--rename_map");
    if (auto it = target_of.find(to); it != target_of.end())
      throw_usage("--rename_map maps both '" + it->second + "' and '" + from + "' to '" + to + "'", "--rename_map",
                  "map each dataset key to its own policy key");
    target_of[to] = from;
    if (main && !meta.find_feature(from))
      LOG_WARNING << "--rename_map: the dataset " << meta.root.string() << " has no feature '" << from
                  << "' (kept for environment observations)";
    if (meta.find_feature(to) && !rename_map.count(to))
      throw_usage("--rename_map renames '" + from + "' to '" + to + "', which the dataset already has", "--rename_map",
                  "rename that one too, or pick another name");
  }
}

std::string default_job_name(const TrainPipelineConfig& cfg) {
  return cfg.env ? cfg.env->type() + "_" + cfg.policy->type() : cfg.policy->type();
}

// outputs/train/YYYY-MM-DD/HH-MM-SS_<job_name>, with the time chosen by rank 0 so every rank agrees.
fs::path default_output_dir(const std::string& job_name, ProcessGroup& group) {
  const double now = group.all_gather(static_cast<double>(std::time(nullptr)))[0];
  const std::time_t t = static_cast<std::time_t>(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char day[16], hms[16];
  std::strftime(day, sizeof(day), "%Y-%m-%d", &tm);
  std::strftime(hms, sizeof(hms), "%H-%M-%S", &tm);
  return fs::path("outputs/train") / day / (std::string(hms) + "_" + job_name);
}

}  // namespace

std::vector<PolicyParamGroup> training_param_groups(const TrainPipelineConfig& cfg, Policy& policy) {
  return cfg.use_policy_training_preset ? policy.optim_param_groups() : policy.Policy::optim_param_groups();
}

std::unique_ptr<TrainSetup> make_train_setup(TrainPipelineConfig cfg, const LaunchEnv& launch,
                                             const std::optional<fs::path>& resume_from) {
  auto s = std::make_unique<TrainSetup>();
  s->launch = launch;
  // --policy.pretrained_backbone_weights=ResNet18_Weights.IMAGENET1K_V1 (LeRobot's default): the
  // Hub's safetensors copy, cached in $HF_HUB_CACHE, fetched when the policy is built.
  set_backbone_weights_resolver([](const std::string& name, const std::string& flag) {
    return hub::fetch_torchvision_weights(hub::HubClient(hub::HubEnv::from_environment()), name, flag).string();
  });
  install_hub_model_resolver();  // SmolVLA's backbone by Hub id
  if (!cfg.policy) throw_usage("no policy given", "--policy.type", "pass --policy.type=TYPE or --policy.path=DIR");
  if (dataset_needs_download(cfg.dataset))  // a Hub id: --dataset.root, LeRobot's local copy or its hub cache
    cfg.dataset.root = resolve_hub_dataset(cfg.dataset, hub::HubClient(hub::HubEnv::from_environment())).string();
  if (!cfg.dataset.root)
    throw_usage("no dataset given", "--dataset.root",
                "pass --dataset.root=DIR (a LeRobot v3.0 or v2.1 dataset) or --dataset.repo_id=org/name (from the Hub)");
  s->device = resolve_device(cfg.policy->device, launch.local_rank);
  cfg.policy->device = device_config_name(s->device, cfg.policy->device);  // recorded in config.json
  apply_cuda_math_settings({cfg.cuda.tf32, cfg.cuda.cudnn_benchmark, cfg.cudnn_deterministic});
  s->group = make_process_group(launch, process_group_options(backend_for_device(cfg.distributed.backend, s->device.is_cuda()),
                                                              cfg.distributed.timeout_s));
  set_log_rank(s->group->rank(), s->group->world_size());
  if (s->group->backend() == "nccl" && s->device != s->group->device())
    throw_usage("the NCCL group reduces gradients on " + s->group->device().str() + " but the policy is on " +
                    s->device.str(),
                "--policy.device", "use --policy.device=cuda (each process its own GPU), or --distributed.backend=gloo");
  if (!torch::cuda::is_available()) {
    // One process keeps LibTorch's own intra-op default, as a PyTorch script does (Debian's
    // OpenBLAS builds default to 1 OpenMP thread, which leaves the cores to OpenBLAS's own pool;
    // raising it makes the two pools spin against each other: 1.9 s vs 1.4 s per ACT step on 2
    // cores). Several processes on one machine each get at most their share of the cores, unless
    // OMP_NUM_THREADS says otherwise (the launcher sets it to that share too).
    const int share = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, launch.local_world_size));
    if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp && std::atoi(omp) > 0)
      torch::set_num_threads(std::atoi(omp));
    else if (launch.local_world_size > 1)
      torch::set_num_threads(std::min(torch::get_num_threads(), share));
  }

  // Output directory and job name.
  if (!cfg.job_name) cfg.job_name = default_job_name(cfg);
  s->output_dir = cfg.output_dir ? fs::path(*cfg.output_dir) : default_output_dir(*cfg.job_name, *s->group);
  check_output_dir(cfg.output_dir.value_or(s->output_dir.string()), s->output_dir, cfg.resume);
  cfg.output_dir = s->output_dir.string();
  s->group->barrier();  // every rank checked before rank 0 creates it
  if (s->is_main()) create_output_dir(s->output_dir);

  if (const std::string unused = unused_flags_message(cfg.given_flags, cfg.file_unused_keys,
                                                     cfg.checkpoint_path.value_or(""), cfg.policy->type());
      !unused.empty() && s->is_main())
    LOG_INFO << unused;

  // --seed=null: LeRobot leaves torch's generators unseeded (a new initialisation every run) while
  // its sampler still shuffles with seed 0; so do we, and the log says which seed the generators got.
  s->seed = cfg.seed.value_or(0);
  if (cfg.seed) {
    set_seed(*cfg.seed);
  } else {
    const int64_t drawn = static_cast<int64_t>(std::random_device{}() >> 1);
    set_seed(drawn);
    if (s->is_main())
      LOG_INFO << "--seed=null: LibTorch's generators start from " << drawn
               << " (unseeded, as LeRobot's); the sampler shuffles with seed 0";
  }

  // Dataset (delta indices from the policy) and policy features.
  const DatasetMetadata meta = load_dataset_metadata(*cfg.dataset.root);
  check_rename_map(cfg.rename_map, meta, s->is_main());
  const DeltaIndices deltas = resolve_delta_indices(
      meta,
      DeltaIndexRequest{cfg.policy->observation_delta_indices(), cfg.policy->image_observation_delta_indices(),
                        cfg.policy->state_observation_delta_indices(), cfg.policy->action_delta_indices(), std::nullopt},
      cfg.rename_map);
  DatasetConfig train_data = cfg.dataset;
  std::optional<EpisodeSplit> split;
  if (cfg.dataset.eval_split > 0.0) {  // LeRobot's make_train_eval_datasets: held-out episodes per task
    split = split_episodes(meta, selected_episodes(meta, cfg.dataset.episodes, cfg.dataset.exclude_episodes),
                           cfg.dataset.eval_split);
    train_data.episodes = split->train;
    train_data.exclude_episodes.reset();
  }
  s->dataset = make_dataset(train_data, deltas, cfg.tolerance_s);
  if (split) {
    DatasetConfig eval_data = cfg.dataset;
    eval_data.episodes = split->eval;
    eval_data.exclude_episodes.reset();
    HeldOutSet h;
    h.dataset = make_dataset(eval_data, deltas, cfg.tolerance_s);
    h.frames = cap_eval_frames(h.dataset->absolute_indices(), h.dataset->task_indices(), cfg.max_eval_samples);
    if (s->is_main())
      LOG_INFO << "Train/eval split: " << split->train.size() << " train, " << split->eval.size()
               << " eval episodes (eval_split=" << cfg.dataset.eval_split << ", " << split->num_tasks << " tasks); "
               << h.frames.size() << " held-out frames evaluated"
               << (cfg.eval_steps > 0 ? " every " + std::to_string(cfg.eval_steps) + " steps"
                                      : " never (--eval_steps=0: the episodes are only left out of training)");
    s->heldout = std::move(h);
  }
  fill_policy_features(*cfg.policy, s->dataset->meta(), cfg.rename_map);
  cfg.batch_size = fit_batch_size(
      cfg.batch_size,
      EpisodeAwareSampler(s->dataset->episode_ranges(), 0, cfg.policy->drop_n_last_frames(), false).size(),
      s->group->world_size(), s->is_main());

  // Policy and processors: from the checkpoint when resuming, fresh otherwise (weights from
  // --policy.path when fine-tuning).
  if (resume_from) {
    s->policy = load_pretrained(*resume_from / kPretrainedModelDir, cfg.policy->type(), s->device);
    s->processors = load_policy_processors(*resume_from / kPretrainedModelDir);
  } else {
    if (cfg.policy->pretrained_path) {  // fine-tuning: the checkpoint's weights, the new dataset's stats (§8.3)
      s->policy = load_finetune_policy(*cfg.policy, s->dataset->meta(), cfg.rename_map, s->device);
    } else {
      PolicyBuildOptions opts;
      opts.device = s->device;
      s->policy = make_policy(*cfg.policy, opts);
    }
    Stats stats = rename_stats(s->dataset->meta().stats, cfg.rename_map);  // LeRobot 0.6.2: stats under the policy's keys
    if (cfg.dataset.use_imagenet_stats) {
      std::vector<std::string> cameras;
      for (const auto& k : s->dataset->camera_keys()) cameras.push_back(rename_feature_key(k, cfg.rename_map));
      apply_imagenet_stats(stats, cameras);
    }
    // The device as config.json records it ("cuda", as LeRobot writes it; "cuda:1" when given so).
    s->processors = make_policy_processors(s->policy->config(), stats, cfg.policy->device.value_or(s->device.str()));
  }
  if (!cfg.peft.is_null()) {  // LeRobot's wrap_with_peft, or the adapters the checkpoint held
    if (resume_from) {  // load_pretrained built the base from adapter_config.json and loaded the adapters
      const Json ac = load_json_or_yaml(*resume_from / kPretrainedModelDir / "adapter_config.json");
      s->peft = lora::settings_from_adapter_config(ac);
      s->peft_base = ac.at("base_model_name_or_path").get<std::string>();
      if (s->is_main()) LOG_INFO << "PEFT adapter already loaded from checkpoint, skipping wrap_with_peft.";
    } else {
      const auto pc = lora::peft_config_from_json(cfg.peft);
      s->peft = lora::resolve_peft(*pc, cfg.policy->type(), cfg.policy->pretrained_path.has_value());
      const auto targets = lora::inject(*s->policy, *s->peft);
      lora::freeze_base(*s->policy, *s->peft);
      s->peft_base = *cfg.policy->pretrained_path;
      cfg.policy->use_peft = true;  // config.json and train_config.json record it, as LeRobot's
      if (s->is_main()) {
        int64_t trainable = 0, total = 0;
        for (const auto& p : s->policy->parameters()) {
          total += p.numel();
          if (p.requires_grad()) trainable += p.numel();
        }
        LOG_INFO << "Using PEFT! LoRA r=" << s->peft->r << " alpha=" << s->peft->lora_alpha << " on " << targets.size()
                 << " modules; trainable " << trainable << " of " << total << " parameters";
      }
    }
  }
  check_normalization_stats(s->processors, s->policy->config(),
                            resume_from ? *resume_from / kPretrainedModelDir / s->processors.normalizer_state_file()
                                        : s->dataset->root() / (s->dataset->meta().stats_file.empty()
                                                                    ? fs::path("meta/stats.json")
                                                                    : s->dataset->meta().stats_file),
                            resume_from.has_value());
  s->processors.rename_map = cfg.rename_map;
  s->processors.normalizer.to(s->device);

  if (cfg.cuda.channels_last_enabled(s->device.is_cuda(), cfg.accelerator.mixed_precision)) {  // before the optimizer: its state takes the parameters' layout
    const int64_t n = use_channels_last(*s->policy);
    if (s->is_main()) LOG_INFO << "Channels-last memory format for " << n << " convolution weights";
  }

  // --accelerator.activation_checkpointing.mode=full: every unit the policy declares is recomputed
  // in backward (after LoRA, which replaces layers' insides but not the layers).
  s->checkpoint_runner =
      activation_checkpointing_runner(*s->policy, cfg.accelerator.activation_checkpointing.mode, cfg.policy->type());
  if (s->checkpoint_runner && s->is_main())
    LOG_INFO << "Activation checkpointing: " << s->policy->units().size() << " units recomputed in backward";

  // Optimizer and scheduler: the policy's preset unless disabled (never recomputed on resume).
  if (cfg.use_policy_training_preset && !resume_from) apply_policy_preset(cfg);
  if (!cfg.optimizer) throw_usage("no optimizer", "--optimizer.type", "pass --optimizer.type=adamw or keep the policy preset");
  // A resumed run takes use_policy_training_preset from its checkpoint.
  const std::vector<PolicyParamGroup> groups = training_param_groups(cfg, *s->policy);
  // --parallelism.dp_shard > 1: parameters, gradients and optimizer state sharded by unit over the
  // processes (sharded_training.h); the optimizer steps the shards. The shards are cut from rank
  // 0's parameters.
  if (const int64_t dp_shard = resolve_dp_shard(cfg.parallelism, s->group->world_size()); dp_shard > 1) {
    refuse_with_sharding(cfg);
    broadcast_parameters(*s->policy, *s->group);
    s->sharded = std::make_unique<ShardedTraining>(*s->policy, groups, cfg.accelerator.fsdp, s->group, dp_shard,
                                                   s->checkpoint_runner.get());
    if (s->is_main()) LOG_INFO << s->sharded->report();
    // A step that cannot fit the GPU even before its activations stops here, naming the cause.
    if (const auto device_bytes = device_total_bytes(s->device)) s->sharded->check_fits(*device_bytes);
  }
  s->optimizer = make_optimizer(*cfg.optimizer, s->sharded ? s->sharded->optimizer_groups() : to_param_groups(groups),
                                parse_optimizer_impl(cfg.optimizer_impl));
  s->scheduler = make_scheduler(cfg.scheduler.ptr(), *s->optimizer, cfg.steps);
  if (cfg.accelerator.mixed_precision == "fp16") {
    LossScalerOptions so;
    so.init_scale = cfg.accelerator.loss_scale_init;
    s->scaler = std::make_unique<LossScaler>(so);
    // A sharded run's processes unscale different shards: an overflow anywhere skips the step
    // everywhere, and the scales stay equal.
    if (s->sharded)
      s->scaler->set_found_inf_reduction([group = s->group](bool found) {
        torch::Tensor t = torch::tensor({found ? 1.0f : 0.0f}).to(group->device());
        group->all_reduce(t, ReduceOp::kSum);
        return t.item<float>() > 0;
      });
  }

  // Replicas start identical: rank 0's parameters and buffers everywhere.
  // A real process group (also a one-process NCCL one) gets the bucketed reducer.
  if (s->group->backend() != "single") {
    if (!s->sharded) broadcast_parameters(*s->policy, *s->group);
    // Statistics a policy keeps outside its gradients (VQ-BeT's codebooks) are summed over the
    // replicas, as LeRobot's are under torch.distributed.
    s->policy->set_replica_sum([group = s->group](torch::Tensor& t) { group->all_reduce(t); });
    GradReducerOptions ro;
    ro.bucket_cap_bytes = static_cast<int64_t>(cfg.distributed.bucket_mb * 1024 * 1024);
    ro.bf16_compress = cfg.distributed.bf16_compress;
    ro.rebuild_buckets = cfg.distributed.rebuild_buckets;
    if (s->sharded) {
      // The shards' gradients are reduce-scattered by the sharded parameters themselves.
    } else if (cfg.distributed.reduce_gradients)
      s->reducer = std::make_unique<GradReducer>(*s->policy, s->group, ro);
    else if (s->is_main())
      LOG_WARNING << "--distributed.reduce_gradients=false: gradients are NOT averaged over ranks; each replica "
                     "trains on its own batches (a test/diagnostic switch)";
  }
  s->cfg = std::move(cfg);
  if (s->cfg.save_checkpoint_to_hub && s->is_main()) {  // the token and repo were checked before this
    if (!s->cfg.save_checkpoint)
      LOG_WARNING << "--save_checkpoint_to_hub=true with --save_checkpoint=false: no checkpoint is written, so none is pushed";
    s->uploader = std::make_unique<hub::CheckpointUploader>(hub::HubClient(hub::HubEnv::from_environment()),
                                                            *s->cfg.policy->repo_id, s->cfg.policy->private_);
  }
  if (s->cfg.ema.enable && s->is_main()) {  // from the weights the run starts with (resume: reloaded below)
    s->ema = std::make_unique<EmaModel>(s->policy->parameters(), EmaSchedule::from_config(s->cfg.ema));
    const auto& e = s->cfg.ema;
    if (e.decay)
      LOG_INFO << "EMA enabled: decay=" << *e.decay << " (constant), update_after_step=" << e.update_after_step
               << ", use_for_eval=" << (e.use_for_eval ? "true" : "false");
    else
      LOG_INFO << "EMA enabled: max_decay=" << e.max_decay << ", inv_gamma=" << e.inv_gamma << ", power=" << e.power
               << ", update_after_step=" << e.update_after_step << ", use_for_eval=" << (e.use_for_eval ? "true" : "false");
  }
  if (resume_from) {
    if (s->is_main()) remove_stale_checkpoint_temps(s->output_dir);  // rank 0 writes checkpoints, rank 0 cleans up
    s->start_step = load_training_state(*s, *resume_from);
    check_resume_position(s->output_dir, *resume_from, s->start_step, s->cfg.steps);
    // A policy that changes phase after a number of forwards (VQ-BeT) continues its count; LeRobot
    // restarts VQ-BeT's from 0, so a run resumed during phase 1 trained its VQ-VAE longer there.
    s->policy->set_training_progress(s->start_step);
    LOG_INFO << "Resuming from " << resume_from->string() << " at step " << s->start_step;
  }

  // The loader is positioned at start_step (sampler state from the step, LeRobot §1.7).
  DataLoaderOptions lo;
  lo.batch_size = s->cfg.batch_size;
  lo.num_workers = static_cast<int>(s->cfg.num_workers);
  lo.prefetch_factor = static_cast<int>(s->cfg.prefetch_factor);
  lo.world_size = s->group->world_size();
  lo.rank = s->group->rank();
  lo.start_step = s->start_step;
  lo.start_batch_size = s->resumed_batch_size;
  lo.start_world_size = s->resumed_world_size;
  lo.seed = static_cast<uint64_t>(s->seed);
  lo.drop_n_last_frames = s->cfg.policy->drop_n_last_frames();
  if (s->cfg.dataset.image_transforms.enable) {  // training augmentation (checked in validate())
    lo.image_transforms = std::make_shared<const ImageTransforms>(s->cfg.dataset.image_transforms);
    if (s->is_main())
      LOG_INFO << "Image augmentation on: up to " << s->cfg.dataset.image_transforms.max_num_transforms << " of ["
               << join(lo.image_transforms->names(), ", ") << "] per camera and sample"
               << (s->cfg.dataset.image_transforms.random_order ? ", in random order" : "");
    const auto float_only = lo.image_transforms->float_only_names();
    if (s->is_main() && !float_only.empty() && !s->dataset->video_keys().empty())
      LOG_WARNING << "Image augmentation: [" << join(float_only, ", ") << "] leave the video cameras ["
               << join(s->dataset->video_keys(), ", ")
               << "] unchanged: LeRobot augments video frames as uint8 and these transforms apply to float images only "
                  "(image cameras get them)";
  }
  s->loader = std::make_unique<DataLoader>(s->dataset, lo);
  return s;
}

}  // namespace lerobot
