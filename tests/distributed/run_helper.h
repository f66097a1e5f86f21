// Test utilities: a temp directory, running dist_test_helper ranks, reading their result files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lerobot/distributed/launcher.h"
#include "support/process_temp_dir.h"

namespace lerobot_test {

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (lerobot::testing::process_temp_dir() / "dist_XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// key → numbers, from lines "key v1 v2 ..." (a line "key undefined" gives an empty vector).
using Results = std::map<std::string, std::vector<double>>;
inline Results read_results(const std::string& file) {
  Results out;
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string key;
    is >> key;
    std::vector<double> v;
    double d;
    while (is >> d) v.push_back(d);
    out[key] = v;
  }
  return out;
}

inline std::string read_text(const std::string& file) {
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `n` ranks of the helper in `mode` through launch_local.
inline lerobot::LaunchResult run_ranks(int n, const std::string& mode, const std::string& dir,
                                       const std::string& arg = "", double grace_s = 3.0) {
  lerobot::LocalLaunchOptions o;
  o.num_processes = n;
  o.executable = LEROBOT_DIST_HELPER;
  o.kill_grace_s = grace_s;
  o.extra_env["OMP_NUM_THREADS"] = "1";
  std::vector<std::string> argv{"dist_test_helper", mode, dir};
  if (!arg.empty()) argv.push_back(arg);
  return lerobot::launch_local(argv, o);
}

}  // namespace lerobot_test
