// The version lerobot-cpp reports (`lerobot-cpp --version`) and the formats it reads and writes.
#pragma once

namespace lerobot {

inline constexpr const char* kLerobotCppVersion = "0.1.0";
inline constexpr const char* kDatasetVersions = "LeRobotDataset v3.0 (read/write), v2.1 (read)";
inline constexpr const char* kLerobotReference = "LeRobot 0.6.2 checkpoints and flags";

}  // namespace lerobot
