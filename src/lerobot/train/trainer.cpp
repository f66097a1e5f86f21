// The training loop. One iteration: next batch -> prepare -> update (forward, backward with
// gradient all-reduce overlapped, clip, optimizer and scheduler step) -> metrics -> log ->
// held-out loss -> checkpoint (pushed to the Hub on its own thread with --save_checkpoint_to_hub) ->
// evaluation; then publishing (--policy.push_to_hub). Building the
// pieces is in train_setup.cpp, one update in update_step.cpp (captured as a CUDA graph where safe:
// step_capture.cpp), checkpoint contents in
// train_checkpoint.cpp, publishing in hub_publish.cpp.
#include "lerobot/train/trainer.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/timer.h"
#include "lerobot/train/batch_prep.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/hub_publish.h"
#include "lerobot/train/step_capture.h"
#include "lerobot/train/metrics/metrics_tracker.h"
#include "lerobot/train/metrics/wandb_sidecar.h"
#include "lerobot/train/train_checkpoint.h"
#include "lerobot/train/train_logging.h"
#include "lerobot/train/train_setup.h"
#include "lerobot/train/update_step.h"

namespace lerobot {

TrainResult train(TrainPipelineConfig cfg, const LaunchEnv& launch) {
  // A missing wandb package or login fails here, before the dataset and model are even loaded.
  if (cfg.wandb.enable && !cfg.wandb.project.empty() && launch.rank == 0) check_wandb_ready(cfg.wandb);
  const std::optional<fs::path> resume_from =
      cfg.resume ? std::optional<fs::path>(resolve_checkpoint_dir(cfg.checkpoint_path.value_or(""))) : std::nullopt;
  auto run = make_train_setup(std::move(cfg), launch, resume_from);
  TrainSetup& s = *run;
  TrainLogger logger(s);
  const UpdateStepParts parts = update_step_parts(s);
  UpdateStep update(parts);
  CapturedUpdateStep steps(update, parts,
                           plan_step_capture(step_capture_facts(parts, update, s.cfg.cuda.graphs, s.world_size())));

  int64_t step = s.start_step;
  torch::Tensor last_loss;  // on the device: read once, at the end
  s.policy->train();
  logger.banner();
  if (s.device.is_cuda() && s.is_main())
    LOG_INFO << "CUDA graphs: " << (steps.plan().capture ? "on (the step is captured after 3 warm-up steps)"
                                                         : "off: " + steps.plan().why_not);
  while (step < s.cfg.steps) {
    Stopwatch step_timer;
    DataBatch raw = s.loader->next();                                   // data_s
    const double data_s = step_timer.seconds();
    Batch batch = prepare_batch(raw.tensors, s.processors, s.device, raw.tasks);  // prep_s
    const double prep_s = step_timer.seconds() - data_s;
    const UpdateResult u = steps.run(batch, step);                     // updt_s (a graph replay once captured)
    if (s.ema && u.synced) s.ema->step(s.policy->parameters());        // optimizer steps, not micro-batches
    ++step;
    last_loss = u.loss;
    logger.record(u, data_s, prep_s, step_timer.seconds());

    const bool save = s.cfg.save_checkpoint &&
                      ((s.cfg.save_freq > 0 && step % s.cfg.save_freq == 0) || step == s.cfg.steps);
    if (s.cfg.log_freq > 0 && step % s.cfg.log_freq == 0) {
      // The first read of the device in the window: it waits for the steps still queued there, and
      // that wait belongs to the window's step times (a graph replay returns before it runs).
      Stopwatch catching_up;
      update.check_nonfinite(step);  // non-finite steps skipped on the device, counted there
      logger.log(step, catching_up.seconds());  // collective
    } else if (save || step == s.cfg.steps) {
      update.check_nonfinite(step);  // also with --log_freq=0: no checkpoint of a diverged run
    }
    // The held-out loss: a sharded run gathers unit by unit, as in the step (collective).
    if (s.heldout && s.cfg.eval_steps > 0 && step % s.cfg.eval_steps == 0) logger.heldout(step);
    if (save) save_train_checkpoint(s, step);  // collective (a sharded run gathers unit by unit)
    // The env's rollouts (rank 0 only) see the whole model: a sharded run gathers it for the while.
    if (s.cfg.env && s.cfg.env_eval_freq > 0 && step % s.cfg.env_eval_freq == 0) {
      FullParametersScope whole(s.sharded.get());
      std::optional<EmaWeightsScope> ema_weights;  // --ema.use_for_eval: evaluate the averaged weights
      if (s.ema && s.cfg.ema.use_for_eval) ema_weights.emplace(*s.ema, s.policy->parameters());
      logger.evaluate(step);
    }
  }
  s.group->barrier();
  if (s.sharded) {
    if (s.is_main()) LOG_INFO << s.sharded->traffic_report();
    s.sharded->params().gather_all();  // the trained model whole on every rank (publishing reads it)
  }
  logger.finish(step);
  // --save_checkpoint_to_hub: the checkpoints still going up; a failed one fails the run at the end.
  const std::string not_pushed = s.uploader ? s.uploader->finish() : "";
  // --policy.push_to_hub (checked before the first step): the other ranks are done and exit.
  if (s.cfg.policy->push_to_hub && s.is_main()) publish_trained_policy(s);
  if (!not_pushed.empty())
    throw_runtime(not_pushed, "--save_checkpoint_to_hub",
                  "training finished and every checkpoint is saved under " + (s.output_dir / kCheckpointsDir).string() +
                      "; upload the missing ones with `hf upload " + *s.cfg.policy->repo_id +
                      " <checkpoint dir> checkpoints/<step>`");
  TrainResult result;
  result.final_step = step;
  result.output_dir = s.output_dir;
  result.last_loss = last_loss.defined() ? last_loss.item<double>() : 0.0;
  result.device = s.device.str();
  for (const auto& p : s.policy->parameters()) {
    const c10::ScalarType t = p.scalar_type();
    const std::string dtype = t == torch::kFloat      ? "float32"
                              : t == torch::kBFloat16 ? "bfloat16"
                              : t == torch::kHalf     ? "float16"
                              : t == torch::kDouble   ? "float64"
                                                      : std::string(c10::toString(t));
    auto& count = (p.requires_grad() ? result.learnable_by_dtype : result.frozen_by_dtype)[dtype];
    count.numel += p.numel();
    count.bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (p.requires_grad()) result.num_learnable_params += p.numel();
  }
  return result;
}

}  // namespace lerobot
