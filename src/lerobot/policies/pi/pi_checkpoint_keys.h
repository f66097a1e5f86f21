// LeRobot's key remapping when PI0Policy / PI05Policy.from_pretrained load a checkpoint
// (policies/pi0/modeling_pi0.py, pi05/modeling_pi05.py): _fix_pytorch_state_dict_keys (after
// openpi's), then "model." put before every key that lacks it. Published checkpoints (openpi's
// PyTorch conversions, lerobot/pi0_base, lerobot/pi05_base) load through it.
#pragma once

#include <string>
#include <vector>

#include "lerobot/common/safetensors_torch.h"

namespace lerobot {

// LeRobot's _fix_pytorch_state_dict_keys, key by key in `in`'s (sorted) order:
//  - with `expert_adarms` (π0.5's expert), the expert's plain RMSNorm weights
//    paligemma_with_expert.gemma_expert.model.layers.N.{input,post_attention}_layernorm.weight…
//    and …gemma_expert.model.norm.weight… are dropped (prefix matches, as re.match);
//  - π0: time_mlp_{in,out}.* → action_time_mlp_{in,out}.*; π0.5: action_time_mlp_{in,out}.* →
//    time_mlp_{in,out}.*, and state_proj.* dropped;
//  - [model.]paligemma_with_expert.paligemma.lm_head.weight is also copied (a clone) to
//    model.paligemma_with_expert.paligemma.model.language_model.embed_tokens.weight;
// then from_pretrained's step: "model." before every key that does not start with it. Where two
// keys end up the same, the later assignment wins as in the Python dict. Returns the state dict
// LeRobot passes to load_state_dict. `log` (optional) gets LeRobot's warnings and its "Remapped N
// state dict keys" line.
TensorMap fix_pi_checkpoint_keys(const TensorMap& in, bool pi05, bool expert_adarms,
                                 std::vector<std::string>* log = nullptr);

// _fix_pytorch_state_dict_keys alone (no "model." prefixing), as (key, value) in the order the
// Python dict would hold them.
std::vector<std::pair<std::string, torch::Tensor>> fix_pi_state_dict_keys(const TensorMap& in, bool pi05,
                                                                          bool expert_adarms,
                                                                          std::vector<std::string>* log = nullptr);

}  // namespace lerobot
