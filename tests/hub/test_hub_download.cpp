// Downloads that break: a killed process resumed by Range, a connection cut mid-body, a damaged
// body that must never enter the cache.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/hashing.h"

namespace lerobot::hub {
namespace {

using testing::HubServer;
using testing::TempDir;

const char* kVideo = "videos/observation.images.front/chunk-000/file-000.mp4";

uint64_t size_or_zero(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

// The byte offsets of ranged GETs of the blob host.
std::vector<uint64_t> ranged_blob_gets(const HubServer& server) {
  std::vector<uint64_t> out;
  for (const auto& r : server.requests()) {
    std::string range = r["range"];
    if (r["method"] == "GET" && starts_with(r["path"].get<std::string>(), "/lfs/") && starts_with(range, "bytes="))
      out.push_back(std::stoull(range.substr(6)));
  }
  return out;
}

TEST(HubDownload, KilledDownloadIsInvisibleThenResumedByRange) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos", "tok", {{kVideo, "slow_unranged"}}), tmp.path / "server");
  const fs::path home = tmp.path / "home";
  const fs::path file = tmp.path / "repos/repo_v30" / kVideo;
  const std::string sha = sha256_file(file);
  HubClient client = testing::make_client(server.endpoint(), home);
  const fs::path cache = client.env().lerobot_hub_cache();
  RepoCache layout(cache, RepoType::kDataset, "lerobot/record-test");

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a download that the server feeds slowly, killed half-way below
    try {
      client.download_file(cache, RepoType::kDataset, "lerobot/record-test", "v3.0", kVideo);
    } catch (...) {
    }
    ::_exit(0);
  }
  const fs::path part = layout.incomplete(sha);
  for (int i = 0; i < 400 && size_or_zero(part) < 200000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const uint64_t kept = size_or_zero(part);
  ASSERT_GE(kept, 200000u) << "the slow download never got going";
  ASSERT_LT(kept, fs::file_size(file));
  // Killed: the partial bytes are only in blobs/<sha>.incomplete; no blob, no snapshot entry.
  EXPECT_FALSE(fs::exists(layout.blob(sha)));
  EXPECT_FALSE(fs::exists(layout.pointer(testing::kCommitV30, kVideo)));

  fs::path got = client.download_file(cache, RepoType::kDataset, "lerobot/record-test", "v3.0", kVideo);
  EXPECT_EQ(got, layout.pointer(testing::kCommitV30, kVideo));
  EXPECT_EQ(sha256_file(got), sha);
  EXPECT_FALSE(fs::exists(part));
  auto offsets = ranged_blob_gets(server);
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_GE(offsets[0], kept);  // resumed where the killed process stopped (or after it)
}

TEST(HubDownload, ConnectionCutMidBodyIsResumed) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos", "tok", {{kVideo, "cut_once"}}), tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  fs::path got = client.download_file(client.env().lerobot_hub_cache(), RepoType::kDataset, "lerobot/record-test",
                                      "v3.0", kVideo);
  const fs::path file = tmp.path / "repos/repo_v30" / kVideo;
  EXPECT_EQ(sha256_file(got), sha256_file(file));
  auto offsets = ranged_blob_gets(server);
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0], fs::file_size(file) / 2);  // the half the server sent was kept
}

TEST(HubDownload, DamagedBodyNeverEntersTheCache) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos", "tok", {{"meta/tasks.parquet", "corrupt"}}),
                   tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  const fs::path cache = client.env().lerobot_hub_cache();
  RepoCache layout(cache, RepoType::kDataset, "lerobot/record-test");
  const std::string sha = sha256_file(tmp.path / "repos/repo_v30/meta/tasks.parquet");
  try {
    client.download_file(cache, RepoType::kDataset, "lerobot/record-test", "v3.0", "meta/tasks.parquet");
    FAIL() << "a damaged download was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sha256"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(layout.blob(sha)));
  EXPECT_FALSE(fs::exists(layout.incomplete(sha)));
  EXPECT_FALSE(fs::exists(layout.pointer(testing::kCommitV30, "meta/tasks.parquet")));
  // The other files of the snapshot are unaffected.
  fs::path info = client.download_file(cache, RepoType::kDataset, "lerobot/record-test", "v3.0", "meta/info.json");
  EXPECT_EQ(read_file(info), read_file(tmp.path / "repos/repo_v30/meta/info.json"));
}

TEST(HubDownload, ParallelDownloadsOfADatasetsFiles) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos"), tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  Snapshot snap = client.snapshot(client.env().lerobot_hub_cache(), RepoType::kDataset, "lerobot/record-test",
                                  "v3.0", nullptr);
  ASSERT_EQ(snap.files.size(), 7u);  // README, 4 meta files, 1 parquet, 1 mp4
  for (const auto& f : snap.files)
    EXPECT_EQ(sha256_file(snap.dir / f), sha256_file(tmp.path / "repos/repo_v30" / f)) << f;
}

}  // namespace
}  // namespace lerobot::hub
