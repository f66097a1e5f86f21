// `lerobot-cpp dataset`.
#include <iostream>

#include "commands.h"
#include "lerobot/common/error.h"

namespace lerobot::app {

int dataset_main(const Args& args) {
  if (wants_help(args)) {
    std::cout << "usage: lerobot-cpp dataset [--flag=value ...]\n";
    return 0;
  }
  throw_runtime("'dataset' is not built yet", "lerobot-cpp dataset");
}

}  // namespace lerobot::app
