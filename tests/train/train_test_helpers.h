// Shared helpers of the train-layer tests added for #15: a scratch dir, a small reach2d dataset,
// the flags of a tiny ACT run, the CLI runner and a tensor-by-tensor safetensors comparison.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/train/trainer.h"
#include "support/run_command.h"  // run_cli, run_shell

namespace lerobot::testing {

fs::path train_scratch();             // a fresh dir per test process
const fs::path& reach2d_dataset();    // 6 expert episodes, 64 px, recorded once per process
std::vector<std::string> tiny_act_run(const fs::path& out, int64_t steps, std::vector<std::string> extra = {});
TrainResult run_train(const std::vector<std::string>& args);
std::string join_args(const std::vector<std::string>& args);  // " a b c"

// A copy of reach2d_dataset() at train_scratch()/name, to damage.
fs::path copy_dataset(const std::string& name);
// Rewrites a JSON file through `edit`.
void edit_json(const fs::path& file, const std::function<void(Json&)>& edit);

// Number of tensors that differ (or are missing) between two safetensors files; 0: identical.
int count_different_tensors(const fs::path& a, const fs::path& b);
// Two checkpoint folders (checkpoints/<step>) hold the same model and optimizer state, tensor for
// tensor (the bit-identical resume tests).
void expect_same_model_and_optimizer(const fs::path& a, const fs::path& b);
// The model weights of run `run`'s checkpoint after `step` (checkpoints/<step, 6 digits>/).
TensorMap checkpoint_weights(const fs::path& run, int step);
// `args` as one command-line tail (" --a=1 --b=2"), leaving out the flags named in `without`
// (e.g. {"steps", "output_dir"}: a train run's flags for `estimate`, which sets those itself).
std::string flags_without(const std::vector<std::string>& args, const std::vector<std::string>& without);

}  // namespace lerobot::testing
