// Shared helpers of the subcommands.
#include <algorithm>

#include "commands.h"

namespace lerobot::app {

bool wants_help(const Args& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

}  // namespace lerobot::app
