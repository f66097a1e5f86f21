// What the π0/π0.5 train-layer tests share: the environment a tiny π run needs and its flags.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lerobot/common/fs.h"

namespace lerobot::testing {

// HF_HOME with google/paligemma-3b-pt-224's tokenizer files (the reduced Gemma tokenizer), offline,
// and LEROBOT_PI_ARCH's small sizes (narrow, 2-layer widths), for the lifetime of the guard.
class PiEnv {
 public:
  PiEnv();
  ~PiEnv();
  PiEnv(const PiEnv&) = delete;
  PiEnv& operator=(const PiEnv&) = delete;

 private:
  void set(const std::string& name, const std::string& value);
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The flags of a tiny π run on the reach2d dataset (chunk 4, 32 px images, 2 denoising steps,
// batch 4, seed 7) writing to `out`, then `extra`.
std::vector<std::string> tiny_pi_run(const std::string& type, const fs::path& out, int64_t steps,
                                     std::vector<std::string> extra = {});

// `lerobot-cpp eval --policy.path=<pretrained_model>` on two reach2d environments in one batch
// (64 px, `episode_length` steps) writing under `out`: exits 0 and reports avg_sum_reward.
void expect_eval_on_reach2d(const fs::path& pretrained_model, const fs::path& out, int episode_length = 12);

}  // namespace lerobot::testing
