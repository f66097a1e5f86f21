// The sizes of π0 / π0.5 without building them: parameter counts per part, as LeRobot's
// PI0Pytorch / PI05Pytorch hold them (both lm_heads included: LeRobot builds them untied and
// never reads them), and the bytes of weights, gradients and AdamW state per process for a dtype
// and the trainable set. What `lerobot-cpp estimate` prints for the full-size models in
// milliseconds, where building them would take 16 GB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/policies/pi/paligemma_with_expert.h"

namespace lerobot {

struct PiPart {
  std::string name;       // LeRobot's module prefix under model.paligemma_with_expert (or model.)
  int64_t parameters = 0;
  bool float32_in_bf16 = false;  // kept float32 by to_bfloat16_for_selected_params
  bool trainable = true;          // requires_grad, as LeRobot sets it
  bool read = true;               // false: the lm_heads, built and never read, so never given a gradient
};

struct PiSize {
  std::vector<PiPart> parts;
  int64_t parameters() const;
  int64_t trainable_parameters() const;
  int64_t unread_parameters() const;  // the lm_heads
  // Bytes of the weights in `dtype` ("float32" or "bfloat16": LeRobot's mix), of the gradients and
  // of AdamW's two moments (same dtype as each parameter) for the trainable parts that get a
  // gradient (AdamW keeps no state for a parameter that never had one).
  int64_t weight_bytes(const std::string& dtype) const;
  int64_t gradient_bytes(const std::string& dtype) const;
  int64_t optimizer_bytes(const std::string& dtype) const;
};

// The activation bytes a training step of this implementation holds, per sample, counted tensor by
// tensor from its forward (the prefix of `prefix_tokens`, the suffix of `suffix_tokens`, `cameras`
// images through the vision tower; LibTorch 2.x's fused attention in the vision tower) and checked
// against the heap it holds at tiny sizes (PiSizing.*). With gradient checkpointing the forward
// keeps each layer pair's inputs and the image embeddings; the backward then recomputes one layer
// pair at a time, or one camera's vision tower layer by layer.
struct PiActivations {
  int64_t after_forward = 0;  // held from the end of the forward into the backward
  int64_t peak = 0;           // the most held at once during the backward's recomputation
};
PiActivations pi_activation_bytes(const PaliGemmaArch& arch, bool pi05, const std::string& dtype, bool checkpointing,
                                  int64_t cameras, int64_t prefix_tokens, int64_t suffix_tokens, bool vision_trains,
                                  bool fused_vision_attention = true);

// The bytes of the units a sharded run gathers one at a time (a joint layer pair: a PaliGemma
// layer and the expert's layer of the same depth; a SigLIP layer), for `dtype` as pi_size counts
// them (RMS norms and the whole vision tower stay float32 in bfloat16), and of the gradients each
// gets (none for a frozen part).
struct PiUnitBytes {
  int64_t pairs = 0, vision_layers = 0;
  int64_t pair_weights = 0, pair_gradients = 0;
  int64_t vision_layer_weights = 0, vision_layer_gradients = 0;
};
PiUnitBytes pi_unit_bytes(const PaliGemmaArch& arch, bool pi05, const std::string& dtype, bool freeze_vision_encoder,
                          bool train_expert_only);

// `pi05`: π0.5's adaRMS expert and time MLP instead of π0's state token and action-time MLP.
// `proprio_memory`: π0.5's proprio_history_proj (max_state_dim -> VLM width, kept float32).
PiSize pi_size(const PaliGemmaArch& arch, bool pi05, int64_t max_state_dim, int64_t max_action_dim,
               bool freeze_vision_encoder, bool train_expert_only, bool proprio_memory = false);
// Whether `config` is a π0.5 with proprioceptive memory (pi_size's `proprio_memory`).
bool pi_proprio_memory(const PiConfigBase& config);

}  // namespace lerobot
