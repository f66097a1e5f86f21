// Initial weights of SmolVLA's backbone and expert: transformers' init for a model built from its
// config, and the backbone's pretrained weights from its folder (load_vlm_weights).
#pragma once

#include <torch/torch.h>

#include <filesystem>

#include "lerobot/policies/smolvla/smolvlm_with_expert.h"

namespace lerobot {

// transformers' init of the expert (N(0, std) linears, unit norms), except the cross-attention
// k/v projections LeRobot swaps in afterwards, which keep nn.Linear's default init.
void init_expert_weights(SmolVLMWithExpertImpl& m, double std);

// Loads `dir`'s *.safetensors (a SmolVLMForConditionalGeneration checkpoint: model.vision_model.*,
// model.connector.*, model.text_model.*, lm_head.weight) into the backbone, as float32; text
// layers past the ones kept are skipped. Missing or mis-shaped tensors throw naming the file.
void load_vlm_weights(SmolVLMImpl& vlm, const std::filesystem::path& dir);

}  // namespace lerobot
