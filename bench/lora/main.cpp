// LoRA (#41, LeRobot's --peft.* with each policy's default targets) against LeRobot's default
// fine-tune, for SmolVLA and π0.5:
//  1. at FULL size: parameters, trainable parameters and AdamW state bytes with and without the
//     adapters. SmolVLA is built whole on the CPU (random weights, ~450 M parameters) from the
//     SmolVLM2-500M config.json given by --smolvlm_config; π0.5's totals and its default trainable
//     set come from pi_sizing (no model built), its adapters from the real model built at full
//     widths with 1 and 2 layer pairs (1 vision layer, a 1024-token vocabulary) — every adapter is
//     per expert layer or outside the layers, so 18 pairs are those of 1 plus 17 times the
//     difference (printed beside what pi_sizing says for the same reduced model, as a check);
//  2. at a reduced size, on this machine's CPU: the time of one training step (forward, backward,
//     AdamW over what trains) with LeRobot's default trainable set and with LoRA on a frozen base,
//     the two interleaved step for step in one run; the ratio is the figure.
// usage: bench_lora --smolvlm_config=DIR [--steps=6] [--r=16] [--batch=2] [--threads=cores]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/pi/modeling_pi.h"
#include "lerobot/policies/pi/pi_sizing.h"
#include "lerobot/policies/smolvla/modeling_smolvla.h"
#include "lerobot/policies/vlm/vla_batch.h"

namespace lerobot {
namespace {

struct Counts {
  int64_t total = 0, trainable = 0, adapters = 0, targets = 0;
};

lora::LoraSettings default_settings(const std::string& type, int64_t r) {
  lora::PeftConfig c;
  c.r = r;  // LeRobot's PeftConfig default is 16; lora_alpha stays null (PEFT's 8)
  return lora::resolve_peft(c, type, /*has_pretrained_path=*/true);
}

int64_t numel(torch::nn::Module& m, bool trainable_only) {
  int64_t n = 0;
  for (const auto& p : m.parameters())
    if (!trainable_only || p.requires_grad()) n += p.numel();
  return n;
}

// Counts before and after adding the default adapters (which also freezes the base).
Counts count_with_lora(torch::nn::Module& policy, const std::string& type, int64_t r) {
  Counts c;
  c.total = numel(policy, false);
  c.trainable = numel(policy, true);
  const auto s = default_settings(type, r);
  c.targets = static_cast<int64_t>(lora::inject(policy, s).size());
  lora::freeze_base(policy, s);
  c.adapters = numel(policy, true);
  return c;
}

double mb(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

void write_smolvlm_config(const fs::path& dir, const Json& text, const Json& vision, int64_t scale_factor) {
  fs::create_directories(dir);
  Json j{{"model_type", "smolvlm"}, {"scale_factor", scale_factor}, {"text_config", text}, {"vision_config", vision}};
  std::ofstream(dir / "config.json") << j.dump(2);
}

SmolVLAConfig smolvla_config(int64_t image, int64_t vlm_layers) {
  SmolVLAConfig cfg;
  cfg.load_vlm_weights = false;
  cfg.num_vlm_layers = vlm_layers;
  cfg.resize_imgs_with_padding = {image, image};
  cfg.device = "cpu";
  cfg.input_features["observation.images.top"] = {"VISUAL", {3, image, image}};
  cfg.input_features["observation.state"] = {"STATE", {6}};
  cfg.output_features["action"] = {"ACTION", {6}};
  cfg.input_feature_order = {"observation.images.top", "observation.state"};
  return cfg;
}

// ---------------------------------------------------------------- full size
void full_size_smolvla(const fs::path& smolvlm_dir, int64_t r) {
  SmolVLAConfig cfg = smolvla_config(512, 16);  // LeRobot's defaults: 16 VLM layers, 512 px, expert 0.75x
  SmolVLAPolicy policy(cfg, smolvlm_dir, false);
  const Counts c = count_with_lora(policy, "smolvla", r);
  std::printf("smolvla full size (SmolVLM2-500M config, num_vlm_layers 16, float32): %lld parameters; LeRobot's default "
              "fine-tune (train_expert_only, freeze_vision_encoder) trains %lld (%.2f%%), AdamW state %.1f MB; LoRA r=%lld "
              "on its %lld default targets trains %lld (%.3f%%), AdamW state %.2f MB (%.0fx less)\n",
              (long long)c.total, (long long)c.trainable, 100.0 * c.trainable / c.total, mb(8 * c.trainable), (long long)r,
              (long long)c.targets, (long long)c.adapters, 100.0 * c.adapters / c.total, mb(8 * c.adapters),
              static_cast<double>(c.trainable) / c.adapters);
}

// π0.5's defaults on CPU with one 224-pixel camera and a 6-dim state and action.
PI05Config pi05_config() {
  PI05Config cfg;
  cfg.device = "cpu";
  cfg.input_features["observation.images.base_0_rgb"] = {"VISUAL", {3, 224, 224}};
  cfg.input_features["observation.state"] = {"STATE", {6}};
  cfg.output_features["action"] = {"ACTION", {6}};
  cfg.input_feature_order = {"observation.images.base_0_rgb", "observation.state"};
  return cfg;
}

void full_size_pi05(int64_t r) {
  const PI05Config cfg = pi05_config();
  const PaliGemmaArch full = paligemma_arch(cfg);
  const PiSize size = pi_size(full, true, cfg.max_state_dim, cfg.max_action_dim, cfg.freeze_vision_encoder, cfg.train_expert_only);
  Counts reduced[2];
  for (int depth = 1; depth <= 2; ++depth) {
    PaliGemmaArch a = full;
    a.text.depth = a.expert.depth = depth;
    a.vision.num_hidden_layers = 1;
    a.text.vocab_size = a.expert.vocab_size = 1024;
    PiPolicy policy(cfg, a);
    reduced[depth - 1] = count_with_lora(policy, "pi05", r);
    const PiSize s = pi_size(a, true, cfg.max_state_dim, cfg.max_action_dim, cfg.freeze_vision_encoder, cfg.train_expert_only);
    std::printf("  pi05 at full widths, %d layer pair(s): built %lld parameters (pi_sizing: %lld), %lld targets, %lld adapter "
                "parameters\n", depth, (long long)reduced[depth - 1].total, (long long)s.parameters(),
                (long long)reduced[depth - 1].targets, (long long)reduced[depth - 1].adapters);
  }
  const int64_t pairs = full.expert.depth;
  const int64_t adapters = reduced[0].adapters + (pairs - 1) * (reduced[1].adapters - reduced[0].adapters);
  const int64_t targets = reduced[0].targets + (pairs - 1) * (reduced[1].targets - reduced[0].targets);
  std::printf("pi05 full size (%lld layer pairs): %lld parameters; LeRobot's default fine-tune trains %lld (%lld of them "
              "get a gradient: all but the two unread lm_heads), AdamW state %.1f MB in float32 (%.1f MB in bfloat16); "
              "LoRA r=%lld on its %lld default targets trains %lld (%.3f%%), AdamW state %.2f MB (float32 adapters, as "
              "PEFT keeps them) (%.0fx less than float32)\n",
              (long long)pairs, (long long)size.parameters(), (long long)size.trainable_parameters(),
              (long long)(size.optimizer_bytes("float32") / 8),
              mb(size.optimizer_bytes("float32")), mb(size.optimizer_bytes("bfloat16")), (long long)r, (long long)targets,
              (long long)adapters, 100.0 * adapters / size.parameters(), mb(8 * adapters),
              static_cast<double>(size.optimizer_bytes("float32")) / (8.0 * adapters));
}

// ---------------------------------------------------------------- step time
Batch make_batch(int64_t b, int64_t image, int64_t chunk, int64_t tokens, int64_t vocab, const std::string& camera) {
  torch::manual_seed(0);
  Batch batch;
  batch[camera] = torch::rand({b, 3, image, image});
  batch["observation.state"] = torch::randn({b, 6});
  batch["action"] = torch::randn({b, chunk, 6});
  batch["action_is_pad"] = torch::zeros({b, chunk}, torch::kBool);
  batch[kLanguageTokens] = torch::randint(3, vocab, {b, tokens}, torch::kLong);
  batch[kLanguageMask] = torch::ones({b, tokens}, torch::kBool);
  return batch;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One training step: forward, backward, AdamW over what trains.
template <class P>
double step(P& policy, torch::optim::AdamW& opt, const Batch& batch) {
  const auto t0 = std::chrono::steady_clock::now();
  opt.zero_grad();
  auto out = policy.forward(batch);
  out.loss.backward();
  opt.step();
  return seconds_since(t0);
}

std::vector<torch::Tensor> trainable(torch::nn::Module& m) {
  std::vector<torch::Tensor> v;
  for (const auto& p : m.parameters())
    if (p.requires_grad()) v.push_back(p);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Two copies of the same policy: `full` trains LeRobot's default set, `lora` its default adapters.
template <class P>
void time_steps(const char* name, P& full, P& lora_policy, const std::string& type, const Batch& batch, int64_t r,
                int steps) {
  const Counts c = count_with_lora(lora_policy, type, r);
  torch::optim::AdamW opt_full(trainable(full), torch::optim::AdamWOptions(1e-4));
  torch::optim::AdamW opt_lora(trainable(lora_policy), torch::optim::AdamWOptions(1e-4));
  full.train();
  lora_policy.train();
  step(full, opt_full, batch);  // warm-up: first-call allocations, AdamW's state
  step(lora_policy, opt_lora, batch);
  std::vector<double> tf, tl;
  for (int i = 0; i < steps; ++i) {  // interleaved, so drift on a shared machine hits both alike
    tf.push_back(step(full, opt_full, batch));
    tl.push_back(step(lora_policy, opt_lora, batch));
  }
  const double mf = median(tf), ml = median(tl);
  std::printf("%s reduced (%lld parameters; default fine-tune trains %lld, LoRA r=%lld on %lld targets %lld): step "
              "%.3f s full, %.3f s LoRA (median of %d, interleaved) -> LoRA/full %.2f\n",
              name, (long long)c.total, (long long)c.trainable, (long long)r, (long long)c.targets, (long long)c.adapters,
              mf, ml, steps, ml / mf);
}

void step_time_smolvla(const fs::path& dir, const fs::path& tokenizer, int64_t r, int64_t b, int steps) {
  // A reduced SmolVLM (text 384 wide, 8 layers; vision 192 wide, 4 layers, 256 px) — SmolVLA's
  // structure (expert 0.75x, cross-attention every other layer, chunk 50) at a CPU-sized width.
  write_smolvlm_config(dir,
                       Json{{"hidden_size", 384}, {"intermediate_size", 1024}, {"num_hidden_layers", 8},
                            {"num_attention_heads", 6}, {"num_key_value_heads", 2}, {"head_dim", 64},
                            {"vocab_size", 1024}, {"rms_norm_eps", 1e-5}, {"model_type", "llama"}},
                       Json{{"hidden_size", 192}, {"intermediate_size", 768}, {"num_hidden_layers", 4},
                            {"num_attention_heads", 3}, {"image_size", 256}, {"patch_size", 16}, {"num_channels", 3},
                            {"model_type", "smolvlm_vision"}},
                       4);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})  // the policy loads one; no size depends on it
    fs::copy_file(tokenizer / f, dir / f, fs::copy_options::overwrite_existing);
  const SmolVLAConfig cfg = smolvla_config(256, 8);
  torch::manual_seed(1);
  SmolVLAPolicy full(cfg, dir, false);
  torch::manual_seed(1);
  SmolVLAPolicy lora_policy(cfg, dir, false);
  time_steps("smolvla", full, lora_policy, "smolvla", make_batch(b, 256, cfg.chunk_size, 48, 1024, "observation.images.top"),
             r, steps);
}

void step_time_pi05(int64_t r, int64_t b, int steps) {
  const PI05Config cfg = pi05_config();
  // π0.5's structure (SigLIP 224 px / 14, Gemma + expert with adaRMS, chunk 50) at CPU-sized widths.
  PaliGemmaArch a = paligemma_arch(cfg);
  a.vision.hidden_size = 192, a.vision.intermediate_size = 768, a.vision.num_hidden_layers = 2;
  a.vision.num_attention_heads = 3;
  a.text.width = 512, a.text.mlp_dim = 2048, a.text.depth = 4, a.text.head_dim = 64, a.text.vocab_size = 1024;
  a.expert.width = 256, a.expert.mlp_dim = 1024, a.expert.depth = 4, a.expert.head_dim = 64, a.expert.vocab_size = 1024;
  torch::manual_seed(1);
  PiPolicy full(cfg, a);
  torch::manual_seed(1);
  PiPolicy lora_policy(cfg, a);
  time_steps("pi05", full, lora_policy, "pi05",
             make_batch(b, 224, cfg.chunk_size, cfg.tokenizer_max_length, 1024, "observation.images.base_0_rgb"), r, steps);
}

}  // namespace
}  // namespace lerobot

int main(int argc, char** argv) {
  using namespace lerobot;
  std::string smolvlm;
  int steps = 6;
  int64_t r = 16, batch = 2;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* k) { return a.rfind(k, 0) == 0 ? a.substr(std::string(k).size()) : std::string(); };
    if (!val("--smolvlm_config=").empty()) smolvlm = val("--smolvlm_config=");
    else if (!val("--steps=").empty()) steps = std::stoi(val("--steps="));
    else if (!val("--r=").empty()) r = std::stoll(val("--r="));
    else if (!val("--batch=").empty()) batch = std::stoll(val("--batch="));
    else if (!val("--threads=").empty()) threads = std::stoi(val("--threads="));
    else {
      std::fprintf(stderr, "usage: bench_lora --smolvlm_config=DIR [--steps=6] [--r=16] [--batch=2] [--threads=cores]\n");
      return 2;
    }
  }
  if (smolvlm.empty()) {
    std::fprintf(stderr, "bench_lora: --smolvlm_config=DIR (a folder with SmolVLM2-500M's config.json) is required\n");
    return 2;
  }
  torch::set_num_threads(threads);
  std::printf("intra-op threads: %d\n", torch::get_num_threads());
  full_size_smolvla(smolvlm, r);
  full_size_pi05(r);
  const fs::path scratch = fs::temp_directory_path() / ("bench_lora_" + std::to_string(::getpid()));
  step_time_smolvla(scratch / "smolvlm_reduced", smolvlm, r, batch, steps);
  step_time_pi05(r, batch, steps);
  fs::remove_all(scratch);
  return 0;
}
