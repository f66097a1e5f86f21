// Test helpers for hub/: a temporary folder, the local Hub server process (hub_server.py) over
// repos made from tests/fixtures, and a listing of a cache folder as huggingface_hub would leave it.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub::testing {

struct TempDir {
  TempDir();
  ~TempDir();
  fs::path path;
};

// One running hub_server.py; stopped (SIGTERM, then SIGKILL) by the destructor.
class HubServer {
 public:
  HubServer(const Json& config, const fs::path& work_dir);
  ~HubServer();
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // The requests so far, one JSON object each ({method, path, status, range, auth}).
  std::vector<Json> requests() const;
  void clear_log() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  fs::path log_;
};

// Commit ids used by the test repos.
inline const std::string kCommitV21 = std::string(40, 'a');
inline const std::string kCommitV30 = "3" + std::string(39, 'b');
inline const std::string kCommitModel = std::string(40, 'c');

// Builds, under `root`, a v3.0 dataset repo from the record-test fixture (plus one real mp4)
// and a model repo (config.json + model.safetensors), and returns the server config for them.
// `faults` maps repo file paths to hub_server.py fault names.
Json make_test_repos(const fs::path& root, const std::string& token = "hf_testTOKEN_abc123",
                     const std::map<std::string, std::string>& faults = {});

// A client for `endpoint` with its caches under `home` (HF_HOME), quick retries, no progress.
HubClient make_client(const std::string& endpoint, const fs::path& home, const std::string& token = "",
                      bool offline = false);

// Every path under `dir` (relative, sorted): "path -> target" for links, "path = text" for refs
// files, "path" for other files. What a huggingface_hub cache tree looks like, line by line.
std::vector<std::string> list_tree(const fs::path& dir);

}  // namespace lerobot::hub::testing
