// What a user reads when the Hub says no (401, 403, 404) or cannot be reached, and that a token
// is never part of it; the environment variables huggingface_hub and LeRobot read.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

using testing::HubServer;
using testing::TempDir;

const std::string kToken = "hf_testTOKEN_abc123";

std::string full_text(const Error& e) { return std::string(e.what()) + " | " + e.where() + " | " + e.fix(); }

// The error of `fn`, with stderr captured alongside (for the token check).
template <class F>
std::pair<std::string, std::string> error_of(F fn) {
  ::testing::internal::CaptureStderr();
  std::string text = "(no error)";
  try {
    fn();
  } catch (const Error& e) {
    text = full_text(e);
  }
  return {text, ::testing::internal::GetCapturedStderr()};
}

TEST(HubErrors, StatusesSayWhatHappenedAndNeverShowTheToken) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos", kToken), tmp.path / "server");
  const fs::path home = tmp.path / "home";
  HubClient anon = testing::make_client(server.endpoint(), home);
  HubClient wrong = testing::make_client(server.endpoint(), home, "hf_wrongTOKEN_zzz999");
  HubClient good = testing::make_client(server.endpoint(), home, kToken);
  const fs::path cache = anon.env().hub_cache;

  auto [e401, log401] = error_of([&] { anon.download_file(cache, RepoType::kModel, "acme/private-act", "main", "config.json"); });
  EXPECT_NE(e401.find("401"), std::string::npos) << e401;
  EXPECT_NE(e401.find("hf auth login"), std::string::npos) << e401;
  EXPECT_NE(e401.find("acme/private-act"), std::string::npos) << e401;

  auto [e401w, log401w] = error_of([&] { wrong.download_file(cache, RepoType::kModel, "acme/private-act", "main", "config.json"); });
  EXPECT_NE(e401w.find("was refused"), std::string::npos) << e401w;
  EXPECT_EQ(e401w.find("hf_wrongTOKEN_zzz999"), std::string::npos) << e401w;
  EXPECT_EQ(log401w.find("hf_wrongTOKEN_zzz999"), std::string::npos) << log401w;

  auto [e403, log403] = error_of([&] { anon.download_file(cache, RepoType::kModel, "acme/gated-act", "main", "config.json"); });
  EXPECT_NE(e403.find("403"), std::string::npos) << e403;
  EXPECT_NE(e403.find("accept its conditions"), std::string::npos) << e403;

  auto [e404, log404] = error_of([&] { anon.repo_info(RepoType::kDataset, "lerobot/no-such-dataset", "v3.0"); });
  EXPECT_NE(e404.find("repository not found"), std::string::npos) << e404;
  EXPECT_NE(e404.find("lerobot/no-such-dataset"), std::string::npos) << e404;

  auto [erev, logrev] = error_of([&] { anon.repo_info(RepoType::kDataset, "lerobot/record-test", "v9.9"); });
  EXPECT_NE(erev.find("revision 'v9.9' does not exist"), std::string::npos) << erev;

  auto [efile, logfile] = error_of([&] { anon.download_file(cache, RepoType::kModel, "lerobot/act-test", "main", "nope.json"); });
  EXPECT_NE(efile.find("no such file"), std::string::npos) << efile;
  EXPECT_NE(efile.find("nope.json"), std::string::npos) << efile;

  // With the token: the private repo downloads; the token went to the Hub, never to the blob host.
  ::testing::internal::CaptureStderr();
  good.download_file(cache, RepoType::kModel, "acme/private-act", "main", "model.safetensors");
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find(kToken), std::string::npos);
  bool hub_saw_token = false, blob_saw_token = false;
  for (const auto& r : server.requests()) {
    bool blob = starts_with(r["path"].get<std::string>(), "/lfs/");
    (blob ? blob_saw_token : hub_saw_token) |= r["auth"] != "none";
  }
  EXPECT_TRUE(hub_saw_token);
  EXPECT_FALSE(blob_saw_token);
  for (const auto& text : {e401, e403, e404, erev, efile, log401, log403, log404})
    EXPECT_EQ(text.find(kToken), std::string::npos);
}

TEST(HubErrors, NoNetworkNamesTheEndpointAndOfflineMode) {
  TempDir tmp;
  HubClient client = testing::make_client("http://127.0.0.1:1", tmp.path / "home", kToken);
  auto [text, log] = error_of([&] { client.repo_info(RepoType::kDataset, "lerobot/pusht", "v3.0"); });
  EXPECT_NE(text.find("cannot reach the Hub at http://127.0.0.1:1"), std::string::npos) << text;
  EXPECT_NE(text.find("HF_HUB_OFFLINE=1"), std::string::npos) << text;
  EXPECT_NE(log.find("retry 3/3"), std::string::npos) << log;  // backed off and retried first
  EXPECT_EQ(text.find(kToken), std::string::npos);
}

TEST(HubEnvTest, ReadsHuggingfaceHubAndLerobotVariables) {
  TempDir tmp;
  const char* names[] = {"HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_LEROBOT_HOME",
                         "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"};
  std::map<std::string, std::string> saved;
  for (const char* n : names) {
    if (const char* v = std::getenv(n)) saved[n] = v;
    ::unsetenv(n);
  }
  ::setenv("HF_HOME", tmp.path.c_str(), 1);
  ::setenv("HF_ENDPOINT", "http://hub.example:8080/", 1);
  std::ofstream(tmp.path / "token") << "hf_fromFILE\n";
  HubEnv e = HubEnv::from_environment();
  EXPECT_EQ(e.endpoint, "http://hub.example:8080");
  EXPECT_EQ(e.hub_cache, tmp.path / "hub");
  EXPECT_EQ(e.lerobot_home, tmp.path / "lerobot");
  EXPECT_EQ(e.lerobot_hub_cache(), tmp.path / "lerobot" / "hub");
  EXPECT_EQ(e.token, "hf_fromFILE");
  EXPECT_FALSE(e.offline);
  ::setenv("HF_TOKEN", "hf_fromENV", 1);
  ::setenv("HF_HUB_CACHE", (tmp.path / "elsewhere").c_str(), 1);
  ::setenv("HF_LEROBOT_HOME", (tmp.path / "lr").c_str(), 1);
  ::setenv("HF_HUB_OFFLINE", "yes", 1);
  e = HubEnv::from_environment();
  EXPECT_EQ(e.token, "hf_fromENV");
  EXPECT_EQ(e.hub_cache, tmp.path / "elsewhere");
  EXPECT_EQ(e.lerobot_home, tmp.path / "lr");
  EXPECT_TRUE(e.offline);
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  EXPECT_FALSE(HubEnv::from_environment().offline);
  for (const char* n : names) ::unsetenv(n);
  for (const auto& [k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
  EXPECT_EQ(redact("Bearer hf_x1 and hf_x1", "hf_x1"), "Bearer *** and ***");
}

}  // namespace
}  // namespace lerobot::hub
