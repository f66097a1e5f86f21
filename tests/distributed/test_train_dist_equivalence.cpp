// Data-parallel training equals one big batch: 20 ACT updates (plain SGD, see equivalence_flags)
// of (a) 1 process at batch 8,
// (b) 2 processes at batch 4 (built-in launcher, Gloo on 127.0.0.1) and (c) 1 process at batch 4
// with 2 accumulation steps give the same parameter update Δθ; with the gradient all-reduce
// switched off (b) drifts far away, so the comparison can fail.
#include "train_dist_util.h"

using namespace lerobot_test;

namespace {
constexpr double kTolerance = 1e-3;

std::string train(const std::string& dir, const std::string& name, const std::string& dataset,
                  const std::string& flags) {
  const std::string out = dir + "/" + name;
  auto r = run_command("timeout -k 5 180 " + cli() + " train" + equivalence_flags(dataset) + flags + " --output_dir=" + out);
  EXPECT_EQ(r.code, 0) << name << ":\n" << r.out;
  return out;
}
}  // namespace

TEST(TrainDataParallel, TwoProcessesAndAccumulationMatchOneBigBatch) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const Params init = initial_params(dir.path, ds);
  ASSERT_FALSE(init.empty());

  // (a) 20 updates of 8 samples: sampler positions [8k, 8k+8) in update k.
  const Params a = load_params(final_model(train(dir.path, "a", ds, " --batch_size=8 --steps=20")));
  // (b) round-robin sharding: rank 0 gets positions [8k, 8k+4), rank 1 [8k+4, 8k+8).
  const std::string b_dir = train(dir.path, "b", ds, " --batch_size=4 --steps=20 --num_processes=2");
  const Params b = load_params(final_model(b_dir));
  // (c) 40 micro-batches of 4, an update every 2: the same 8 samples per update.
  const Params c = load_params(final_model(
      train(dir.path, "c", ds, " --batch_size=4 --steps=40 --accelerator.gradient_accumulation.steps=2")));
  // (d) as (b) without the all-reduce: rank 0's model saw only its own half of each batch.
  const Params d = load_params(final_model(
      train(dir.path, "d", ds, " --batch_size=4 --steps=20 --num_processes=2 --distributed.reduce_gradients=false")));
  ASSERT_FALSE(a.empty() || b.empty() || c.empty() || d.empty());

  // The runs really trained, and from the same start.
  double moved = 0;
  for (const auto& [k, t] : init) moved += (a.at(k) - t).abs().sum().item<double>();
  EXPECT_GT(moved, 0.0) << "run (a) did not change the parameters";

  const double ab = relative_update_diff(init, a, b);
  const double ac = relative_update_diff(init, a, c);
  const double ad = relative_update_diff(init, a, d);
  std::printf("relative update difference: 2 processes %.3g, accumulation %.3g, 2 processes without "
              "all-reduce %.3g\n", ab, ac, ad);
  EXPECT_LE(ab, kTolerance) << "2 processes x batch 4 differ from 1 process x batch 8";
  EXPECT_LE(ac, kTolerance) << "batch 4 x 2 accumulation steps differs from batch 8";
  EXPECT_GT(ad, 10 * kTolerance) << "without the gradient all-reduce the runs should disagree";

  // The 2-process checkpoint records its world size.
  const std::string step_info = read_text(b_dir + "/checkpoints/last/training_state/training_step.json");
  EXPECT_NE(step_info.find("\"dp_world_size\": 2"), std::string::npos) << step_info;
}
