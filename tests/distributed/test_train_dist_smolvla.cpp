// SmolVLA across processes (Gloo, 2 ranks): with load_vlm_weights its backbone and expert are
// bfloat16, which LibTorch 1.13's Gloo can neither broadcast nor sum; they travel as float32. The
// run must train, from the same start on both ranks. (Its flow-matching noise is drawn per rank,
// so 2 x 4 does not reproduce 1 x 8 the way a noise-free step does.)
#include "train_dist_util.h"

using namespace lerobot_test;

namespace {
std::string smolvla_flags(const std::string& dataset) {
  return " --policy.type=smolvla --dataset.root=" + dataset + " --policy.vlm_model_name=" LEROBOT_SOURCE_DIR
         "/tests/policies/data/smolvla_tiny_vlm --policy.num_vlm_layers=4 --policy.chunk_size=4"
         " --policy.n_action_steps=4 --policy.max_state_dim=8 --policy.max_action_dim=8"
         " --policy.resize_imgs_with_padding=[32,32] --seed=7 --num_workers=0 --log_freq=1 --policy.device=cpu"
         " --steps=3 --save_freq=3 --batch_size=4 --num_processes=2";
}
}  // namespace

TEST(TrainDataParallel, SmolVLAWithABfloat16BackboneTrainsOnTwoProcesses) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  for (const std::string weights : {"false", "true"}) {
    const std::string out = dir.path + "/svla_" + weights;
    auto r = run_command("timeout -k 5 240 " + cli() + " train" + smolvla_flags(ds) +
                         " --policy.load_vlm_weights=" + weights + " --output_dir=" + out);
    ASSERT_EQ(r.code, 0) << "load_vlm_weights=" << weights << ":\n" << r.out;
    EXPECT_NE(r.out.find("step:3"), std::string::npos) << r.out;
    const Params p = load_params(final_model(out));
    const auto& w = p.at("model.vlm_with_expert.lm_expert.layers.0.mlp.down_proj.weight");
    EXPECT_EQ(w.scalar_type(), weights == "true" ? torch::kBFloat16 : torch::kFloat);
    EXPECT_TRUE(torch::isfinite(w.to(torch::kFloat)).all().item<bool>());
  }
}
