// Subcommand entry points of lerobot-cpp; each lives in its own file and returns an exit code.
#pragma once

#include <string>
#include <vector>

namespace lerobot::app {

using Args = std::vector<std::string>;

int train_main(const Args& args);
int eval_main(const Args& args);
int dataset_main(const Args& args);
int estimate_main(const Args& args);

bool wants_help(const Args& args);

}  // namespace lerobot::app
