// The local Hub server and repos for the hub tests (see hub_test_helpers.h).
#include "hub_test_helpers.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <atomic>
#include <stdexcept>
#include <thread>

#include "lerobot/common/safetensors.h"
#include "support/process_temp_dir.h"

namespace lerobot::hub::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path = lerobot::testing::fresh_temp_dir("hub_" + std::to_string(counter++));
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

HubServer::HubServer(const Json& config, const fs::path& work_dir) {
  fs::create_directories(work_dir);
  fs::path cfg = work_dir / "hub_config.json";
  fs::path port_file = work_dir / "hub_port";
  log_ = work_dir / "hub_requests.jsonl";
  std::ofstream(cfg) << config.dump();
  std::ofstream(log_).close();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::execlp("python3", "python3", LEROBOT_HUB_SERVER, cfg.c_str(), port_file.c_str(), log_.c_str(), (char*)nullptr);
    ::_exit(127);
  }
  for (int i = 0; i < 300 && port_ == 0; ++i) {
    std::ifstream in(port_file);
    if (in) in >> port_;
    if (port_ == 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) throw std::runtime_error("hub_server.py exited at start");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (port_ == 0) throw std::runtime_error("hub_server.py did not start within 15 s");
}

HubServer::~HubServer() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 40; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
}

std::vector<Json> HubServer::requests() const {
  std::vector<Json> out;
  std::ifstream in(log_);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

void HubServer::clear_log() const { std::ofstream(log_, std::ios::trunc).close(); }

namespace {

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

}  // namespace

Json make_test_repos(const fs::path& root, const std::string& token,
                     const std::map<std::string, std::string>& faults) {
  const fs::path fixture = fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-v3-record-test";
  // v3.0: the fixture's meta/ and data/, and a real mp4 for one camera.
  fs::path v30 = root / "repo_v30";
  copy_tree(fixture, v30);
  fs::create_directories(v30 / "videos/observation.images.front/chunk-000");
  fs::copy_file(fs::path(LEROBOT_FIXTURES_DIR) / "video/h264-640x480-10fps-93frames.mp4",
                v30 / "videos/observation.images.front/chunk-000/file-000.mp4", fs::copy_options::overwrite_existing);
  std::ofstream(v30 / "README.md") << "# record-test\nA LeRobot dataset for the hub tests.\n";
  // An older revision tagged v2.1 (only the info.json differs, enough to tell them apart).
  fs::path v21 = root / "repo_v21";
  fs::create_directories(v21 / "meta");
  std::ofstream(v21 / "meta/info.json") << "{\"codebase_version\": \"v2.1\"}\n";
  // A model: config.json and a real safetensors file.
  fs::path model = root / "repo_model";
  fs::create_directories(model);
  std::ofstream(model / "config.json") << "{\"type\": \"act\", \"chunk_size\": 10}\n";
  std::vector<float> w(4096);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) * 0.25f;
  TensorEntry t;
  t.name = "model.weight";
  t.dtype = DType::kF32;
  t.shape = {64, 64};
  t.data = w.data();
  t.nbytes = w.size() * sizeof(float);
  write_safetensors(model / "model.safetensors", {t});
  Json faults_json = Json::object();
  for (const auto& [k, v] : faults) faults_json[k] = v;
  return Json{{"token", token},
              {"faults", faults_json},
              {"repos",
               Json::array({
                   Json{{"type", "dataset"},
                        {"id", "lerobot/record-test"},
                        {"access", "public"},
                        {"revisions", Json::array({Json{{"commit", kCommitV21}, {"dir", v21.string()}, {"tags", {"v2.1"}}},
                                                   Json{{"commit", kCommitV30},
                                                        {"dir", v30.string()},
                                                        {"branches", {"main"}},
                                                        {"tags", {"v3.0"}}}})}},
                   Json{{"type", "dataset"},
                        {"id", "lerobot/old-only"},
                        {"access", "public"},
                        {"revisions", Json::array({Json{{"commit", kCommitV21}, {"dir", v21.string()}, {"branches", {"main"}}, {"tags", {"v2.1"}}}})}},
                   Json{{"type", "model"},
                        {"id", "lerobot/act-test"},
                        {"access", "public"},
                        {"revisions", Json::array({Json{{"commit", kCommitModel}, {"dir", model.string()}, {"branches", {"main"}}}})}},
                   Json{{"type", "model"},
                        {"id", "acme/private-act"},
                        {"access", "private"},
                        {"revisions", Json::array({Json{{"commit", kCommitModel}, {"dir", model.string()}, {"branches", {"main"}}}})}},
                   Json{{"type", "model"},
                        {"id", "acme/gated-act"},
                        {"access", "gated"},
                        {"revisions", Json::array({Json{{"commit", kCommitModel}, {"dir", model.string()}, {"branches", {"main"}}}})}},
               })}};
}

HubClient make_client(const std::string& endpoint, const fs::path& home, const std::string& token, bool offline) {
  HubEnv env;
  env.endpoint = endpoint;
  env.token = token;
  env.offline = offline;
  env.hf_home = home;
  env.hub_cache = home / "hub";
  env.lerobot_home = home / "lerobot";
  env.token_path = home / "token";
  HubClientOptions opt;
  opt.max_retries = 3;
  opt.backoff_initial_s = 0.05;
  opt.backoff_max_s = 0.2;
  opt.progress = false;
  opt.parallel = 4;
  return HubClient(env, opt);
}

std::vector<std::string> list_tree(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto& p = it->path();
    std::string rel = p.lexically_relative(dir).generic_string();
    if (fs::is_symlink(p)) {
      out.push_back(rel + " -> " + fs::read_symlink(p).generic_string());
    } else if (fs::is_regular_file(p)) {
      if (rel.find("/refs/") != std::string::npos) {
        std::ifstream in(p);
        out.push_back(rel + " = " + std::string((std::istreambuf_iterator<char>(in)), {}));
      } else {
        out.push_back(rel);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lerobot::hub::testing
