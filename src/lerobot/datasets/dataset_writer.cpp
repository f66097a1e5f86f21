// DatasetWriter: LeRobot v3.0 layout, one row group per episode, videos appended per episode,
// image features as PNG bytes in the data parquet (HF datasets' Image struct).
#include "lerobot/datasets/dataset_writer.h"

#include <cmath>
#include <cstdio>

#include "lerobot/common/error.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/io/parquet/parquet_writer.h"
#include "lerobot/io/video/png_codec.h"
#include "lerobot/io/video/video_concat.h"
#include "lerobot/io/video/video_probe.h"

namespace lerobot {

namespace {
constexpr const char* kDataPath = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
constexpr const char* kVideoPath = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";

void advance(int64_t& chunk, int64_t& file, int64_t chunks_size) {
  if (++file >= chunks_size) {
    file = 0;
    ++chunk;
  }
}


FeatureSpec default_feature(const char* key) {
  FeatureSpec f;
  f.key = key;
  f.dtype = std::string(key) == "timestamp" ? "float32" : "int64";
  f.shape = {1};
  return f;
}
}  // namespace

struct DatasetWriter::Buffer {
  std::map<std::string, std::vector<float>> values;            // vector features, row-major
  std::map<std::string, std::vector<torch::Tensor>> frames;    // cameras, uint8 (3,H,W)
  int64_t length = 0;
};

DatasetWriter::DatasetWriter(fs::path root, int64_t fps, std::vector<FeatureSpec> features,
                             DatasetWriterOptions options)
    : root_(std::move(root)), fps_(fps), options_(std::move(options)), buffer_(std::make_unique<Buffer>()) {
  if (fps <= 0) throw_usage("fps must be positive", root_.string());
  if (fs::exists(root_) && !fs::is_empty(root_))
    throw_usage("dataset directory already exists and is not empty", root_.string(), "choose a new directory");
  for (auto& f : features) {
    if (f.key.find('/') != std::string::npos) throw_usage("feature keys must not contain '/'", f.key);
    if (is_default_feature(f.key)) throw_usage("feature key is reserved", f.key);
    if (f.is_camera()) {
      if (f.shape.size() != 3 || f.shape[2] != 3) throw_usage(f.dtype + " features need shape [H, W, 3]", f.key);
      f.names = Json::array({"height", "width", "channels"});
      if (f.is_video()) video_cursor_[f.key] = {};
    } else if (f.dtype != "float32" || f.shape.size() != 1) {
      throw_usage("only float32 1-D features and video or image cameras can be written", f.key);
    }
    features_.push_back(f);
  }
  for (const char* k : kDefaultFeatureKeys) features_.push_back(default_feature(k));
  fs::create_directories(root_ / "meta");
}

DatasetWriter::~DatasetWriter() = default;

int64_t DatasetWriter::buffered_frames() const { return buffer_->length; }

fs::path DatasetWriter::video_file(const std::string& key, int64_t chunk, int64_t file) const {
  return root_ / format_path_template(kVideoPath, {{"chunk_index", chunk}, {"file_index", file}}, {{"video_key", key}});
}

void DatasetWriter::add_frame(const std::map<std::string, torch::Tensor>& frame) {
  if (finalized_) throw_usage("add_frame after finalize()", root_.string());
  for (const auto& f : features_) {
    if (is_default_feature(f.key)) continue;
    auto it = frame.find(f.key);
    if (it == frame.end()) throw_usage("frame lacks feature '" + f.key + "'", root_.string());
    torch::Tensor t = it->second.detach().cpu();
    if (f.is_camera()) {
      const int64_t h = f.shape[0], w = f.shape[1];
      if (t.dim() == 3 && t.size(0) == h && t.size(1) == w && t.size(2) == 3) t = t.permute({2, 0, 1});
      if (t.dim() != 3 || t.size(0) != 3 || t.size(1) != h || t.size(2) != w)
        throw_usage("camera frame has the wrong shape", f.key, "pass uint8 (H,W,3) or (3,H,W)");
      buffer_->frames[f.key].push_back(t.to(torch::kUInt8).contiguous());
    } else {
      t = t.to(torch::kFloat32).contiguous().reshape({-1});
      if (t.numel() != f.shape[0]) throw_usage("vector has the wrong size", f.key);
      auto& v = buffer_->values[f.key];
      v.insert(v.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    }
  }
  ++buffer_->length;
}

void DatasetWriter::save_episode(const std::string& task) {
  if (finalized_) throw_usage("save_episode after finalize()", root_.string());
  if (buffer_->length == 0) throw_usage("save_episode with no frames", root_.string());
  int64_t task_index = -1;
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (tasks_[i] == task) task_index = static_cast<int64_t>(i);
  if (task_index < 0) {
    task_index = static_cast<int64_t>(tasks_.size());
    tasks_.push_back(task);
  }
  EpisodeInfo ep;
  ep.episode_index = num_episodes();
  ep.tasks = {task};
  ep.length = buffer_->length;
  ep.dataset_from_index = total_frames_;
  ep.dataset_to_index = total_frames_ + ep.length;
  write_data(ep, task_index);
  ep.data_chunk_index = data_chunk_;
  ep.data_file_index = data_file_;
  write_videos(ep);

  // Per-episode stats.
  DatasetStats st;
  const int64_t n = ep.length;
  for (const auto& f : features_) {
    if (f.is_camera()) {
      std::vector<torch::Tensor> picks;
      for (int64_t i : sample_frame_indices(n)) picks.push_back(buffer_->frames[f.key][i]);
      st[f.key] = compute_image_stats(torch::stack(picks));
    } else if (!is_default_feature(f.key)) {
      st[f.key] = compute_array_stats(torch::from_blob(buffer_->values[f.key].data(), {n, f.shape[0]}, torch::kFloat32));
    }
  }
  torch::Tensor fi = torch::arange(n, torch::kInt64);
  st["timestamp"] = compute_array_stats((fi.to(torch::kFloat64) / double(fps_)).to(torch::kFloat32));
  st["frame_index"] = compute_array_stats(fi);
  st["episode_index"] = compute_array_stats(torch::full({n}, ep.episode_index, torch::kInt64));
  st["index"] = compute_array_stats(fi + ep.dataset_from_index);
  st["task_index"] = compute_array_stats(torch::full({n}, task_index, torch::kInt64));
  episode_stats_.push_back(std::move(st));

  total_frames_ += n;
  episodes_.push_back(std::move(ep));
  buffer_ = std::make_unique<Buffer>();
}

void DatasetWriter::write_data(const EpisodeInfo& ep, int64_t task_index) {
  const int64_t n = ep.length;
  std::vector<ParquetField> fields;
  int64_t row_bytes = 0, png_bytes = 0;
  // Image features: PNG bytes and HF datasets' file name of each frame (LeRobot's image writer
  // names them frame-000000.png; embedding keeps the base name).
  std::map<std::string, std::pair<ParquetColumn<std::string>, ParquetColumn<std::string>>> images;
  for (const auto& f : features_) {
    if (f.is_video()) continue;
    if (f.is_image()) {
      fields.push_back(ParquetField::image(f.key));
      auto& [bytes, names] = images[f.key];
      bytes.num_rows = names.num_rows = n;
      for (int64_t i = 0; i < n; ++i) {
        const torch::Tensor hwc = buffer_->frames[f.key][i].permute({1, 2, 0}).contiguous();
        bytes.values.push_back(encode_png(hwc.data_ptr<uint8_t>(), static_cast<int>(f.shape[1]),
                                          static_cast<int>(f.shape[0]), options_.png_compression_level));
        png_bytes += static_cast<int64_t>(bytes.values.back().size());
        char name[32];
        std::snprintf(name, sizeof name, "frame-%06lld.png", static_cast<long long>(i));
        names.values.push_back(name);
      }
    } else if (f.key == "timestamp") {
      fields.push_back(ParquetField::scalar(f.key, parquet::Type::kFloat));
      row_bytes += 4;
    } else if (is_default_feature(f.key)) {
      fields.push_back(ParquetField::scalar(f.key, parquet::Type::kInt64));
      row_bytes += 8;
    } else if (f.shape[0] == 1) {
      fields.push_back(ParquetField::scalar(f.key, parquet::Type::kFloat));
      row_bytes += 4;
    } else {
      fields.push_back(ParquetField::list(f.key, parquet::Type::kFloat, 1, static_cast<int>(f.shape[0])));
      row_bytes += 4 * f.shape[0];
    }
  }
  const int64_t ep_bytes = n * row_bytes + png_bytes;
  const double limit = options_.data_files_size_in_mb * 1024.0 * 1024.0;
  if (data_writer_ && data_bytes_ > 0 && double(data_bytes_ + ep_bytes) >= limit) {
    data_writer_->close();
    data_writer_.reset();
    advance(data_chunk_, data_file_, options_.chunks_size);
    data_bytes_ = 0;
  }
  if (!data_writer_) {
    const fs::path p = root_ / format_path_template(kDataPath, {{"chunk_index", data_chunk_}, {"file_index", data_file_}});
    fs::create_directories(p.parent_path());
    ParquetWriteOptions po;
    po.page_bytes = options_.data_page_bytes;
    data_writer_ = std::make_unique<ParquetWriter>(p, fields, po);
    data_writer_->set_metadata("huggingface", huggingface_metadata_json(fields));
  }
  ParquetRowGroup g(n);
  for (const auto& [key, cols] : images) {
    g.set<std::string>(key, cols.first, "bytes");
    g.set<std::string>(key, cols.second, "path");
  }
  for (const auto& f : features_) {
    if (f.is_camera() || is_default_feature(f.key)) continue;
    if (f.shape[0] == 1) g.set<float>(f.key, buffer_->values[f.key]);
    else g.set_fixed_list(f.key, buffer_->values[f.key], f.shape[0]);
  }
  std::vector<float> ts(n);
  std::vector<int64_t> fi(n), epi(n, ep.episode_index), idx(n), ti(n, task_index);
  for (int64_t i = 0; i < n; ++i) {
    ts[i] = static_cast<float>(double(i) / double(fps_));
    fi[i] = i;
    idx[i] = ep.dataset_from_index + i;
  }
  g.set<float>("timestamp", ts);
  g.set<int64_t>("frame_index", fi);
  g.set<int64_t>("episode_index", epi);
  g.set<int64_t>("index", idx);
  g.set<int64_t>("task_index", ti);
  data_writer_->write_row_group(g);
  data_bytes_ += ep_bytes;
}

void DatasetWriter::write_videos(EpisodeInfo& ep) {
  const fs::path tmp_dir = root_ / ".tmp_videos";
  for (const auto& f : features_) {
    if (!f.is_video()) continue;
    fs::create_directories(tmp_dir);
    const fs::path tmp = tmp_dir / ("episode_" + std::to_string(ep.episode_index) + ".mp4");
    {
      VideoEncoder enc(tmp.string(), static_cast<int>(f.shape[1]), static_cast<int>(f.shape[0]),
                       static_cast<int>(fps_), options_.encoder);
      for (const auto& fr : buffer_->frames[f.key]) enc.add_frame(fr.data_ptr<uint8_t>(), PixelLayout::kCHW);
      enc.finish();
    }
    VideoCursor& c = video_cursor_[f.key];
    const double limit = options_.video_files_size_in_mb * 1024.0 * 1024.0;
    if (c.open) {
      const fs::path cur = video_file(f.key, c.chunk, c.file);
      if (double(fs::file_size(cur) + fs::file_size(tmp)) >= limit) advance(c.chunk, c.file, options_.chunks_size);
    }
    const fs::path dest = video_file(f.key, c.chunk, c.file);
    fs::create_directories(dest.parent_path());
    const VideoSpan span = append_video(dest.string(), tmp.string());
    fs::remove(tmp);
    c.open = true;
    EpisodeVideo v;
    v.chunk_index = c.chunk;
    v.file_index = c.file;
    v.from_timestamp = span.from_timestamp;
    v.to_timestamp = span.to_timestamp;
    v.file = fs::relative(dest, root_);
    ep.videos[f.key] = v;
    if (!video_info_.count(f.key)) {
      const VideoInfo vi = probe_video(dest.string());
      Json j = Json::object();
      j["video.height"] = vi.height;
      j["video.width"] = vi.width;
      j["video.codec"] = vi.codec;
      j["video.pix_fmt"] = vi.pix_fmt;
      j["video.fps"] = static_cast<int64_t>(std::llround(vi.fps));
      j["video.channels"] = vi.channels;
      j["has_audio"] = vi.has_audio;
      j["video.g"] = options_.encoder.g;
      j["video.crf"] = options_.encoder.crf;
      j["video.preset"] = options_.encoder.preset;
      j["video.fast_decode"] = options_.encoder.fast_decode;
      j["video.video_backend"] = "pyav";
      j["video.extra_options"] = Json::object();
      j["is_depth_map"] = false;
      video_info_[f.key] = j;
    }
  }
  if (fs::exists(tmp_dir)) fs::remove_all(tmp_dir);
}
}  // namespace lerobot
