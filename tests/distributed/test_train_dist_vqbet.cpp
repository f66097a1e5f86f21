// VQ-BeT's codebooks across processes: their EMA statistics are summed over the replicas (as
// LeRobot's VectorQuantize does under torch.distributed), so 2 processes at batch 4 end phase 1
// with the codebooks of 1 process at batch 8. Without the sum each rank's cluster sizes would hold
// only its own half of the counts.
#include "train_dist_util.h"

using namespace lerobot_test;

namespace {
// Phase 1 only (the VQ-VAE), plain SGD as in equivalence_flags: the update is linear in the gradient.
std::string vqbet_flags(const std::string& dataset) {
  return " --policy.type=vqbet --dataset.root=" + dataset +
         " --policy.n_obs_steps=2 --policy.n_action_pred_token=2 --policy.action_chunk_size=3"
         " --policy.crop_shape=[56,56] --policy.n_vqvae_training_steps=100 --policy.vqvae_n_embed=8"
         " --policy.vqvae_embedding_dim=16 --policy.vqvae_enc_hidden_dim=32 --policy.gpt_n_layer=1"
         " --policy.gpt_hidden_dim=32 --policy.gpt_input_dim=32 --policy.gpt_output_dim=32 --policy.gpt_n_head=2"
         " --policy.pretrained_backbone_weights=null --use_policy_training_preset=false --optimizer.type=sgd"
         " --optimizer.lr=1e-3 --optimizer.weight_decay=0 --optimizer.grad_clip_norm=10 --seed=7 --num_workers=0"
         " --log_freq=10 --policy.device=cpu --steps=4";
}

std::string train_vqbet(const std::string& dir, const std::string& name, const std::string& dataset, const std::string& flags) {
  const std::string out = dir + "/" + name;
  auto r = run_command("timeout -k 5 240 " + cli() + " train" + vqbet_flags(dataset) + flags + " --output_dir=" + out);
  EXPECT_EQ(r.code, 0) << name << ":\n" << r.out;
  return out;
}
}  // namespace

TEST(TrainDataParallel, VQBeTCodebooksOfTwoProcessesMatchOneBigBatch) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const Params one = load_params(final_model(train_vqbet(dir.path, "one", ds, " --batch_size=8")));
  const Params two = load_params(final_model(train_vqbet(dir.path, "two", ds, " --batch_size=4 --num_processes=2")));
  ASSERT_FALSE(one.empty() || two.empty());
  for (int q = 0; q < 2; ++q) {
    const std::string p = "vqbet.action_head.vqvae_model.vq_layer.layers." + std::to_string(q) + "._codebook.";
    const auto& c1 = one.at(p + "cluster_size");
    const auto& c2 = two.at(p + "cluster_size");
    // 4 steps of 8 windows × (n_obs + n_pred + chunk - 2 - chunk + 1 = 3) chunks: the EMA of
    // 24 assignments per step. Equal counts everywhere, not half of them.
    EXPECT_NEAR(c1.sum().item<double>(), c2.sum().item<double>(), 1e-4) << p << "cluster_size total";
    EXPECT_GT(c1.sum().item<double>(), 10.0) << p << "the codebook saw the batches";
    EXPECT_TRUE(torch::allclose(c1, c2, 1e-4, 1e-4)) << p << "cluster_size\n" << c1 << "\n" << c2;
    EXPECT_TRUE(torch::allclose(one.at(p + "embed"), two.at(p + "embed"), 1e-3, 1e-4)) << p << "embed";
  }
  const std::string enc = "vqbet.action_head.vqvae_model.encoder.0.weight";
  EXPECT_TRUE(torch::allclose(one.at(enc), two.at(enc), 1e-4, 1e-6)) << "the VQ-VAE's gradients are averaged";
}
