// Uploads against the local Hub (hub_server.py): whoami, create repo, pre-upload, LFS batch with
// basic and multipart transfers, verify, the NDJSON commit; then the commit read back through
// the download endpoints, file for file, with the hashes the server computed itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/common/safetensors.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/checkpoint_uploader.h"
#include "lerobot/hub/hashing.h"
#include "lerobot/hub/http.h"

namespace lerobot::hub {
namespace {

using testing::HubServer;
using testing::TempDir;

const std::string kAlice = "hf_aliceWRITEtoken_123";
const std::string kReader = "hf_readONLYtoken_456";

Json server_config() {
  return Json{{"token", "hf_unused_main"},
              {"repos", Json::array()},
              {"users", Json::array({Json{{"token", kAlice},
                                          {"name", "alice"},
                                          {"role", "write"},
                                          {"orgs", Json::array({Json{{"name", "acme"}, {"roleInOrg", "write"}},
                                                                Json{{"name", "viewers"}, {"roleInOrg", "read"}}})}},
                                     Json{{"token", kReader}, {"name", "rita"}, {"role", "read"}}})},
              {"multipart_threshold", 4096}};
}

// A pretrained_model-like folder: a real safetensors file (LFS, in several parts above 4 KiB), a
// small JSON (inline) and an empty file.
fs::path make_folder(const fs::path& dir, float scale = 0.5f) {
  fs::create_directories(dir);
  std::vector<float> w(3000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) * scale;
  TensorEntry t;
  t.name = "model.weight";
  t.dtype = DType::kF32;
  t.shape = {30, 100};
  t.data = w.data();
  t.nbytes = w.size() * sizeof(float);
  write_safetensors(dir / "model.safetensors", {t});
  std::ofstream(dir / "config.json") << "{\"type\": \"act\", \"chunk_size\": 10}\n";
  std::ofstream(dir / "empty.json").close();
  return dir;
}

std::vector<UploadFile> files_of(const fs::path& dir) {
  return {{"config.json", dir / "config.json"}, {"empty.json", dir / "empty.json"},
          {"model.safetensors", dir / "model.safetensors"}};
}

Json get_json(const std::string& url, const std::string& token) {
  HttpRequest req;
  req.url = url;
  req.headers = {"Authorization: Bearer " + token};
  HttpResponse r = http_perform(req);
  EXPECT_EQ(r.status, 200) << url << " " << r.body;
  return Json::parse(r.body);
}

TEST(HubUpload, CommitReadsBackFileIdenticalWithLfsForLargeFiles) {
  TempDir tmp;
  HubServer server(server_config(), tmp.path / "server");
  const fs::path src = make_folder(tmp.path / "src");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home", kAlice);

  const WhoAmI who = client.whoami();
  EXPECT_EQ(who.name, "alice");
  EXPECT_EQ(who.token_role, "write");
  ASSERT_EQ(who.orgs.size(), 2u);
  EXPECT_EQ(who.orgs[0].name, "acme");

  EXPECT_EQ(client.create_repo(RepoType::kModel, "acme/pushed", true), server.endpoint() + "/acme/pushed");
  EXPECT_EQ(client.create_repo(RepoType::kModel, "acme/pushed", true), server.endpoint() + "/acme/pushed");  // 409: exists
  const std::string initial = client.repo_info(RepoType::kModel, "acme/pushed", "main").commit;
  server.clear_log();

  const CommitResult r = client.upload_files(RepoType::kModel, "acme/pushed", files_of(src), "Upload policy");
  ASSERT_EQ(r.commit.size(), 40u);
  EXPECT_EQ(r.parent, initial);
  EXPECT_EQ(r.lfs_files, std::vector<std::string>{"model.safetensors"});
  EXPECT_EQ(r.regular_files, (std::vector<std::string>{"config.json", "empty.json"}));

  // The commit as the server stored it: its title and parent, an lfsFile with the sha256 oid
  // and size, inline files for the rest.
  const Json commits = get_json(server.endpoint() + "/api/models/acme/pushed/commits/main", kAlice);
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[0]["id"], r.commit);
  EXPECT_EQ(commits[0]["title"], "Upload policy");
  EXPECT_EQ(commits[1]["id"], initial);
  std::map<std::string, Json> ops;
  for (const auto& op : commits[0]["operations"]) ops[op["path"].get<std::string>()] = op;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops["config.json"]["key"], "file");
  EXPECT_EQ(ops["empty.json"]["key"], "file");
  EXPECT_EQ(ops["model.safetensors"]["key"], "lfsFile");
  EXPECT_EQ(ops["model.safetensors"]["size"].get<uint64_t>(), fs::file_size(src / "model.safetensors"));

  // The tree: model.safetensors is an LFS pointer whose oid is the server's own sha256 of what it
  // received, equal to the source file's; the small files have git blob ids.
  const Json tree = get_json(server.endpoint() + "/api/models/acme/pushed/tree/main", kAlice);
  bool saw_lfs = false;
  for (const auto& e : tree) {
    const std::string path = e["path"];
    if (path == "model.safetensors") {
      saw_lfs = true;
      ASSERT_TRUE(e.contains("lfs"));
      EXPECT_EQ(e["lfs"]["oid"], sha256_file(src / "model.safetensors"));
    } else if (path == "config.json") {
      EXPECT_FALSE(e.contains("lfs"));
      EXPECT_EQ(e["oid"], git_blob_sha1_file(src / "config.json"));
    }
  }
  EXPECT_TRUE(saw_lfs);

  // The bytes went up in parts (the file is above the 4 KiB threshold) to the storage host,
  // which never saw the token; every Hub call carried it.
  int parts = 0;
  for (const auto& q : server.requests()) {
    const std::string path = q["path"];
    if (starts_with(path, "/lfs-upload/")) {
      EXPECT_EQ(q["auth"], "none") << path;
      parts += q["method"] == "PUT";
    } else {
      EXPECT_EQ(q["auth"], "valid") << path;
    }
  }
  EXPECT_EQ(uint64_t(parts), (fs::file_size(src / "model.safetensors") + 4095) / 4096);

  // Read back through the download endpoints into a fresh cache: identical bytes.
  HubClient reader = testing::make_client(server.endpoint(), tmp.path / "home2", kAlice);
  const Snapshot snap = reader.snapshot(tmp.path / "home2/hub", RepoType::kModel, "acme/pushed", "main", nullptr);
  EXPECT_EQ(snap.commit, r.commit);
  for (const auto& f : files_of(src)) EXPECT_EQ(read_file(snap.dir / f.path_in_repo), read_file(f.local)) << f.path_in_repo;
  EXPECT_TRUE(fs::exists(snap.dir / ".gitattributes"));

  // The repo is private: without the token it is not there.
  HubClient anonymous = testing::make_client(server.endpoint(), tmp.path / "home3");
  EXPECT_THROW(anonymous.repo_info(RepoType::kModel, "acme/pushed", "main"), Error);
}

TEST(HubUpload, UnchangedFilesAreNotSentAgain) {
  TempDir tmp;
  Json cfg = server_config();
  cfg.erase("multipart_threshold");  // basic transfer: one PUT per object
  HubServer server(cfg, tmp.path / "server");
  const fs::path src = make_folder(tmp.path / "src");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home", kAlice);
  client.create_repo(RepoType::kModel, "alice/model", std::nullopt);
  const CommitResult first = client.upload_files(RepoType::kModel, "alice/model", files_of(src), "first");
  ASSERT_FALSE(first.commit.empty());

  // The same files again: nothing changed, no commit.
  server.clear_log();
  const CommitResult same = client.upload_files(RepoType::kModel, "alice/model", files_of(src), "again");
  EXPECT_TRUE(same.commit.empty());
  EXPECT_EQ(same.unchanged_files.size(), 3u);
  for (const auto& q : server.requests()) EXPECT_NE(q["method"], "PUT") << q.dump();

  // Only config.json changes: one inline file in the commit, no LFS traffic.
  std::ofstream(src / "config.json") << "{\"type\": \"act\", \"chunk_size\": 20}\n";
  server.clear_log();
  const CommitResult second = client.upload_files(RepoType::kModel, "alice/model", files_of(src), "second");
  EXPECT_EQ(second.parent, first.commit);
  EXPECT_EQ(second.regular_files, std::vector<std::string>{"config.json"});
  EXPECT_TRUE(second.lfs_files.empty());
  EXPECT_EQ(second.unchanged_files.size(), 2u);
  for (const auto& q : server.requests()) EXPECT_EQ(q["path"].get<std::string>().find("lfs"), std::string::npos) << q.dump();
  const Snapshot snap = testing::make_client(server.endpoint(), tmp.path / "h2", kAlice)
                            .snapshot(tmp.path / "h2/hub", RepoType::kModel, "alice/model", "main", nullptr);
  EXPECT_EQ(read_file(snap.dir / "config.json"), read_file(src / "config.json"));
  EXPECT_EQ(read_file(snap.dir / "model.safetensors"), read_file(src / "model.safetensors"));

  // A new weights file with the same name: a new LFS object goes up in one PUT.
  make_folder(src, 0.25f);
  server.clear_log();
  const CommitResult third = client.upload_files(RepoType::kModel, "alice/model", files_of(src), "third");
  EXPECT_EQ(third.lfs_files, std::vector<std::string>{"model.safetensors"});
  int puts = 0;
  for (const auto& q : server.requests()) puts += q["method"] == "PUT";
  EXPECT_EQ(puts, 1);
  client.create_tag(RepoType::kModel, "alice/model", "v1", third.commit);
  EXPECT_EQ(client.repo_info(RepoType::kModel, "alice/model", "v1").commit, third.commit);
}

TEST(HubUpload, RefusedTokensAndNamespacesAreUsageErrorsWithoutTheToken) {
  TempDir tmp;
  HubServer server(server_config(), tmp.path / "server");
  auto expect_usage = [&](const std::function<void()>& f, const std::vector<std::string>& words, const std::string& token) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string text = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      for (const auto& w : words) EXPECT_NE(text.find(w), std::string::npos) << w << " not in " << text;
      EXPECT_EQ(text.find(token), std::string::npos) << text;
    }
  };
  HubClient wrong = testing::make_client(server.endpoint(), tmp.path / "h1", "hf_notAtokenOfAnyone");
  expect_usage([&] { wrong.whoami(); }, {"401", "HF_TOKEN", "hf auth login"}, "hf_notAtokenOfAnyone");
  HubClient none = testing::make_client(server.endpoint(), tmp.path / "h0");
  expect_usage([&] { none.whoami(); }, {"HF_TOKEN", "hf auth login"}, "hf_");
  HubClient alice = testing::make_client(server.endpoint(), tmp.path / "h2", kAlice);
  expect_usage([&] { alice.create_repo(RepoType::kModel, "someone-else/model", std::nullopt); },
               {"403", "someone-else/model"}, kAlice);
  expect_usage([&] { alice.create_repo(RepoType::kModel, "viewers/model", std::nullopt); }, {"403"}, kAlice);
  HubClient rita = testing::make_client(server.endpoint(), tmp.path / "h3", kReader);
  EXPECT_EQ(rita.whoami().token_role, "read");
  expect_usage([&] { rita.create_repo(RepoType::kModel, "rita/model", std::nullopt); }, {"403"}, kReader);
}

// --save_checkpoint_to_hub's uploader: checkpoint directories queued while "training" goes on are
// pushed one after another in step order, each as checkpoints/<step>/ in a commit tagged <step>;
// a commit the Hub refuses is reported by finish() (step and reason, no token) and does not stop
// the later ones; the destructor waits for what is still queued.
TEST(HubUpload, CheckpointUploaderPushesEachStepInOrderAndReportsRefusedOnes) {
  TempDir tmp;
  Json cfg = server_config();
  cfg["refused_commits"] = Json{{"alice/run:checkpoint 000003", "storage quota exceeded"}};
  HubServer server(cfg, tmp.path / "server");
  std::vector<fs::path> dirs;
  for (int step = 1; step <= 4; ++step) {
    const fs::path dir = tmp.path / "out/checkpoints" / ("00000" + std::to_string(step));
    make_folder(dir / "pretrained_model", 0.5f * step);
    fs::create_directories(dir / "training_state");
    std::ofstream(dir / "training_state/training_step.json") << "{\"step\": " << step << "}\n";
    std::ofstream(dir / "training_state/partial.tmp") << "an unfinished atomic write";  // not pushed
    dirs.push_back(dir);
  }
  std::string report;
  {
    CheckpointUploader uploader(testing::make_client(server.endpoint(), tmp.path / "home", kAlice), "alice/run", true);
    for (size_t i = 0; i < 3; ++i) uploader.push(dirs[i]);
    report = uploader.finish();
    uploader.push(dirs[3]);  // left to the destructor
  }
  EXPECT_EQ(report.find(kAlice), std::string::npos) << report;
  EXPECT_EQ(report.find("1 of 3 checkpoint(s) were not pushed to alice/run (000003): "), 0u) << report;
  EXPECT_NE(report.find("storage quota exceeded"), std::string::npos) << report;

  HubClient reader = testing::make_client(server.endpoint(), tmp.path / "reader", kAlice);
  const Json commits = get_json(server.endpoint() + "/api/models/alice/run/commits/main", kAlice);
  ASSERT_EQ(commits.size(), 4u) << commits.dump();
  EXPECT_EQ(commits[0]["title"], "checkpoint 000004");
  EXPECT_EQ(commits[1]["title"], "checkpoint 000002");
  EXPECT_EQ(commits[2]["title"], "checkpoint 000001");
  const RepoRefs refs = reader.list_refs(RepoType::kModel, "alice/run");
  std::map<std::string, std::string> tags;
  for (const auto& t : refs.tags) tags[t.name] = t.commit;
  EXPECT_EQ(tags.size(), 3u);
  EXPECT_EQ(tags["000001"], commits[2]["id"].get<std::string>());
  EXPECT_EQ(tags["000002"], commits[1]["id"].get<std::string>());
  EXPECT_EQ(tags["000004"], commits[0]["id"].get<std::string>());
  // Each tag holds its step's files, read back identical; a step is in no commit before its own.
  const RepoInfo at2 = reader.repo_info(RepoType::kModel, "alice/run", "000002");
  for (const char* f : {"checkpoints/000001/pretrained_model/model.safetensors", "checkpoints/000002/training_state/training_step.json",
                        "checkpoints/000002/pretrained_model/config.json"})
    EXPECT_NE(std::find(at2.files.begin(), at2.files.end(), f), at2.files.end()) << f;
  for (const auto& f : at2.files) {
    EXPECT_EQ(f.find("000004"), std::string::npos) << f;
    EXPECT_EQ(f.find(".tmp"), std::string::npos) << f;
  }
  const fs::path got = reader.download_file(tmp.path / "reader/hub", RepoType::kModel, "alice/run", "000004",
                                            "checkpoints/000004/pretrained_model/model.safetensors");
  EXPECT_EQ(sha256_file(got), sha256_file(dirs[3] / "pretrained_model/model.safetensors"));
  HubClient anonymous = testing::make_client(server.endpoint(), tmp.path / "anon");
  EXPECT_THROW(anonymous.repo_info(RepoType::kModel, "alice/run", "main"), Error);  // private, as asked
}

}  // namespace
}  // namespace lerobot::hub
