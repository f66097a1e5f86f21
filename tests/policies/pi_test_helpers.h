// What the π0/π0.5 tests share: tiny policies built from tests/policies/data/pi_reference.json
// ("layouts" → "config" → "tiny", the sizes scripts/python_lerobot/pi_reference.py gave LeRobot's
// PI0Policy/PI05Policy), that script's weight fill and batch, and its noise and flow time.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "lerobot/common/config/json.h"
#include "lerobot/policies/pi/modeling_pi.h"

namespace lerobot::testing {

// LeRobot's name under transformers 5.12 (no `vision_model.` level in the vision tower).
std::string pi_reference_name(std::string name);

// The layout's tiny sizes: SigLIP from "vision", the two Gemmas from "gemma".
PaliGemmaArch pi_tiny_arch(const Json& tiny);
// The tiny config's sizes, dtype, frozen parts and features (cameras, then the state; the action).
void pi_configure(PiConfigBase& c, const Json& tiny);

// A π0 (kind "pi0") or π0.5 policy at `tiny`'s sizes; `tweak` edits the config before construction.
std::unique_ptr<PiPolicy> make_pi_policy(const std::string& kind, const Json& tiny,
                                         const std::function<void(PiConfigBase&)>& tweak = {});
// A reference layout's policy: kind "pi0" is π0, any other π0.5.
std::unique_ptr<PiPolicy> make_pi_policy(const Json& layout);

// The script's fill(): over LeRobot's state-dict names sorted (k counts every entry), 0.1 · formula
// (0.5 for q_proj / k_proj weights), plus 1 for a 1-D weight; rounded to each tensor's dtype.
void pi_fill(PiPolicy& policy);

// The script's batch: cameras formula_tensor(100 + c) in [0, 1], state 200, actions 201
// (B, chunk, action_dim), and its two tokenized prompts (repeated for a batch above 2).
Batch pi_batch(const Json& tiny);
// Noise formula_tensor(300, (B, chunk, max_action_dim)); flow time 0.3, 0.85 (repeated for B > 2).
torch::Tensor pi_noise(const Json& tiny);
torch::Tensor pi_flow_time(const Json& tiny);

}  // namespace lerobot::testing
