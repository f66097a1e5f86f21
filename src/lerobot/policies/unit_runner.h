// Units: the layers a policy's forward walks through one after another (ACT's encoder and decoder
// layers, a transformer's decoder layers, π's joint layer pairs, a SigLIP layer). A policy runs
// each of them through run_unit(); what the trainer installs around them (sharded data parallel:
// gather the unit's parameters before it runs and free them after; activation checkpointing:
// recompute it in backward) then applies to every policy that declares its units, with no code
// of its own.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace lerobot {

// A unit's computation: inputs → outputs (undefined tensors allowed on both sides). It may be
// called again in the backward pass (activation checkpointing), after the caller's frame is gone:
// capture everything by value, and compute the same thing again (randomness is replayed by the
// runner that recomputes).
using UnitFn = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>& inputs)>;

// One unit as the policy declares it.
struct PolicyUnit {
  std::string class_name;  // LeRobot's Python class name for it, or ours where LeRobot has none
                           // (--accelerator.fsdp.wrap_modules chooses units by it)
  torch::nn::Module* module = nullptr;  // what the forward passes to run_unit for this unit
  // State-dict prefixes ("model.encoder.layers.0.") whose parameters form the unit: one module's,
  // or several (π's joint layer pair: a PaliGemma layer and the expert's layer of that depth).
  std::vector<std::string> prefixes;
};

// What runs around each unit. Runners chain: an outer one (sharding) calls its inner one
// (checkpointing), which calls fn.
class UnitRunner {
 public:
  virtual ~UnitRunner() = default;
  virtual std::vector<torch::Tensor> run(torch::nn::Module& unit, const std::vector<torch::Tensor>& inputs,
                                         const UnitFn& fn) = 0;
};

// fn(inputs) through the runner installed on this thread (UnitRunnerScope), or directly when none is.
std::vector<torch::Tensor> run_unit(torch::nn::Module& unit, const std::vector<torch::Tensor>& inputs, const UnitFn& fn);

// Installs `runner` for the calling thread while in scope (nullptr: units run plainly).
class UnitRunnerScope {
 public:
  explicit UnitRunnerScope(UnitRunner* runner);
  ~UnitRunnerScope();
  UnitRunnerScope(const UnitRunnerScope&) = delete;
  UnitRunnerScope& operator=(const UnitRunnerScope&) = delete;

 private:
  UnitRunner* previous_;
};

// The runner installed on the calling thread, or nullptr.
UnitRunner* current_unit_runner();

}  // namespace lerobot
