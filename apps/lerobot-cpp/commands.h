// Subcommand entry points of lerobot-cpp; each lives in its own file and returns an exit code.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace lerobot::app {

using Args = std::vector<std::string>;

int train_main(const Args& args);
int eval_main(const Args& args);
int dataset_main(const Args& args);
int estimate_main(const Args& args);
int infer_main(const Args& args);

bool wants_help(const Args& args);

// Removes the flags named in `names` (without "--"; dashes count as underscores) from `args`,
// as --name=value or --name value, and returns name -> value (the last occurrence wins).
std::map<std::string, std::string> take_named_flags(Args& args, const std::set<std::string>& names);

// --policy.path / --policy.pretrained_path given as a Hub id (org/name, not a local path) are
// replaced by the downloaded snapshot folder (hub_flags.cpp).
void resolve_hub_policy_flags(Args& args);
// --resume=true --config_path=org/name (a Hub repo with checkpoints/<step>/): the latest checkpoint
// downloaded into --output_dir (default outputs/train/<date>/<time>_resume), and the flags
// rewritten to resume from it, as LeRobot 0.6's resolve_resume_checkpoint.
void resolve_hub_resume_flags(Args& args);

}  // namespace lerobot::app
