// Every test process writes its scratch files into a temp directory of its own, removed with
// everything in it when the process exits. Linked into every test binary (cmake/LerobotTargets.cmake)
// and made before main: TMPDIR points at it, so std::filesystem::temp_directory_path(), mkstemp
// users and the commands a test starts (lerobot-cpp, Python peers) all write there too.
//
// Before this, each ctest process left its recorded datasets and checkpoints in /tmp (up to 860 MB
// per trainer test, 64 GB over a few runs of the suite) and a full disk failed CI.
#pragma once

#include <filesystem>
#include <string>

namespace lerobot::testing {

// This process's temp directory. Only the process that made it removes it: a forked child that
// exits through exit() leaves it to its parent.
const std::filesystem::path& process_temp_dir();

// process_temp_dir() / name, made empty: a test's own scratch directory (it goes with the process's
// directory, so it needs no pid in its name and no removal of its own).
std::filesystem::path fresh_temp_dir(const std::string& name);

}  // namespace lerobot::testing
