// Activation checkpointing (torch.utils.checkpoint's reentrant form): run a piece of the model
// without keeping its activations, and in the backward pass run it again with gradients on and
// backpropagate through that recomputation. Parameters the piece uses get their gradients
// accumulated then. The recomputation runs under the autocast state of the first run and, with
// preserve_rng_state (torch's default), draws the same random numbers (dropout masks): the CPU
// default generator's state and the CUDA generators' of the devices the inputs are on are saved
// before the first run, set for the recomputation and put back after it. The unit runner of the
// first run (unit_runner.h) is installed again around the recomputation, so units inside the
// piece run through it both times.
// ActivationCheckpointRunner applies it to every unit a policy declares
// (--accelerator.activation_checkpointing.mode=full).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lerobot/policies/unit_runner.h"

namespace lerobot {

class Policy;

using RecomputedFn = UnitFn;

// With gradients off, or inside another piece's recomputation (recomputing()), this is
// fn(inputs). Otherwise fn(inputs) computed under no_grad; its defined floating-point outputs
// carry one autograd node that recomputes fn and returns the gradients of the inputs that required
// them. Outputs may be undefined. fn must compute the same thing when called again (it is kept in
// the graph until the backward: capture by value).
std::vector<torch::Tensor> recompute_in_backward(const RecomputedFn& fn, const std::vector<torch::Tensor>& inputs,
                                                 bool preserve_rng_state = true);

// True while the calling thread recomputes a piece in a backward pass.
bool recomputing();

// The unit runner of --accelerator.activation_checkpointing.mode=full: every unit recomputed in
// backward. A unit whose inputs and parameters all need no gradient (a frozen vision tower) runs
// plainly: nothing would flow back through it.
class ActivationCheckpointRunner : public UnitRunner {
 public:
  // `policy`'s units (Policy::units()) tell which parameters each unit owns.
  explicit ActivationCheckpointRunner(Policy& policy, bool preserve_rng_state = true);
  std::vector<torch::Tensor> run(torch::nn::Module& unit, const std::vector<torch::Tensor>& inputs,
                                 const UnitFn& fn) override;
  int64_t recomputed_runs() const { return recomputed_runs_; }  // units run as checkpoints so far

 private:
  std::unordered_map<const torch::nn::Module*, std::vector<torch::Tensor>> params_;
  bool preserve_rng_state_;
  int64_t recomputed_runs_ = 0;
};

// The runner --accelerator.activation_checkpointing.mode asks for (LeRobot's
// ActivationCheckpointingMode): nullptr for "none", an ActivationCheckpointRunner over `policy`'s
// units for "full". A usage error naming the flag for another mode, or for "full" with a policy
// (of type `policy_type`) that declares no units.
std::unique_ptr<UnitRunner> activation_checkpointing_runner(Policy& policy, const std::string& mode,
                                                            const std::string& policy_type);

}  // namespace lerobot
