// DatasetWriter::finalize: meta/episodes parquet, tasks.parquet, info.json and stats.json.
#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/datasets/dataset_writer.h"
#include "lerobot/io/parquet/parquet_writer.h"

namespace lerobot {

namespace {
Json number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}
}  // namespace

void DatasetWriter::finalize() {
  if (finalized_) return;
  if (buffered_frames() > 0) throw_usage("unsaved frames: call save_episode() before finalize()", root_.string());
  if (episodes_.empty()) throw_usage("no episodes recorded", root_.string());
  if (data_writer_) {
    data_writer_->close();
    data_writer_.reset();
  }
  write_episodes_parquet();
  write_tasks_parquet();
  write_info();
  write_file_atomic(root_ / "meta/stats.json", dump_pretty(stats_to_json(aggregate_stats(episode_stats_))));
  finalized_ = true;
}

void DatasetWriter::write_episodes_parquet() {
  std::vector<ParquetField> fields{ParquetField::scalar("episode_index", parquet::Type::kInt64),
                                   ParquetField::string_list("tasks"),
                                   ParquetField::scalar("length", parquet::Type::kInt64),
                                   ParquetField::scalar("data/chunk_index", parquet::Type::kInt64),
                                   ParquetField::scalar("data/file_index", parquet::Type::kInt64),
                                   ParquetField::scalar("dataset_from_index", parquet::Type::kInt64),
                                   ParquetField::scalar("dataset_to_index", parquet::Type::kInt64)};
  std::vector<std::string> vkeys;
  for (const auto& f : features_)
    if (f.is_video()) vkeys.push_back(f.key);
  for (const auto& k : vkeys) {
    fields.push_back(ParquetField::scalar("videos/" + k + "/chunk_index", parquet::Type::kInt64));
    fields.push_back(ParquetField::scalar("videos/" + k + "/file_index", parquet::Type::kInt64));
    fields.push_back(ParquetField::scalar("videos/" + k + "/from_timestamp", parquet::Type::kDouble));
    fields.push_back(ParquetField::scalar("videos/" + k + "/to_timestamp", parquet::Type::kDouble));
  }
  fields.push_back(ParquetField::scalar("meta/episodes/chunk_index", parquet::Type::kInt64));
  fields.push_back(ParquetField::scalar("meta/episodes/file_index", parquet::Type::kInt64));
  const int64_t n = num_episodes();
  ParquetRowGroup g(n);
  std::vector<int64_t> ei, len, dc, df, from, to, zero(n, 0);
  ParquetColumn<std::string> tasks;
  tasks.num_rows = n;
  tasks.offsets.assign(1, {0});
  for (const auto& e : episodes_) {
    ei.push_back(e.episode_index);
    len.push_back(e.length);
    dc.push_back(e.data_chunk_index);
    df.push_back(e.data_file_index);
    from.push_back(e.dataset_from_index);
    to.push_back(e.dataset_to_index);
    for (const auto& t : e.tasks) tasks.values.push_back(t);
    tasks.offsets[0].push_back(static_cast<int64_t>(tasks.values.size()));
  }
  g.set<int64_t>("episode_index", ei);
  g.set<std::string>("tasks", tasks);
  g.set<int64_t>("length", len);
  g.set<int64_t>("data/chunk_index", dc);
  g.set<int64_t>("data/file_index", df);
  g.set<int64_t>("dataset_from_index", from);
  g.set<int64_t>("dataset_to_index", to);
  for (const auto& k : vkeys) {
    std::vector<int64_t> c, f;
    std::vector<double> a, b;
    for (const auto& e : episodes_) {
      const auto& v = e.videos.at(k);
      c.push_back(v.chunk_index);
      f.push_back(v.file_index);
      a.push_back(v.from_timestamp);
      b.push_back(v.to_timestamp);
    }
    g.set<int64_t>("videos/" + k + "/chunk_index", c);
    g.set<int64_t>("videos/" + k + "/file_index", f);
    g.set<double>("videos/" + k + "/from_timestamp", a);
    g.set<double>("videos/" + k + "/to_timestamp", b);
  }
  g.set<int64_t>("meta/episodes/chunk_index", zero);
  g.set<int64_t>("meta/episodes/file_index", zero);
  const fs::path p = root_ / "meta/episodes/chunk-000/file-000.parquet";
  fs::create_directories(p.parent_path());
  ParquetWriter w(p, fields);
  w.write_row_group(g);
  w.close();
}

void DatasetWriter::write_tasks_parquet() {
  std::vector<ParquetField> fields{ParquetField::scalar("task_index", parquet::Type::kInt64),
                                   ParquetField::string("task")};
  const int64_t n = static_cast<int64_t>(tasks_.size());
  ParquetRowGroup g(n);
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  g.set<int64_t>("task_index", idx);
  g.set<std::string>("task", tasks_);
  ParquetWriter w(root_ / "meta/tasks.parquet", fields);
  w.set_metadata("pandas", pandas_metadata_json(fields, {"task"}));
  w.write_row_group(g);
  w.close();
}

void DatasetWriter::write_info() {
  Json feats = Json::object();
  for (auto f : features_) {
    if (f.is_video() && video_info_.count(f.key)) f.info = video_info_.at(f.key);
    feats[f.key] = f.to_json();
  }
  bool has_video = !video_cursor_.empty();
  Json j = Json::object();
  j["codebase_version"] = "v3.0";
  j["fps"] = fps_;
  j["features"] = feats;
  j["total_episodes"] = num_episodes();
  j["total_frames"] = total_frames_;
  j["total_tasks"] = static_cast<int64_t>(tasks_.size());
  j["chunks_size"] = options_.chunks_size;
  j["data_files_size_in_mb"] = number(options_.data_files_size_in_mb);
  j["video_files_size_in_mb"] = number(options_.video_files_size_in_mb);
  j["data_path"] = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
  j["video_path"] = has_video ? Json("videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4") : Json();
  j["robot_type"] = options_.robot_type.empty() ? Json() : Json(options_.robot_type);
  j["splits"] = Json::object({{"train", "0:" + std::to_string(num_episodes())}});
  write_file_atomic(root_ / "meta/info.json", dump_pretty(j));
}

}  // namespace lerobot
