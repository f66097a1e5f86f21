// In-training evaluation (see train_eval.h): LeRobot's eval_policy on rank 0 with the live policy.
#include "lerobot/train/train_eval.h"

#include <algorithm>

#include "lerobot/common/logging.h"
#include "lerobot/eval/eval_config.h"
#include "lerobot/eval/evaluate.h"
#include "lerobot/train/autocast.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/train_setup.h"

namespace lerobot {

Json run_training_eval(TrainSetup& s, int64_t step) {
  const int64_t n = s.cfg.eval.n_episodes;
  const int64_t batch = eval_batch_size(n, s.cfg.eval.batch_size);
  const fs::path videos = s.output_dir / "eval" / ("videos_step_" + checkpoint_step_id(step, s.cfg.steps));
  EvalResult r;
  {
    // As LeRobot's accelerator.autocast() around eval_policy_all: the rollouts' policy calls (on
    // this thread) run in the training's mixed precision.
    AutocastScope autocast(s.cfg.accelerator.mixed_precision, s.device);
    r = evaluate_policy(*s.policy, s.processors, *s.cfg.env, n, batch, s.seed, videos, 4, /*blank_images=*/false,
                        s.cfg.cuda.graphs, s.cfg.eval.use_async_envs);
  }
  s.policy->train();
  LOG_INFO << "eval step " << step << ": pc_success " << r.pc_success << "% over " << r.n_episodes
           << " episodes (avg_sum_reward " << r.avg_sum_reward << ", eval_s " << r.eval_s << ")";
  return Json{{"pc_success", r.pc_success}, {"avg_sum_reward", r.avg_sum_reward},
              {"avg_max_reward", r.avg_max_reward}, {"eval_s", r.eval_s}, {"n_episodes", r.n_episodes},
              {"video_paths", r.video_paths}};  // the W&B sidecar logs the first as eval/video
}

}  // namespace lerobot
