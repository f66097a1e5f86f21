// `lerobot-cpp eval`.
#include <iostream>

#include "commands.h"
#include "lerobot/common/error.h"

namespace lerobot::app {

int eval_main(const Args& args) {
  if (wants_help(args)) {
    std::cout << "usage: lerobot-cpp eval [--flag=value ...]\n";
    return 0;
  }
  throw_runtime("'eval' is not built yet", "lerobot-cpp eval");
}

}  // namespace lerobot::app
