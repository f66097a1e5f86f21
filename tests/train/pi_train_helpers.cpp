// The π train-test helpers (see pi_train_helpers.h).
#include "pi_train_helpers.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include "train_test_helpers.h"

namespace lerobot::testing {

PiEnv::PiEnv() {
  const fs::path root = train_scratch() / "pi_env";
  const fs::path snap = root / "hf/hub/models--google--paligemma-3b-pt-224/snapshots/0123456789abcdef0123456789abcdef01234567";
  if (!fs::exists(snap / "tokenizer.json")) {
    fs::create_directories(snap);
    const fs::path src = fs::path(LEROBOT_SOURCE_DIR) / "tests/policies/data/gemma_tokenizer";
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) fs::copy_file(src / f, snap / f);
    fs::create_directories(root / "hf/hub/models--google--paligemma-3b-pt-224/refs");
    write_file_atomic(root / "hf/hub/models--google--paligemma-3b-pt-224/refs/main",
                      "0123456789abcdef0123456789abcdef01234567");
    // The reduced tokenizer keeps Gemma's ids (up to 247977): the full 257,152-row vocabulary.
    write_file_atomic(root / "arch.json", R"({"vocab_size": 257152,
      "vision": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "patch_size": 8},
      "gemma": {"gemma_2b": {"width": 32, "depth": 2, "mlp_dim": 64, "num_heads": 8, "num_kv_heads": 1, "head_dim": 8},
                "gemma_300m": {"width": 16, "depth": 2, "mlp_dim": 32, "num_heads": 8, "num_kv_heads": 1, "head_dim": 8}}})");
  }
  set("HF_HOME", (root / "hf").string());
  set("HF_HUB_OFFLINE", "1");
  set("LEROBOT_PI_ARCH", (root / "arch.json").string());
}

PiEnv::~PiEnv() {
  for (const auto& [name, old] : saved_)
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
}

void PiEnv::set(const std::string& name, const std::string& value) {
  const char* old = std::getenv(name.c_str());
  saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
  ::setenv(name.c_str(), value.c_str(), 1);
}

std::vector<std::string> tiny_pi_run(const std::string& type, const fs::path& out, int64_t steps,
                                     std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "--policy.type=" + type, "--dataset.root=" + reach2d_dataset().string(), "--policy.chunk_size=4",
      "--policy.n_action_steps=4", "--policy.max_state_dim=8", "--policy.max_action_dim=8",
      "--policy.image_resolution=[32,32]", "--policy.tokenizer_max_length=24", "--policy.num_inference_steps=2",
      "--batch_size=4", "--steps=" + std::to_string(steps), "--log_freq=1", "--num_workers=0", "--seed=7",
      "--output_dir=" + out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void expect_eval_on_reach2d(const fs::path& pretrained_model, const fs::path& out, int episode_length) {
  std::string log;
  ASSERT_EQ(run_cli("eval --policy.path=" + pretrained_model.string() +
                        " --env.type=reach2d --env.image_size=64 --eval.n_episodes=2 --eval.batch_size=2 "
                        "--env.episode_length=" + std::to_string(episode_length) + " --output_dir=" + out.string(),
                    &log),
            0)
      << log;
  EXPECT_NE(log.find("avg_sum_reward"), std::string::npos) << log;
}

}  // namespace lerobot::testing
