// MetricsTracker accounting and console format, JSONL sink, progress bar text and warnings.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "lerobot/common/fs.h"
#include "lerobot/train/metrics/metric_sinks.h"
#include "lerobot/train/metrics/metrics_tracker.h"
#include "lerobot/common/progress.h"
#include "lerobot/train/metrics/train_warnings.h"
#include "support/process_temp_dir.h"

using namespace lerobot;

TEST(Metrics, PythonFormatting) {
  EXPECT_EQ(format_python(0.375, ":.3f"), "0.375");
  EXPECT_EQ(format_python(1e-5, ":0.1e"), "1.0e-05");
  EXPECT_EQ(format_python(2.5e-4, ":0.1e"), "2.5e-04");
  EXPECT_EQ(format_python(1234.6, ":.0f"), "1235");
  EXPECT_EQ(format_python(0.5, ":f"), "0.500000");
  EXPECT_EQ(format_python(-std::nan(""), ":.3f"), "nan");
  EXPECT_EQ(format_python(-INFINITY, ":.3f"), "-inf");
  EXPECT_EQ(format_python(3.14159, ":8.2f"), "    3.14");
  EXPECT_EQ(format_big_number(999), "999");
  EXPECT_EQ(format_big_number(1000), "1K");
  EXPECT_EQ(format_big_number(1600), "2K");
  EXPECT_EQ(format_big_number(2500000), "2M");  // round-half-even like Python's format
  EXPECT_EQ(format_big_number(3.2e9), "3B");
  EXPECT_EQ(format_big_number(12.5, 1), "12.5");
}

TEST(Metrics, AccountingAndConsoleLine) {
  // 8 per rank × 2 ranks; 1000 frames in 10 episodes (100 frames per episode).
  MetricsTracker t(8, 1000, 10, /*initial_step=*/0, /*world_size=*/2);
  t.add_meter("loss", AverageMeter("loss", ":.3f", ReduceKind::kMean));
  t.add_meter("grad_norm", AverageMeter("grdn", ":.3f"));
  t.add_meter("lr", AverageMeter("lr", ":0.1e"));
  t.add_meter("update_s", AverageMeter("updt_s", ":.3f", ReduceKind::kMax));
  t.add_meter("dataloading_s", AverageMeter("data_s", ":.3f", ReduceKind::kMax));
  for (int i = 0; i < 100; ++i) t.step();
  EXPECT_EQ(t.steps(), 100);
  EXPECT_EQ(t.samples(), 1600);
  EXPECT_DOUBLE_EQ(t.episodes(), 16.0);
  EXPECT_DOUBLE_EQ(t.epochs(), 1.6);
  t.update("loss", 0.5);
  t.update("loss", 0.25);
  t.update("grad_norm", 1.23456);
  t.update("lr", 1e-5);
  t.update("update_s", 0.1);
  t.update("dataloading_s", 0.02);
  t.update_output("l1_loss", 0.125);
  t.update_output("loss", 1000.0);  // never replaces the train-loop meter's registration
  EXPECT_EQ(t.to_string(),
            "step:100 smpl:2K ep:16 epch:1.60 loss:333.583 grdn:1.235 lr:1.0e-05 updt_s:0.100 "
            "data_s:0.020 l1_loss:0.125");

  Json d = t.to_dict();
  EXPECT_EQ(d["steps"].get<int64_t>(), 100);
  EXPECT_EQ(d["samples"].get<int64_t>(), 1600);
  EXPECT_DOUBLE_EQ(d["epochs"].get<double>(), 1.6);
  EXPECT_DOUBLE_EQ(d["grad_norm"].get<double>(), 1.23456);
  EXPECT_TRUE(d.contains("l1_loss"));

  t.reset_averages();
  EXPECT_EQ(t.meter("loss").count, 0.0);
  EXPECT_NE(t.to_string().find("loss:0.000"), std::string::npos);
}

// The log line adds the time it waited for the device to each window's update_s and step_s: the
// total is spread over the window's steps (no extra sample), and the next window starts clean.
TEST(Metrics, SpreadAddsTimeToTheWindowWithoutAddingASample) {
  AverageMeter m("updt_s", ":.3f");
  m.spread(1.0);  // nothing recorded yet: no average to form
  EXPECT_EQ(m.avg, 0.0);
  m.reset();
  for (double v : {0.001, 0.003}) m.update(v);
  m.spread(0.096);  // the device needed 96 ms more than the host saw for these two steps
  EXPECT_EQ(m.count, 2.0);
  EXPECT_NEAR(m.avg, 0.050, 1e-12);
  EXPECT_EQ(m.to_string(), "updt_s:0.050");
  m.reset();
  m.update(0.002);
  EXPECT_NEAR(m.avg, 0.002, 1e-12);
}

TEST(Metrics, ResumedTrackerStartsFromInitialStep) {
  MetricsTracker t(4, 200, 4, /*initial_step=*/50, /*world_size=*/1);
  EXPECT_EQ(t.samples(), 200);
  EXPECT_DOUBLE_EQ(t.epochs(), 1.0);
  EXPECT_DOUBLE_EQ(t.episodes(), 4.0);
}

TEST(Metrics, ReduceAcrossRanksBucketsByKind) {
  MetricsTracker t(1, 10, 1);
  t.add_meter("loss", AverageMeter("loss", ":.3f", ReduceKind::kMean));
  t.add_meter("grad_norm", AverageMeter("grdn", ":.3f"));
  t.add_meter("update_s", AverageMeter("updt_s", ":.3f", ReduceKind::kMax));
  t.add_meter("data_s", AverageMeter("data_s", ":.3f", ReduceKind::kMax));
  t.update("loss", 2.0);
  t.update("loss", 4.0);  // avg 3, count 2
  t.update("grad_norm", 7.0);
  t.update("update_s", 1.0);
  t.update("data_s", 0.5);
  std::vector<std::string> calls;
  t.reduce_across_ranks([&](std::vector<float>& v, ReduceKind kind) {
    calls.push_back(std::string(reduce_kind_name(kind)) + ":" + std::to_string(v.size()));
    for (auto& x : v) x = kind == ReduceKind::kMean ? x / 3.0f : x * 10.0f;  // a fake collective
  });
  EXPECT_EQ(calls, std::vector<std::string>({"mean:1", "max:2"}));
  EXPECT_DOUBLE_EQ(t.meter("loss").avg, 1.0);
  EXPECT_DOUBLE_EQ(t.meter("loss").sum, 2.0);  // avg × count
  EXPECT_DOUBLE_EQ(t.meter("grad_norm").avg, 7.0);  // "none" is not reduced
  EXPECT_DOUBLE_EQ(t.meter("update_s").avg, 10.0);
  EXPECT_DOUBLE_EQ(t.meter("data_s").avg, 5.0);
}

TEST(Metrics, DefaultTrainMeters) {
  MetricsTracker t(1, 10, 1);
  add_default_train_meters(t, /*cuda=*/false);
  EXPECT_EQ(t.meter("grad_norm").name(), "grdn");
  EXPECT_EQ(t.meter("dataloading_s").reduction(), ReduceKind::kMax);
  EXPECT_EQ(t.meter("samples_per_s").name(), "smp/s");
  EXPECT_FALSE(t.has("gpu_mem_gb"));
  // The console line in LeRobot 0.6.2's order.
  const std::string line = t.to_string();
  std::vector<size_t> at;
  for (const char* name : {"loss:", "grdn:", "lr:", "data_s:", "prep_s:", "updt_s:", "step_s:", "smp/s:"}) {
    at.push_back(line.find(name));
    EXPECT_NE(at.back(), std::string::npos) << name << " in " << line;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << line;
  MetricsTracker c(1, 10, 1);
  add_default_train_meters(c, /*cuda=*/true);
  EXPECT_EQ(c.meter("gpu_mem_gb").name(), "mem_gb");
}

TEST(Metrics, JsonlLinesParse) {
  const auto path = lerobot::testing::process_temp_dir() / "metrics.jsonl";
  fs::remove(path);
  MetricsTracker t(2, 100, 5);
  t.add_meter("loss", AverageMeter("loss", ":.3f", ReduceKind::kMean));
  {
    JsonlSink sink(path, /*append=*/false);
    t.step();
    t.update("loss", 0.75);
    sink.write(metrics_record(t));
    t.reset_averages();
    t.step();
    t.update("loss", std::nan(""));
    sink.write(metrics_record(t, "eval"));
  }
  std::ifstream in(path);
  std::string line;
  std::vector<Json> rows;
  while (std::getline(in, line)) rows.push_back(Json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["split"], "train");
  EXPECT_EQ(rows[0]["step"].get<int64_t>(), 1);
  EXPECT_EQ(rows[0]["samples"].get<int64_t>(), 2);
  EXPECT_DOUBLE_EQ(rows[0]["loss"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(rows[0]["epochs"].get<double>(), 0.02);
  EXPECT_GT(rows[0]["wall_time"].get<double>(), 1.6e9);
  EXPECT_EQ(rows[1]["split"], "eval");
  EXPECT_EQ(rows[1]["step"].get<int64_t>(), 2);
  EXPECT_TRUE(rows[1]["loss"].is_null());
  {
    JsonlSink again(path, /*append=*/true);
    again.write(Json{{"step", 3}});
  }
  std::ifstream in2(path);
  int n = 0;
  while (std::getline(in2, line)) ++n;
  EXPECT_EQ(n, 3);
  fs::remove(path);
}

// A resumed run rewrites the metrics file without the records after its checkpoint's step and
// without a line torn by the crash; every other line stays as it was.
TEST(Metrics, ResumeDropsTheRecordsAfterTheCheckpointStep) {
  const auto path = lerobot::testing::process_temp_dir() / "resumed.jsonl";
  const std::string kept = "{\"split\":\"train\",\"step\":2,\"loss\":0.5}\n{\"note\":\"no step\"}\n"
                           "{\"split\":\"eval\",\"step\":4}\n";
  write_file_atomic(path, kept + "{\"split\":\"train\",\"step\":6}\n{\"split\":\"eval\",\"step\":6}\n{\"split\":\"tr");
  EXPECT_EQ(drop_records_after_step(path, 4), 3);
  EXPECT_EQ(read_file(path), kept);
  EXPECT_EQ(drop_records_after_step(path, 4), 0);  // nothing left to drop: the file is not rewritten
  EXPECT_EQ(read_file(path), kept);
  EXPECT_EQ(drop_records_after_step(path, 1), 2);
  EXPECT_EQ(read_file(path), "{\"note\":\"no step\"}\n");
  fs::remove(path);
  EXPECT_EQ(drop_records_after_step(path, 1), 0);  // no file yet: a fresh output dir
}

// A crash can leave a file longer than what was written, the tail reading as zero bytes (a power
// loss on ext4's delayed allocation): a 300 MB tail, past read_file's 256 MiB cap, is one torn
// line. The records before it are kept, in place (the same inode: cut, not rewritten).
TEST(Metrics, ResumeCutsAZeroTailLongerThanAnyFileReadWhole) {
  const auto path = lerobot::testing::process_temp_dir() / "zero_tail.jsonl";
  const std::string kept = "{\"split\":\"train\",\"step\":2}\n{\"split\":\"train\",\"step\":4}\n";
  write_file_atomic(path, kept);
  fs::resize_file(path, 300ull << 20);  // sparse: no disk used
  ASSERT_GT(fs::file_size(path), kMaxTextFileBytes);
  const auto inode = [&] {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return st.st_ino;
  };
  const auto before = inode();
  EXPECT_EQ(drop_records_after_step(path, 4), 1);
  EXPECT_EQ(read_file(path), kept);
  EXPECT_EQ(inode(), before);
  fs::remove(path);
}

TEST(ProgressBar, RenderAndEta) {
  EXPECT_EQ(format_hms(3661), "01:01:01");
  EXPECT_EQ(format_hms(-1), "--:--:--");
  // 18766 steps left at 12.5 it/s = 1501.28 s = 00:25:01.
  EXPECT_EQ(render_progress(1234, 20000, 12.5), "[  1234/20000   6% | 12.5 it/s | ETA 00:25:01 ]");
  EXPECT_EQ(render_progress(0, 10, 0.0), "[  0/10   0% | 0.0 it/s | ETA --:--:-- ]");
  EXPECT_EQ(render_progress(3, 4, 2.0, "episodes"), "[ 3/4  75% | 2.0 episodes/s | ETA 00:00:01 ]");
  {
    ::testing::internal::CaptureStderr();
    ProgressBar lines(100, 0, ProgressDisplay::kLines, "validate", "files");
    for (int i = 1; i <= 100; ++i) lines.update(i);
    lines.finish();
    const std::string err = ::testing::internal::GetCapturedStderr();
    size_t n = 0;
    for (size_t at = err.find("validate: ["); at != std::string::npos; at = err.find("validate: [", at + 1)) ++n;
    EXPECT_EQ(n, 11u) << err;  // at 1 (the first), then each tenth; finish adds none after 100%
    EXPECT_NE(err.find("validate: [ 100/100 100% |"), std::string::npos) << err;
    EXPECT_EQ(err.find('\r'), std::string::npos) << err;
    // Work that stops early: finish() repeats nothing already shown, and shows what is new.
    ::testing::internal::CaptureStderr();
    ProgressBar early(10, 0, ProgressDisplay::kLines, "early");
    early.update(3);
    early.finish();
    ProgressBar later(100, 0, ProgressDisplay::kLines, "later");
    later.update(1);
    later.update(5);
    later.finish();
    const std::string stopped = ::testing::internal::GetCapturedStderr();
    auto count = [&](const std::string& w) {
      size_t k = 0;
      for (size_t at = stopped.find(w); at != std::string::npos; at = stopped.find(w, at + 1)) ++k;
      return k;
    };
    EXPECT_EQ(count("early: ["), 1u) << stopped;
    EXPECT_EQ(count("later: ["), 2u) << stopped;
    EXPECT_EQ(count("later: [   5/100   5% |"), 1u) << stopped;
  }
  ProgressBar off(10, 0, /*enabled=*/false);
  off.update(5);
  off.finish();
  EXPECT_FALSE(off.enabled());
}

TEST(Warnings, InputBoundAndScheduleHorizon) {
  auto w = input_bound_warning(0.6, 1.0);
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("--num_workers"), std::string::npos);
  EXPECT_NE(w->find("resolution"), std::string::npos);
  EXPECT_NE(w->find("video"), std::string::npos);
  EXPECT_TRUE(input_bound_warning(0.5, 1.0).has_value());
  EXPECT_FALSE(input_bound_warning(0.49, 1.0).has_value());

  DiffuserSchedulerConfig d;
  d.num_warmup_steps = 500;
  EXPECT_TRUE(schedule_horizon_warning(&d, 100).has_value());
  EXPECT_FALSE(schedule_horizon_warning(&d, 1000).has_value());
  EXPECT_FALSE(schedule_horizon_warning(nullptr, 1).has_value());
  CosineDecayWithWarmupSchedulerConfig c;
  c.num_warmup_steps = 10;
  c.num_decay_steps = 3000;
  EXPECT_TRUE(schedule_horizon_warning(&c, 1000).has_value());
  EXPECT_FALSE(schedule_horizon_warning(&c, 3000).has_value());
  // VQ-BeT's warm-up starts after its VQ-VAE steps.
  VQBeTSchedulerConfig v;
  v.num_warmup_steps = 500;
  v.num_vqvae_training_steps = 20000;
  const auto vw = schedule_horizon_warning(&v, 10000);
  ASSERT_TRUE(vw.has_value());
  EXPECT_NE(vw->find("--policy.n_vqvae_training_steps"), std::string::npos) << *vw;
  EXPECT_TRUE(schedule_horizon_warning(&v, 20400).has_value());
  EXPECT_FALSE(schedule_horizon_warning(&v, 20500).has_value());
}
