// Shared helpers for the policy tests (see policy_test_helpers.h).
#include "policy_test_helpers.h"

#include <atomic>
#include <filesystem>

#include <unistd.h>
#include "support/process_temp_dir.h"

namespace lerobot::testing {

ACTConfig small_act_config(int cameras, int64_t img) {
  ACTConfig c;
  c.input_features["observation.state"] = {"STATE", {6}};
  for (int i = 0; i < cameras; ++i)
    c.input_features["observation.images.cam" + std::to_string(i)] = {"VISUAL", {3, img, img}};
  c.output_features["action"] = {"ACTION", {6}};
  c.dim_model = 64;
  c.dim_feedforward = 128;
  c.n_heads = 4;
  c.n_encoder_layers = 2;
  c.n_decoder_layers = 1;
  c.n_vae_encoder_layers = 2;
  c.latent_dim = 8;
  c.chunk_size = 10;
  c.n_action_steps = 10;
  c.pretrained_backbone_weights = std::nullopt;
  return c;
}

Batch random_act_batch(const ACTConfig& cfg, int64_t b, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  Batch batch;
  for (const auto& kv : cfg.input_features) {
    std::vector<int64_t> shape = {b};
    shape.insert(shape.end(), kv.second.shape.begin(), kv.second.shape.end());
    batch[kv.first] = kv.second.type == "VISUAL" ? torch::rand(shape, gen) : torch::randn(shape, gen);
  }
  batch["action"] = torch::randn({b, cfg.chunk_size, cfg.output_features.at("action").shape[0]}, gen);
  batch["action_is_pad"] = torch::zeros({b, cfg.chunk_size}, torch::kBool);
  return batch;
}

DiffusionConfig small_diffusion_config() {
  DiffusionConfig c;
  c.input_features["observation.state"] = {"STATE", {2}};
  c.input_features["observation.images.top"] = {"VISUAL", {3, 32, 32}};
  c.output_features["action"] = {"ACTION", {2}};
  c.pretrained_backbone_weights = std::nullopt;
  c.horizon = 8;
  c.n_action_steps = 4;
  c.down_dims = {32, 64};
  c.kernel_size = 3;
  c.diffusion_step_embed_dim = 16;
  c.spatial_softmax_num_keypoints = 8;
  return c;
}

Batch random_diffusion_batch(const DiffusionConfig& c, int64_t b, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  Batch batch;
  batch["observation.state"] = torch::rand({b, c.n_obs_steps, 2}, gen) * 2 - 1;
  batch["observation.images.top"] = torch::rand({b, c.n_obs_steps, 3, 32, 32}, gen);
  batch["action"] = torch::rand({b, c.horizon, 2}, gen) * 2 - 1;
  batch["action_is_pad"] = torch::zeros({b, c.horizon}, torch::kBool);
  return batch;
}

std::string make_temp_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  return fresh_temp_dir("policies_" + tag + "_" + std::to_string(counter++)).string();
}

torch::Tensor reference_formula(int64_t n, int64_t k, double scale) {
  auto i = torch::arange(n, torch::kFloat64);
  return (i * 0.7 + (0.3 * static_cast<double>(k) + 0.1)).sin().mul(scale).to(torch::kFloat);
}

}  // namespace lerobot::testing
