// Units and their runners (see unit_runner.h).
#include "lerobot/policies/unit_runner.h"

namespace lerobot {
namespace {
thread_local UnitRunner* t_runner = nullptr;
}  // namespace

std::vector<torch::Tensor> run_unit(torch::nn::Module& unit, const std::vector<torch::Tensor>& inputs, const UnitFn& fn) {
  return t_runner ? t_runner->run(unit, inputs, fn) : fn(inputs);
}

UnitRunnerScope::UnitRunnerScope(UnitRunner* runner) : previous_(t_runner) { t_runner = runner; }
UnitRunnerScope::~UnitRunnerScope() { t_runner = previous_; }

UnitRunner* current_unit_runner() { return t_runner; }

}  // namespace lerobot
