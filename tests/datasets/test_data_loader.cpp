// DataLoader: batch shapes, deterministic order across worker counts, error propagation.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <set>

#include "dataset_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/data_loader.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/common/fs.h"

namespace lerobot {
namespace {

class Loader : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testing::TempDir("loader");
    testing::SynthSpec s;
    s.episodes = 3;
    s.frames_per_episode = 10;
    testing::write_synth_dataset(tmp_->path / "ds", s);
  }
  static void TearDownTestSuite() { delete tmp_; }
  static std::shared_ptr<LeRobotDataset> open(const fs::path& root) {
    LeRobotDatasetOptions o;
    o.delta_indices["action"] = {0, 1, 2, 3};
    return std::make_shared<LeRobotDataset>(root, o);
  }
  static testing::TempDir* tmp_;
};
testing::TempDir* Loader::tmp_ = nullptr;

TEST_F(Loader, ConcatenatedVideosValidate) {
  // Default size limits: all episodes share one data file and one mp4 per camera.
  const ValidationReport r = validate_dataset(tmp_->path / "ds");
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  const DatasetMetadata m = load_dataset_metadata(tmp_->path / "ds");
  const auto& v = m.episodes[2].videos.at("observation.images.a");
  EXPECT_EQ(v.file_index, 0);
  EXPECT_NEAR(v.from_timestamp, 2.0, 1e-9);  // two 10-frame episodes at 10 fps before it
  EXPECT_NEAR(v.to_timestamp, 3.0, 1e-9);
}

TEST_F(Loader, SameBatchesWithZeroAndThreeWorkers) {
  auto ds = open(tmp_->path / "ds");
  DataLoaderOptions o;
  o.batch_size = 4;
  o.seed = 1000;
  o.num_workers = 0;
  o.pin_memory = 0;
  DataLoader a(ds, o);
  o.num_workers = 3;
  o.prefetch_factor = 2;
  DataLoader b(ds, o);
  EXPECT_EQ(a.batches_per_epoch(), 8);  // ceil(30 / 4)
  for (int k = 0; k < 10; ++k) {  // crosses an epoch boundary
    DataBatch x = a.next(), y = b.next();
    ASSERT_EQ(x.indices, y.indices) << "batch " << k;
    EXPECT_EQ(x.step, k);
    ASSERT_EQ(x.tensors.size(), y.tensors.size());
    for (const auto& [key, t] : x.tensors) EXPECT_TRUE(torch::equal(t, y.tensors.at(key))) << key;
    EXPECT_EQ(x.tasks, y.tasks);
    const int64_t bsz = static_cast<int64_t>(x.indices.size());
    EXPECT_EQ(x.tensors.at("action").sizes(), (std::vector<int64_t>{bsz, 4, 3}));
    EXPECT_EQ(x.tensors.at("action_is_pad").sizes(), (std::vector<int64_t>{bsz, 4}));
    EXPECT_EQ(x.tensors.at("observation.images.a").sizes(), (std::vector<int64_t>{bsz, 3, 64, 80}));
    EXPECT_EQ(x.tensors.at("index").sizes(), (std::vector<int64_t>{bsz}));
    for (int64_t i = 0; i < bsz; ++i) EXPECT_EQ(x.tensors.at("index")[i].item<int64_t>(), x.indices[i]);
  }
  // The order is the sampler's: batch 0 = first 4 of epoch 0's order.
  EpisodeAwareSampler s(ds->episode_ranges(), 0, 0, true, 1000);
  const auto order = s.epoch_order(0);
  DataLoader c(ds, o);
  EXPECT_EQ(c.next().indices, std::vector<int64_t>(order.begin(), order.begin() + 4));
}

TEST_F(Loader, WorkerErrorNamesTheMissingVideo) {
  testing::TempDir copy("loader_err");
  fs::copy(tmp_->path / "ds", copy.path / "ds", fs::copy_options::recursive);
  auto ds = open(copy.path / "ds");
  const fs::path victim = copy.path / "ds/videos/observation.images.b/chunk-000/file-000.mp4";
  ASSERT_TRUE(fs::exists(victim));
  fs::remove(victim);
  DataLoaderOptions o;
  o.batch_size = 4;
  o.num_workers = 2;
  o.pin_memory = 0;
  DataLoader l(ds, o);
  try {
    l.next();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("observation.images.b/chunk-000/file-000.mp4"), std::string::npos) << w;
    EXPECT_NE(w.find("episode"), std::string::npos) << w;
    EXPECT_NE(w.find("frame_index"), std::string::npos) << w;
  }
}

TEST_F(Loader, ShardedLoadersSplitTheEpoch) {
  auto ds = open(tmp_->path / "ds");
  DataLoaderOptions o;
  o.batch_size = 5;
  o.world_size = 2;
  o.num_workers = 1;
  o.pin_memory = 0;
  o.seed = 4;
  std::set<int64_t> seen;
  for (int64_t r = 0; r < 2; ++r) {
    o.rank = r;
    DataLoader l(ds, o);
    EXPECT_EQ(l.batches_per_epoch(), 3);
    for (int k = 0; k < 3; ++k)
      for (int64_t i : l.next().indices) EXPECT_TRUE(seen.insert(i).second) << "index " << i << " seen twice";
  }
  EXPECT_EQ(seen.size(), 30u);
}

// A worker stuck on a file (here a video replaced by a FIFO that nobody writes yet, as a stalled
// network file system would hold it) is reported while next() waits: the step, the worker, the
// frame and the file. When the file answers, the wait ends (with a batch or an error naming it).
TEST_F(Loader, AStalledFileIsReportedWhileNextWaits) {
  const fs::path root = tmp_->path / "stalled";
  fs::remove_all(root);
  fs::copy(tmp_->path / "ds", root, fs::copy_options::recursive);
  auto ds = open(root);
  const fs::path video = root / ds->meta().episode(0).videos.at("observation.images.a").file;
  const std::string bytes = read_file(video, 1ull << 30);
  fs::remove(video);
  ASSERT_EQ(::mkfifo(video.c_str(), 0600), 0);
  DataLoaderOptions o;
  o.batch_size = 1;
  o.shuffle = false;
  o.num_workers = 1;
  o.pin_memory = 0;
  o.stall_report_s = 0.3;
  DataLoader loader(ds, o);
  ::testing::internal::CaptureStderr();
  auto batch = std::async(std::launch::async, [&] { return loader.next(); });
  EXPECT_EQ(batch.wait_for(std::chrono::milliseconds(1500)), std::future_status::timeout);
  // The file answers now. Opening the FIFO read-write lets the worker's blocked open return; the
  // real file then takes the FIFO's place (later opens get it), and the worker reads the bytes
  // written into the FIFO, as much as its buffer takes, then end of file.
  const int fd = ::open(video.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  write_file_atomic(video, bytes);
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n <= 0) break;
    at += size_t(n);
  }
  ::close(fd);
  std::string error;
  try {
    const DataBatch b = batch.get();
    EXPECT_EQ(b.indices, std::vector<int64_t>{0});
  } catch (const Error& e) {  // a FIFO cannot seek: the decoder may refuse it, naming the file
    error = e.what();
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  if (!error.empty()) {
    EXPECT_NE(error.find(video.string()), std::string::npos) << error;
  }
  EXPECT_NE(log.find("data loader: the batch for step 0 is not ready after 0."), std::string::npos) << log;
  EXPECT_NE(log.find("Worker 0: on index 0 (episode 0, frame_index 0; videos: " + video.string()), std::string::npos) << log;
  EXPECT_NE(log.find("stalled disk or network file system"), std::string::npos) << log;
}

}  // namespace
}  // namespace lerobot
