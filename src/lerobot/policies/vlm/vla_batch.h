// What the VLA policies (SmolVLA, π0, π0.5) read from a batch: the language keys their
// preprocessors' tokenizer step writes, an entry that must be there, and LeRobot's pad_vector.
#pragma once

#include <torch/torch.h>

#include <string>

#include "lerobot/policies/policy.h"

namespace lerobot {

inline constexpr const char* kLanguageTokens = "observation.language.tokens";
inline constexpr const char* kLanguageMask = "observation.language.attention_mask";

// batch[key], or a usage error naming `policy` ("SmolVLA", "π0.5") and what makes the entry.
const torch::Tensor& vla_batch_entry(const Batch& batch, const std::string& key, const std::string& policy);

// LeRobot's pad_vector: the last dimension zero-padded to `size` (left as it is when not shorter).
torch::Tensor pad_vector(const torch::Tensor& x, int64_t size);

}  // namespace lerobot
