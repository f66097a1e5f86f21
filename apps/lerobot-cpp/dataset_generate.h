// `lerobot-cpp dataset generate`: records scripted-expert demonstrations of a built-in task as a
// LeRobot v3.0 dataset and validates it.
#pragma once

#include "commands.h"

namespace lerobot::app {

int dataset_generate_main(const Args& args);

}  // namespace lerobot::app
