// The cache tree our client writes, path by path, as huggingface_hub writes it for the same repo
// and revision; a second run downloads nothing; offline mode reads only the cache.
#include <gtest/gtest.h>

#include <fstream>

#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/hashing.h"

namespace lerobot::hub {
namespace {

using testing::HubServer;
using testing::TempDir;

// The etag the Hub names a file by: sha256 for LFS files, git's blob sha1 for the others.
std::string etag_of(const fs::path& file, bool lfs) { return lfs ? sha256_file(file) : git_blob_sha1_file(file); }

TEST(HubHashing, KnownVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  TempDir tmp;
  std::ofstream(tmp.path / "hello") << "hello\n";
  EXPECT_EQ(git_blob_sha1_file(tmp.path / "hello"), "ce013625030ba8dba906f756967f9e9ca394464a");  // git hash-object
}

TEST(HubCache, DatasetSnapshotTreeIsHuggingfaceHubs) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos"), tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  const fs::path cache = client.env().lerobot_hub_cache();
  Snapshot snap = client.snapshot(cache, RepoType::kDataset, "lerobot/record-test", "v3.0",
                                  [](const std::string& f) { return starts_with(f, "meta/"); });
  EXPECT_EQ(snap.commit, testing::kCommitV30);
  EXPECT_EQ(snap.dir, cache / "datasets--lerobot--record-test" / "snapshots" / testing::kCommitV30);

  // The expected tree, from huggingface_hub's rules (file_download.py): blobs named by etag,
  // refs/<revision> = commit, relative links from snapshots/<commit>/<file>, one lock per blob,
  // CACHEDIR.TAG in the cache folder. (Compared on 2026-11-25 with the tree huggingface_hub
  // 1.29.0.dev0 writes for the same repo served by hub_server.py: the same paths, links and
  // bytes, except its trees/<commit>.json listing, new in 1.22, which we do not write.)
  const fs::path repo = tmp.path / "repos/repo_v30";
  const std::string folder = "datasets--lerobot--record-test";
  std::vector<std::string> expected = {folder + "/refs/v3.0 = " + testing::kCommitV30, "CACHEDIR.TAG"};
  for (const std::string f : {"meta/info.json", "meta/stats.json", "meta/tasks.parquet",
                              "meta/episodes/chunk-000/file-000.parquet"}) {
    std::string etag = etag_of(repo / f, ends_with(f, ".parquet"));
    expected.push_back(".locks/" + folder + "/" + etag + ".lock");
    expected.push_back(folder + "/blobs/" + etag);
    std::string up;
    for (size_t i = 0; i < split(f, '/').size() + 1; ++i) up += "../";
    expected.push_back(folder + "/snapshots/" + testing::kCommitV30 + "/" + f + " -> " + up + "blobs/" + etag);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(testing::list_tree(cache), expected);
  EXPECT_EQ(read_file(cache / "CACHEDIR.TAG").rfind("Signature: 8a477f597d28d172789f06886806bc55\n", 0), 0u);
  // Lock files are group-writable whatever the umask, as huggingface_hub's FileLock makes them.
  for (const auto& e : fs::directory_iterator(cache / ".locks" / folder))
    EXPECT_EQ(fs::status(e.path()).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::group_write |
                  fs::perms::others_read)
        << e.path();
  // The links resolve to the bytes of the repo's files.
  EXPECT_EQ(read_file(snap.dir / "meta/info.json"), read_file(repo / "meta/info.json"));
  // Nothing under $HF_HUB_CACHE: datasets go to LeRobot's own hub cache.
  EXPECT_FALSE(fs::exists(client.env().hub_cache));
}

TEST(HubCache, ModelFileTreeAndSecondRunDownloadsNothing) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos"), tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  const fs::path cache = client.env().hub_cache;
  for (const char* f : {"config.json", "model.safetensors"})
    client.download_file(cache, RepoType::kModel, "lerobot/act-test", "main", f);
  const fs::path repo = tmp.path / "repos/repo_model";
  const std::string cfg = git_blob_sha1_file(repo / "config.json"), st = sha256_file(repo / "model.safetensors");
  const std::string snap = "models--lerobot--act-test/snapshots/" + testing::kCommitModel + "/";
  std::vector<std::string> expected = {
      "CACHEDIR.TAG",
      ".locks/models--lerobot--act-test/" + cfg + ".lock",
      ".locks/models--lerobot--act-test/" + st + ".lock",
      "models--lerobot--act-test/blobs/" + cfg,
      "models--lerobot--act-test/blobs/" + st,
      "models--lerobot--act-test/refs/main = " + testing::kCommitModel,
      snap + "config.json -> ../../blobs/" + cfg,
      snap + "model.safetensors -> ../../blobs/" + st,
  };
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(testing::list_tree(cache), expected);
  // The LFS file came from the blob host (another origin), after a 302.
  int blob_gets = 0;
  for (const auto& r : server.requests()) blob_gets += r["method"] == "GET" && starts_with(r["path"].get<std::string>(), "/lfs/");
  EXPECT_EQ(blob_gets, 1);

  // Second run by branch name: only HEADs, no file bytes moved. By commit: no request at all.
  server.clear_log();
  for (const char* f : {"config.json", "model.safetensors"})
    client.download_file(cache, RepoType::kModel, "lerobot/act-test", "main", f);
  for (const auto& r : server.requests()) EXPECT_EQ(r["method"], "HEAD") << r.dump();
  server.clear_log();
  client.download_file(cache, RepoType::kModel, "lerobot/act-test", testing::kCommitModel, "model.safetensors");
  EXPECT_TRUE(server.requests().empty());
  EXPECT_EQ(testing::list_tree(cache), expected);
}

TEST(HubCache, SecondSnapshotFetchesNoFile) {
  TempDir tmp;
  HubServer server(testing::make_test_repos(tmp.path / "repos"), tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  const fs::path cache = client.env().lerobot_hub_cache();
  client.snapshot(cache, RepoType::kDataset, "lerobot/record-test", "v3.0", nullptr);
  auto before = testing::list_tree(cache);
  server.clear_log();
  client.snapshot(cache, RepoType::kDataset, "lerobot/record-test", "v3.0", nullptr);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);  // the repo info; every file is then known by commit
  EXPECT_EQ(reqs[0]["path"], "/api/datasets/lerobot/record-test/revision/v3.0");
  EXPECT_EQ(testing::list_tree(cache), before);
}

TEST(HubCache, OfflineServesTheCacheAndNamesWhatIsMissing) {
  TempDir tmp;
  fs::path home = tmp.path / "home";
  {
    HubServer server(testing::make_test_repos(tmp.path / "repos"), tmp.path / "server");
    HubClient client = testing::make_client(server.endpoint(), home);
    client.snapshot(client.env().lerobot_hub_cache(), RepoType::kDataset, "lerobot/record-test", "v3.0",
                    [](const std::string& f) { return starts_with(f, "meta/"); });
    client.download_file(client.env().hub_cache, RepoType::kModel, "lerobot/act-test", "main", "config.json");
  }  // the server is gone: any request would fail
  HubClient offline = testing::make_client("http://127.0.0.1:1", home, "", /*offline=*/true);
  Snapshot snap = offline.snapshot(offline.env().lerobot_hub_cache(), RepoType::kDataset, "lerobot/record-test",
                                   "v3.0", nullptr);
  EXPECT_EQ(snap.commit, testing::kCommitV30);
  EXPECT_TRUE(fs::exists(snap.dir / "meta/info.json"));
  fs::path cfg = offline.download_file(offline.env().hub_cache, RepoType::kModel, "lerobot/act-test", "main", "config.json");
  EXPECT_NE(read_file(cfg).find("act"), std::string::npos);
  try {
    offline.download_file(offline.env().hub_cache, RepoType::kModel, "lerobot/act-test", "main", "model.safetensors");
    FAIL() << "a file not in the cache was served offline";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HF_HUB_OFFLINE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos) << e.what();
  }
  EXPECT_THROW(offline.snapshot(offline.env().lerobot_hub_cache(), RepoType::kDataset, "lerobot/record-test", "v2.1", nullptr),
               Error);
}

}  // namespace
}  // namespace lerobot::hub
