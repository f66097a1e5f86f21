// `lerobot-cpp train` fetching what LeRobot 0.6 fetches beyond a dataset snapshot, against the
// local Hub server (tests/hub/hub_server.py):
//  - --dataset.root=DIR that holds no dataset yet: the files downloaded into DIR (huggingface_hub's
//    local_dir mode, .cache/huggingface/download/*.metadata), and a second run moving no bytes;
//  - --resume=true --config_path=org/name: the latest checkpoints/<step>/ of a model repo;
//  - the default --policy.pretrained_backbone_weights (ResNet18_Weights.IMAGENET1K_V1): timm's
//    safetensors copy in $HF_HUB_CACHE, loaded into the backbone; offline and uncached, an error
//    naming the file before any step.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "hub_cli_helpers.h"
#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/common/safetensors.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/hashing.h"
#include "lerobot/hub/torchvision_weights.h"

namespace lerobot::hub {
namespace {

using testing::HubEnvironment;
using testing::kTinyAct;
using testing::run_cli;
using testing::TempDir;

const std::string kDataCommit = std::string(40, 'd');

Json repo(const std::string& type, const std::string& id, const std::string& commit, const fs::path& dir,
          Json tags = Json::array()) {
  return Json{{"type", type},
              {"id", id},
              {"revisions", Json::array({Json{{"commit", commit}, {"dir", dir.string()}, {"branches", {"main"}},
                                              {"tags", std::move(tags)}}})}};
}

std::vector<std::string> request_paths(const testing::HubServer& server) {
  std::vector<std::string> paths;
  for (const auto& r : server.requests()) paths.push_back(r.value("path", ""));
  return paths;
}

// A 3-episode reach2d dataset and a 4-step tiny ACT run (checkpoints at 2 and 4) on it.
struct Scratch {
  TempDir tmp;
  fs::path data = tmp.path / "reach2d";
  std::string log;
  Scratch() {
    EXPECT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=3 --env.image_size=64 --output_dir=" +
                          data.string(), &log), 0) << log;
  }
};

TEST(HubLocalDir, DatasetRootWithoutADatasetIsDownloadedIntoItThenReused) {
  Scratch s;
  const fs::path root = s.tmp.path / "my_data";  // does not exist yet
  Json config{{"token", "unused"}, {"faults", Json::object()},
              {"repos", Json::array({repo("dataset", "lerobot/reach-test", kDataCommit, s.data, {"v3.0"})})}};
  testing::HubServer server(config, s.tmp.path / "server");
  HubEnvironment env(server.endpoint(), s.tmp.path / "hf_home");
  const std::string train = "train" + std::string(kTinyAct) + " --dataset.repo_id=lerobot/reach-test --dataset.root=" +
                            root.string() + " --output_dir=";
  const double before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_EQ(run_cli(train + (s.tmp.path / "run1").string(), &s.log), 0) << s.log;
  // The files themselves are in root (no links), byte for byte the repo's.
  for (const char* f : {"meta/info.json", "meta/stats.json", "data/chunk-000/file-000.parquet"}) {
    ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(root / f))) << f;
    EXPECT_EQ(read_file(root / f), read_file(s.data / f)) << f;
  }
  // huggingface_hub's bookkeeping: commit, etag (git sha1 of a regular file), time of download.
  const auto lines = split(read_file(root / ".cache/huggingface/download/meta/info.json.metadata"), '\n');
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], kDataCommit);
  EXPECT_EQ(lines[1], git_blob_sha1_file(s.data / "meta/info.json"));
  EXPECT_GE(std::stod(lines[2]), before - 1);
  const auto parquet = split(read_file(root / ".cache/huggingface/download/data/chunk-000/file-000.parquet.metadata"), '\n');
  ASSERT_GE(parquet.size(), 2u);
  EXPECT_EQ(parquet[1], sha256_file(s.data / "data/chunk-000/file-000.parquet"));  // an LFS file: its sha256
  EXPECT_EQ(read_file(root / ".cache/huggingface/.gitignore"), "*");
  EXPECT_TRUE(fs::exists(root / ".cache/huggingface/CACHEDIR.TAG"));
  for (const auto& e : fs::recursive_directory_iterator(root))
    EXPECT_FALSE(ends_with(e.path().string(), ".incomplete")) << e.path();
  EXPECT_FALSE(fs::exists(s.tmp.path / "hf_home/lerobot/hub")) << "the dataset also went to the snapshot cache";
  EXPECT_GT(testing::count_requests(request_paths(server), "/resolve/"), 0);

  // Again: the dataset is in root now and is used as it is (LeRobot loads a root's metadata
  // first and pulls only when that fails), so nothing is asked of the Hub.
  server.clear_log();
  ASSERT_EQ(run_cli(train + (s.tmp.path / "run2").string(), &s.log), 0) << s.log;
  EXPECT_EQ(testing::count_requests(request_paths(server), "/resolve/"), 0) << "a second run downloaded again";
}

// The local_dir bookkeeping itself, through the client: a second download of the same commit
// asks for nothing, a file edited after its download is fetched again, offline uses what is there.
TEST(HubLocalDir, MetadataDecidesWhatIsFetchedAgain) {
  Scratch s;
  Json config{{"token", "unused"}, {"faults", Json::object()},
              {"repos", Json::array({repo("dataset", "lerobot/reach-test", kDataCommit, s.data, {"v3.0"})})}};
  testing::HubServer server(config, s.tmp.path / "server");
  const fs::path dir = s.tmp.path / "local";
  const HubClient client = testing::make_client(server.endpoint(), s.tmp.path / "hf_home");
  const std::string file = "meta/stats.json";
  const fs::path got = client.download_to_local_dir(dir, RepoType::kDataset, "lerobot/reach-test", "main", file);
  ASSERT_EQ(got, dir / file);
  EXPECT_EQ(read_file(got), read_file(s.data / file));
  server.clear_log();
  client.download_to_local_dir(dir, RepoType::kDataset, "lerobot/reach-test", kDataCommit, file);
  EXPECT_EQ(server.requests().size(), 0u) << "the commit in the metadata was not trusted";
  // Edited after the download (mtime past the metadata's time): checked and replaced.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  write_file_atomic(got, "edited");
  client.download_to_local_dir(dir, RepoType::kDataset, "lerobot/reach-test", kDataCommit, file);
  EXPECT_EQ(read_file(got), read_file(s.data / file));
  EXPECT_EQ(testing::count_requests(request_paths(server), "/resolve/"), 2);  // HEAD + GET
  // Offline: a file that is there is used; a missing one is a usage error naming it.
  const HubClient offline = testing::make_client(server.endpoint(), s.tmp.path / "hf_home", "", true);
  EXPECT_EQ(offline.download_to_local_dir(dir, RepoType::kDataset, "lerobot/reach-test", "main", file), got);
  try {
    offline.download_to_local_dir(dir, RepoType::kDataset, "lerobot/reach-test", "main", "meta/info.json");
    FAIL() << "a missing file was served offline";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("HF_HUB_OFFLINE"), std::string::npos) << e.what();
    EXPECT_EQ(e.where(), (dir / "meta/info.json").string());
  }
}

TEST(HubResume, ConfigPathHubIdResumesFromTheLatestCheckpoint) {
  Scratch s;
  const fs::path run = s.tmp.path / "run";
  ASSERT_EQ(run_cli("train" + std::string(kTinyAct) + " --steps=4 --save_freq=2 --dataset.root=" + s.data.string() +
                        " --output_dir=" + run.string(), &s.log), 0) << s.log;
  // The model repo a run pushed its checkpoints to: checkpoints/000002/ and 000004/.
  const fs::path pushed = s.tmp.path / "pushed";
  fs::create_directories(pushed / "checkpoints");
  for (const char* step : {"000002", "000004"})
    fs::copy(run / "checkpoints" / step, pushed / "checkpoints" / step, fs::copy_options::recursive);
  const fs::path empty = s.tmp.path / "empty_repo";
  fs::create_directories(empty);
  write_file_atomic(empty / "README.md", "no checkpoints here\n");
  Json config{{"token", "unused"}, {"faults", Json::object()},
              {"repos", Json::array({repo("model", "me/act-run", std::string(40, '4'), pushed),
                                     repo("model", "me/no-ckpt", std::string(40, '5'), empty)})}};
  testing::HubServer server(config, s.tmp.path / "server");
  HubEnvironment env(server.endpoint(), s.tmp.path / "hf_home");
  const fs::path resumed = s.tmp.path / "resumed";
  ASSERT_EQ(run_cli("train --resume=true --config_path=me/act-run --steps=6 --output_dir=" + resumed.string(), &s.log),
            0) << s.log;
  EXPECT_NE(s.log.find("at step 4"), std::string::npos) << s.log;
  EXPECT_TRUE(fs::exists(resumed / "checkpoints/000004/training_state"));
  EXPECT_EQ(read_file(resumed / "checkpoints/000004/pretrained_model/model.safetensors"),
            read_file(run / "checkpoints/000004/pretrained_model/model.safetensors"));
  EXPECT_TRUE(fs::exists(resumed / "checkpoints/000006/pretrained_model/model.safetensors")) << s.log;
  EXPECT_EQ(fs::read_symlink(resumed / "checkpoints/last"), fs::path("000006"));
  EXPECT_EQ(testing::count_requests(request_paths(server), "checkpoints/000002"), 0) << "an older checkpoint was fetched";

  // A repo without checkpoints/<step>/: a usage error naming it, nothing trained.
  EXPECT_EQ(run_cli("train --resume=true --config_path=me/no-ckpt --output_dir=" + (s.tmp.path / "r2").string(),
                    &s.log), 2) << s.log;
  EXPECT_NE(s.log.find("me/no-ckpt"), std::string::npos) << s.log;
  EXPECT_FALSE(fs::exists(s.tmp.path / "r2/checkpoints"));
}

TEST(HubBackbone, TorchvisionWeightsNameIsFetchedOnceAndLoaded) {
  Scratch s;
  const fs::path tv = s.tmp.path / "tv";
  fs::create_directories(tv);
  testing::write_resnet18_weights(tv / "model.safetensors", 11);
  const std::string commit(40, '1');
  Json config{{"token", "unused"}, {"faults", Json::object()},
              {"repos", Json::array({repo("model", "timm/resnet18.tv_in1k", commit, tv)})}};
  // The tiny ACT with LeRobot's default backbone weights, and a backbone lr of 0 so the saved
  // backbone is exactly what was loaded.
  std::string act = kTinyAct;
  const std::string no_weights = " --policy.pretrained_backbone_weights=null";
  act.erase(act.find(no_weights), no_weights.size());
  act += " --policy.optimizer_lr_backbone=0 --dataset.root=" + s.data.string() + " --output_dir=";
  const fs::path home = s.tmp.path / "hf_home";
  {
    testing::HubServer server(config, s.tmp.path / "server");
    HubEnvironment env(server.endpoint(), home);
    ASSERT_EQ(run_cli("train" + act + (s.tmp.path / "run1").string(), &s.log), 0) << s.log;
    EXPECT_NE(s.log.find("backbone weights ResNet18_Weights.IMAGENET1K_V1: Hub repo timm/resnet18.tv_in1k"),
              std::string::npos) << s.log;
  }
  const fs::path cached = home / "hub/models--timm--resnet18.tv_in1k/snapshots" / commit / "model.safetensors";
  ASSERT_TRUE(fs::exists(cached));
  SafetensorsReader file(tv / "model.safetensors");
  SafetensorsReader saved(s.tmp.path / "run1/checkpoints/last/pretrained_model/model.safetensors");
  int compared = 0;
  for (const auto& name : file.names()) {
    if (starts_with(name, "fc.")) continue;
    const TensorView& a = file.at(name);
    const TensorView& b = saved.at("model.backbone." + name);
    ASSERT_EQ(a.shape, b.shape) << name;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(a.data), a.nbytes),
              std::string(reinterpret_cast<const char*>(b.data), b.nbytes)) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 100);  // 20 convolutions + 20 norms x 4 tensors of resnet18 up to layer4

  // Offline: served from the cache. Offline with an empty cache: an error naming the file, no step.
  HubEnvironment env("http://127.0.0.1:1", home);
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  EXPECT_EQ(run_cli("train" + act + (s.tmp.path / "run2").string(), &s.log), 0) << s.log;
  ::setenv("HF_HOME", (s.tmp.path / "empty_home").c_str(), 1);
  EXPECT_EQ(run_cli("train" + act + (s.tmp.path / "run3").string(), &s.log), 2) << s.log;
  EXPECT_NE(s.log.find("models--timm--resnet18.tv_in1k"), std::string::npos) << s.log;
  EXPECT_NE(s.log.find("model.safetensors"), std::string::npos) << s.log;
  EXPECT_NE(s.log.find("--policy.pretrained_backbone_weights"), std::string::npos) << s.log;
  EXPECT_EQ(s.log.find("step:"), std::string::npos) << s.log;
  EXPECT_FALSE(fs::exists(s.tmp.path / "run3/checkpoints"));
}

// torchvision's weights names map to timm's copies of the same tensors: V1 to tv_in1k, V2 to
// tv2_in1k, DEFAULT to torchvision's default (V1 for resnet18/34, V2 for resnet50/101/152).
TEST(HubBackbone, TorchvisionWeightsNamesMapToTimmsCopies) {
  const std::vector<std::pair<std::string, std::string>> want = {
      {"ResNet18_Weights.DEFAULT", "timm/resnet18.tv_in1k"},
      {"ResNet34_Weights.IMAGENET1K_V1", "timm/resnet34.tv_in1k"},
      {"ResNet50_Weights.IMAGENET1K_V1", "timm/resnet50.tv_in1k"},
      {"ResNet50_Weights.IMAGENET1K_V2", "timm/resnet50.tv2_in1k"},
      {"ResNet50_Weights.DEFAULT", "timm/resnet50.tv2_in1k"},
      {"ResNet101_Weights.DEFAULT", "timm/resnet101.tv2_in1k"},
      {"ResNet152_Weights.IMAGENET1K_V1", "timm/resnet152.tv_in1k"},
  };
  for (const auto& [name, repo] : want) {
    const auto published = published_torchvision_weights(name);
    ASSERT_TRUE(published) << name;
    EXPECT_EQ(published->repo_id, repo) << name;
    EXPECT_EQ(published->filename, "model.safetensors");
  }
  EXPECT_FALSE(published_torchvision_weights("ResNet18_Weights.IMAGENET1K_V2"));  // torchvision has no V2 of it
  EXPECT_EQ(known_torchvision_weights().size(), 13u);
}

}  // namespace
}  // namespace lerobot::hub

namespace lerobot::hub {
namespace {

// SmolVLA's --policy.vlm_model_name as a Hub id: the backbone's config.json and tokenizer files
// are fetched once into $HF_HUB_CACHE (its weights only with load_vlm_weights=true), the run
// trains on them, and offline a second run is served from the cache.
TEST(HubBackbone, SmolVLABackboneByHubIdIsFetchedOnceWithOnlyTheFilesItNeeds) {
  Scratch s;
  const std::string commit(40, '5');
  const fs::path vlm = fs::path(LEROBOT_SOURCE_DIR) / "tests/policies/data/smolvla_tiny_vlm";
  Json config{{"token", "unused"}, {"faults", Json::object()},
              {"repos", Json::array({repo("model", "HuggingFaceTB/tiny-smolvlm", commit, vlm)})}};
  const std::string run = " --policy.type=smolvla --policy.vlm_model_name=HuggingFaceTB/tiny-smolvlm"
                          " --policy.num_vlm_layers=4 --policy.chunk_size=4 --policy.n_action_steps=4"
                          " --policy.max_state_dim=8 --policy.max_action_dim=8 --policy.resize_imgs_with_padding=[32,32]"
                          " --batch_size=2 --steps=2 --num_workers=0 --dataset.root=" + s.data.string() + " --output_dir=";
  const fs::path home = s.tmp.path / "hf_home";
  const fs::path snapshot = home / "hub/models--HuggingFaceTB--tiny-smolvlm/snapshots" / commit;
  {
    testing::HubServer server(config, s.tmp.path / "server");
    HubEnvironment env(server.endpoint(), home);
    ASSERT_EQ(run_cli("train" + run + (s.tmp.path / "run1").string(), &s.log), 0) << s.log;
    EXPECT_TRUE(fs::exists(snapshot / "config.json"));
    EXPECT_TRUE(fs::exists(snapshot / "tokenizer.json"));
    EXPECT_TRUE(fs::exists(snapshot / "tokenizer_config.json"));
    EXPECT_FALSE(fs::exists(snapshot / "model.safetensors")) << "the weights are fetched only to be loaded";
    EXPECT_TRUE(fs::exists(s.tmp.path / "run1/checkpoints/last/pretrained_model/tokenizer/tokenizer.json"));
    ASSERT_EQ(run_cli("train" + run + (s.tmp.path / "run2").string() + " --policy.load_vlm_weights=true", &s.log), 0)
        << s.log;
    EXPECT_TRUE(fs::exists(snapshot / "model.safetensors"));
  }
  // Offline, from the cache; offline with an empty cache: an error naming the flag, no step.
  HubEnvironment env("http://127.0.0.1:1", home);
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  EXPECT_EQ(run_cli("train" + run + (s.tmp.path / "run3").string(), &s.log), 0) << s.log;
  ::setenv("HF_HOME", (s.tmp.path / "empty_home").c_str(), 1);
  EXPECT_EQ(run_cli("train" + run + (s.tmp.path / "run4").string(), &s.log), 2) << s.log;
  EXPECT_NE(s.log.find("--policy.vlm_model_name"), std::string::npos) << s.log;
  EXPECT_NE(s.log.find("models--HuggingFaceTB--tiny-smolvlm"), std::string::npos) << s.log;
  EXPECT_EQ(s.log.find("step:"), std::string::npos) << s.log;
  ::unsetenv("HF_HUB_OFFLINE");
}

}  // namespace
}  // namespace lerobot::hub
