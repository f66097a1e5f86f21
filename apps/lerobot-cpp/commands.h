// Subcommand entry points of lerobot-cpp; each lives in its own file and returns an exit code.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lerobot {
struct TrainPipelineConfig;
struct LaunchEnv;
}  // namespace lerobot

namespace lerobot::app {

using Args = std::vector<std::string>;

int train_main(const Args& args);
int eval_main(const Args& args);
int dataset_main(const Args& args);
int estimate_main(const Args& args);
int infer_main(const Args& args);
int export_main(const Args& args);

bool wants_help(const Args& args);

// Removes the flags named in `names` (without "--"; dashes count as underscores) from `args`,
// as --name=value or --name value, and returns name -> value (the last occurrence wins).
std::map<std::string, std::string> take_named_flags(Args& args, const std::set<std::string>& names);
// The same for every flag whose name (as above) starts with `prefix` (e.g. "peft.").
std::map<std::string, std::string> take_flags_with_prefix(Args& args, const std::string& prefix);

// --policy.path / --policy.pretrained_path given as a Hub id (org/name, not a local path) are
// replaced by the downloaded snapshot folder (hub_flags.cpp).
void resolve_hub_policy_flags(Args& args);
// --resume=true --config_path=org/name (a Hub repo with checkpoints/<step>/): the latest checkpoint
// downloaded into --output_dir (default outputs/train/<date>/<time>_resume), and the flags
// rewritten to resume from it, as LeRobot 0.6's resolve_resume_checkpoint.
void resolve_hub_resume_flags(Args& args);

// LeRobot's multi-GPU guide writes train commands in forms draccus does not take (train_guide_forms.cpp):
// --config FILE becomes --config_path=FILE, a bare key=value becomes --key=value, and
// --local_rank / --local-rank (torch.distributed.launch) is checked against LOCAL_RANK and removed.
// --use_amp[=BOOL] is removed and returned, for apply_use_amp once the config is parsed.
struct GuideForms {
  std::optional<bool> use_amp_flag;  // --use_amp[=BOOL], when given
};
GuideForms accept_guide_forms(Args& args);
// --use_amp: --accelerator.mixed_precision as LeRobot's old policy.use_amp meant it (fp16 on CUDA,
// bf16 on the CPU), set in `cfg`, appended to `args` (for launched processes) and logged once.
void apply_use_amp(const GuideForms& forms, TrainPipelineConfig& cfg, const LaunchEnv& env, Args& args);

}  // namespace lerobot::app
