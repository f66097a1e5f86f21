// The `lerobot-cpp train` and `eval` flags that are accepted so LeRobot's command lines and
// train_config.json files run unchanged, but that the command does not read: each with the reason.
// The flag-walk test (tests/train/test_flag_walk.cpp) fails on a listed flag that is not a real
// one, and on a real flag that is neither read by the command's code nor listed here.
#pragma once

#include <string>
#include <vector>

namespace lerobot {

struct UnusedFlag {
  const char* key;     // dotted flag key without "--", e.g. "persistent_workers"
  const char* reason;  // why it has no effect here
  // The policy types it has no effect for, comma-separated ("diffusion,pi05"); null: whatever the
  // policy (a flag another policy type reads, e.g. gradient_checkpointing, lists the others).
  const char* only_for = nullptr;
};

const std::vector<UnusedFlag>& accepted_unused_train_flags();
const std::vector<UnusedFlag>& accepted_unused_eval_flags();
// LeRobot's PushtEnv fields the env does not read (part of both lists above; `dataset generate`,
// which refuses --env.type=pusht, lists them too).
const std::vector<UnusedFlag>& accepted_unused_env_flags();

// The line logged once at the start of a run for the listed flags among `given_keys` (the flags of
// the command line) and `file_keys` (keys that the --config_path file `file` sets to a value other
// than the default) that the run's `policy_type` does not read; empty when there is none.
std::string unused_flags_message(const std::vector<std::string>& given_keys,
                                 const std::vector<std::string>& file_keys = {}, const std::string& file = "",
                                 const std::string& policy_type = "");
// The same line for `lerobot-cpp eval`'s listed flags among `given_keys`.
std::string unused_eval_flags_message(const std::vector<std::string>& given_keys, const std::string& policy_type = "");

}  // namespace lerobot
