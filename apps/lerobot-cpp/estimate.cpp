// `lerobot-cpp estimate`.
#include <iostream>

#include "commands.h"
#include "lerobot/common/error.h"

namespace lerobot::app {

int estimate_main(const Args& args) {
  if (wants_help(args)) {
    std::cout << "usage: lerobot-cpp estimate [--flag=value ...]\n";
    return 0;
  }
  throw_runtime("'estimate' is not built yet", "lerobot-cpp estimate");
}

}  // namespace lerobot::app
