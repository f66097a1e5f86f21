// Training-loop reporting (see train_logging.h).
#include "lerobot/train/train_logging.h"

#include <iomanip>
#include <sstream>

#include "lerobot/common/device.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/timer.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/train/metrics/train_warnings.h"
#include "lerobot/train/metrics/wandb_run.h"
#include "lerobot/train/rng_state.h"
#include "lerobot/train/sharded_training.h"
#include "lerobot/train/train_eval.h"
#include "lerobot/train/train_setup.h"

namespace lerobot {
namespace {

constexpr const char* kOutputPrefix = "output/";  // device sums of the policy's named outputs
constexpr const char* kSkippedKey = "skipped";     // steps the optimizer skipped on the device
constexpr double kWandBFinishTimeoutS = 300.0;      // after the last step: the sidecar's final upload

ReduceOp to_op(ReduceKind kind) {
  return kind == ReduceKind::kMax ? ReduceOp::kMax : kind == ReduceKind::kSum ? ReduceOp::kSum : ReduceOp::kAvg;
}

int64_t count_params(torch::nn::Module& m, bool trainable_only) {
  int64_t n = 0;
  for (const auto& p : m.parameters())
    if (!trainable_only || p.requires_grad()) n += p.numel();
  return n;
}

}  // namespace

TrainLogger::TrainLogger(TrainSetup& s)
    : s_(s),
      tracker_(s.cfg.batch_size, s.dataset->num_frames(), s.dataset->num_episodes(), s.start_step, s.world_size()) {
  add_default_train_meters(tracker_, s.device.is_cuda());
  if (s.is_main()) {
    if (s.cfg.resume)
      if (const int64_t n = drop_records_after_step(s.output_dir / kMetricsJsonl, s.start_step))
        LOG_INFO << "Dropped " << n << " line(s) after step " << s.start_step << " from " << kMetricsJsonl
                 << ": they are logged again from the checkpoint";
    jsonl_ = std::make_unique<JsonlSink>(s.output_dir / kMetricsJsonl, /*append=*/s.cfg.resume);
    tensorboard_ = std::make_unique<TensorBoardWriter>(s.output_dir / kTensorBoardDir);
    progress_ = std::make_unique<ProgressBar>(s.cfg.steps, s.start_step);
    if (s.cfg.wandb.enable && !s.cfg.wandb.project.empty()) start_wandb();
  }
}

void TrainLogger::start_wandb() {
  // The run id goes into the config before it is first written (banner, checkpoints), so a
  // --resume=true of any checkpoint continues this W&B run.
  const std::string resume = assign_wandb_run_id(s_.cfg, s_.output_dir);
  const fs::path spec = s_.output_dir / "wandb" / "lerobot_cpp_run.json";
  fs::create_directories(spec.parent_path());
  write_file_atomic(spec, dump_pretty(wandb_sidecar_spec(s_.cfg, resume, s_.output_dir, jsonl_->path())));
  wandb_ = std::make_unique<WandBSidecar>(spec);
  LOG_INFO << "W&B: run " << *s_.cfg.wandb.run_id << " in project " << s_.cfg.wandb.project << " ("
           << wandb_mode(s_.cfg.wandb) << (resume.empty() ? ")" : ", resumed)");
}

TrainLogger::~TrainLogger() = default;

void TrainLogger::banner() {
  if (!s_.is_main()) return;
  const int64_t accum = s_.cfg.accelerator.gradient_accumulation.steps;
  LOG_INFO << "Output dir: " << s_.output_dir.string();
  LOG_INFO << "Metrics: " << (s_.output_dir / kMetricsJsonl).string() << " (JSON lines) and TensorBoard events in "
           << (s_.output_dir / kTensorBoardDir).string() << " (tensorboard --logdir=" << s_.output_dir.string() << ")";
  // The resolved configuration (LeRobot logs it too), also kept beside the logs from the start.
  write_train_config(s_.cfg, s_.output_dir);
  LOG_INFO << "Config (" << (s_.output_dir / "train_config.json").string() << "):\n" << dump_pretty(to_json(s_.cfg), 2);
  LOG_INFO << "Dataset: " << s_.dataset->root().string() << " (" << s_.dataset->num_frames() << " frames, "
           << s_.dataset->num_episodes() << " episodes)";
  LOG_INFO << "Policy: " << s_.cfg.policy->type() << ", " << format_big_number(count_params(*s_.policy, true))
           << " learnable params (" << format_big_number(count_params(*s_.policy, false)) << " total) on "
           << s_.device.str();
  LOG_INFO << "Processes: " << s_.world_size() << " (" << s_.group->backend() << "), batch " << s_.cfg.batch_size
           << " per process, accumulation " << accum << ": effective batch "
           << s_.cfg.batch_size * s_.world_size() * accum << " (the learning rate is not scaled)";
  if (accum > 1 && s_.cfg.save_checkpoint && s_.cfg.save_freq > 0 && s_.cfg.save_freq % accum != 0)
    LOG_WARNING << "--save_freq=" << s_.cfg.save_freq << " is not a multiple of --accelerator.gradient_accumulation.steps="
                << accum << ": checkpoints fall inside an accumulation, whose gradients they do not keep, so a run "
                << "resumed from one is not exact (use a multiple, e.g. --save_freq="
                << (s_.cfg.save_freq + accum - 1) / accum * accum << ")";
  LOG_INFO << "Optimizer: " << optimizer_kind_name(optimizer_kind(*s_.optimizer)) << ", "
           << optimizer_impl_name(optimizer_impl_of(*s_.optimizer)) << " step";
  LOG_INFO << "Mixed precision: " << s_.cfg.accelerator.mixed_precision
           << ", steps: " << s_.cfg.steps << " starting at " << s_.start_step;
  if (s_.cfg.accelerator.mixed_precision == "fp16" && !s_.device.is_cuda())
    LOG_WARNING << "fp16 autocast needs CUDA: on CPU the forward pass stays fp32 while dynamic loss scaling runs";
  if (auto w = schedule_horizon_warning(s_.cfg.scheduler.ptr(), s_.cfg.steps)) LOG_WARNING << *w;
  if (auto w = s_.cfg.policy->training_length_warning(s_.cfg.steps)) LOG_WARNING << *w;
}

void TrainLogger::record(const UpdateResult& u, double data_s, double prep_s, double step_s) {
  // The loss, its parts and the grad norm stay on the device until the log line (read_sums).
  device_sums_.add("loss", u.loss);
  device_sums_.add("grad_norm", u.grad_norm);
  for (const auto& [k, v] : u.values) device_sums_.add(kOutputPrefix + k, v);
  device_sums_.add(kSkippedKey, u.skipped_on_device);
  if (u.skipped && *u.skipped) ++skipped_;
  tracker_.update("lr", u.lr);
  tracker_.update("update_s", u.update_s);
  tracker_.update("dataloading_s", data_s);
  tracker_.update("preprocessing_s", prep_s);
  tracker_.update("step_s", step_s);
  if (const auto peak = device_memory_peak(s_.device)) tracker_.update("gpu_mem_gb", peak->allocated_gb);
  tracker_.step();
  if (progress_) progress_->update(tracker_.steps());
}

void TrainLogger::read_sums() {
  for (const auto& [key, sum_count] : device_sums_.take()) {
    const auto [sum, count] = sum_count;
    if (key == kSkippedKey) skipped_ += static_cast<int64_t>(sum);
    else if (key.rfind(kOutputPrefix, 0) == 0)
      tracker_.update_output(key.substr(std::string(kOutputPrefix).size()), sum / count, count);
    else tracker_.update(key, sum / count, count);
  }
}

void TrainLogger::log(int64_t step, double caught_up_s) {
  // The steps' own timers see the host only: on a GPU they return once their kernels (or the graph
  // replay) are queued. Reading the window's device sums waits for the device to finish them; that
  // wait is the window's too, so update_s and step_s (and samples/s) are wall-clock figures as
  // LeRobot's, whose update reads the loss every step.
  Stopwatch catching_up;
  read_sums();
  const double wait_s = caught_up_s + catching_up.seconds();
  tracker_.meter("update_s").spread(wait_s);
  tracker_.meter("step_s").spread(wait_s);
  tracker_.reduce_across_ranks([this](std::vector<float>& values, ReduceKind kind) {
    if (values.empty() || kind == ReduceKind::kNone || s_.world_size() == 1) return;
    auto t = torch::tensor(values, torch::kFloat32).to(s_.group->device());
    s_.group->all_reduce(t, to_op(kind));
    t = t.cpu();
    for (size_t i = 0; i < values.size(); ++i) values[i] = t[static_cast<int64_t>(i)].item<float>();
  });
  const double mean_step_s = tracker_.meter("step_s").avg;
  if (mean_step_s > 0) tracker_.update("samples_per_s", s_.cfg.batch_size * s_.world_size() / mean_step_s);
  if (s_.is_main()) {
    if (progress_) progress_->clear();
    std::string line = tracker_.to_string();
    if (skipped_ > 0) line += " skipped:" + std::to_string(skipped_);
    LOG_INFO << line;
    Json rec = metrics_record(tracker_);
    rec["skipped_steps"] = skipped_;
    jsonl_->write(rec);  // the W&B sidecar reads it from there
    if (wandb_) wandb_->alive();
    tensorboard_->add_scalars("train", tracker_.to_dict(), step);
    tensorboard_->flush();
    if (!warned_input_bound_) {
      if (auto w = input_bound_warning(tracker_.meter("dataloading_s").avg, tracker_.meter("update_s").avg)) {
        LOG_WARNING << *w;
        warned_input_bound_ = true;
      }
    }
    if (progress_) progress_->draw();
  }
  tracker_.reset_averages();
}

void TrainLogger::evaluate(int64_t step) {
  s_.group->barrier();
  if (s_.is_main()) {
    if (progress_) progress_->clear();
    RngFork keep_training_stream(s_.device);  // Diffusion's denoising draws noise
    const Json info = run_training_eval(s_, step);
    for (auto it = info.begin(); it != info.end(); ++it)
      if (it.value().is_number()) tensorboard_->add_scalar("eval/" + it.key(), it.value().get<double>(), step);
    Json rec = {{"step", step}, {"split", "eval"}};
    // LeRobot logs an eval tracker at this step with the evaluation (eval/steps, samples, episodes,
    // epochs): the training tracker's counts, which are those.
    const Json counts = tracker_.to_dict();
    for (const char* key : {"steps", "samples", "episodes", "epochs"})
      if (counts.contains(key)) rec[key] = counts[key];
    rec.update(info);
    jsonl_->write(rec);
  }
  s_.group->wait_for_rank0("the evaluation at step " + std::to_string(step));  // may outlast the collective timeout
}

void TrainLogger::heldout(int64_t step) {
  HeldOutLoss r;
  int64_t peak_gathered = 0;
  {
    RngFork keep_training_stream(s_.device);  // Diffusion's loss draws noise and timesteps
    // A sharded run gathers one unit at a time, as in the step (every rank runs as many forwards).
    UnitByUnitScope units(s_.sharded.get());
    r = compute_heldout_loss(*s_.policy, s_.processors, *s_.heldout, s_.cfg.batch_size, s_.device,
                             s_.cfg.accelerator.mixed_precision, s_.world_size() > 1 ? s_.group.get() : nullptr,
                             /*lockstep=*/s_.sharded != nullptr);
    peak_gathered = units.peak_gathered_bytes();
  }
  if (!s_.is_main()) return;
  if (progress_) progress_->clear();
  std::ostringstream line;
  line << "step " << step << ": eval_loss=" << std::fixed << std::setprecision(4) << r.loss << " (" << r.samples
       << " held-out frames in " << r.batches << " batches";
  if (s_.sharded)
    line << "; sharded: at most " << peak_gathered << " of the model's " << s_.sharded->params().memory().total_bytes
         << " bytes gathered at once";
  line << ")";
  LOG_INFO << line.str();
  jsonl_->write(Json{{"step", step}, {"split", "eval"}, {"eval_loss", r.loss}, {"eval_samples", r.samples},
                     {"eval_batches", r.batches}});
  tensorboard_->add_scalar("eval/eval_loss", r.loss, step);  // LeRobot logs it with mode="eval"
  tensorboard_->flush();
  if (progress_) progress_->draw();
}

void TrainLogger::finish(int64_t step) {
  read_sums();  // the steps after the last log line (their skipped count)
  if (!s_.is_main()) return;
  if (progress_) progress_->finish();
  if (tensorboard_) tensorboard_->flush();
  if (wandb_) wandb_->finish(kWandBFinishTimeoutS);
  if (skipped_ > 0) LOG_INFO << skipped_ << " optimizer steps were skipped (non-finite gradients)";
  if (s_.reducer && s_.reducer->timings().steps > 0) {
    // Rank 0's view of its gradient all-reduces (bench/train_scaling reads this line).
    const GradReducerTimings& t = s_.reducer->timings();
    LOG_INFO << "allreduce overlap: " << std::fixed << std::setprecision(1) << 100.0 * t.overlap_share()
             << "% of " << std::setprecision(3) << t.allreduce_s << " s all-reduce time overlapped backward; exposed wait "
             << t.wait_s << " s over " << t.steps << " synchronised steps (" << t.buckets << " buckets; sizes "
             << [&] {
                  std::ostringstream mb;
                  mb << std::setprecision(2);
                  for (int64_t b : s_.reducer->bucket_bytes()) mb << (mb.tellp() > 0 ? "/" : "") << b / 1048576.0;
                  return mb.str();
                }()
             << " MB)";
  }
}

}  // namespace lerobot
