// LeRobotDataset: loads the parquet columns of the selected episodes and serves frames.
#include "lerobot/datasets/lerobot_dataset.h"

#include <algorithm>
#include <set>

#include "lerobot/common/error.h"
#include "lerobot/datasets/video_checks.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/png_codec.h"

namespace lerobot {

namespace {

template <class T>
torch::Tensor read_column(const ParquetFile& f, const std::string& name, RowRange range,
                          const std::vector<int64_t>& shape, torch::ScalarType dtype) {
  ParquetColumn<T> c = f.read<T>(name, range);
  if (c.has_nulls()) throw_data("column '" + name + "' holds nulls", f.label());
  int64_t width = 1;
  for (int64_t s : shape) width *= s;
  const int64_t rows = range.end - range.begin;
  if (static_cast<int64_t>(c.values.size()) != rows * width)
    throw_data("column '" + name + "' has " + std::to_string(c.values.size()) + " values for " +
                   std::to_string(rows) + " rows of " + std::to_string(width),
               f.label(), "the data parquet does not match info.json features");
  std::vector<int64_t> full{rows};
  if (!(shape.size() == 1 && shape[0] == 1)) full.insert(full.end(), shape.begin(), shape.end());
  torch::Tensor t;
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> tmp(c.values.begin(), c.values.end());
    t = torch::from_blob(tmp.data(), {rows * width}, torch::kUInt8).clone().to(torch::kBool);
  } else {
    auto src = torch::CppTypeToScalarType<T>::value;
    t = torch::from_blob(c.values.data(), {rows * width}, src).clone().to(dtype);
  }
  return t.reshape(full);
}

torch::Tensor read_feature(const ParquetFile& f, const FeatureSpec& spec, RowRange range) {
  const std::string& d = spec.dtype;
  if (d == "float32") return read_column<float>(f, spec.key, range, spec.shape, torch::kFloat32);
  if (d == "float64") return read_column<double>(f, spec.key, range, spec.shape, torch::kFloat64);
  if (d == "int64") return read_column<int64_t>(f, spec.key, range, spec.shape, torch::kInt64);
  if (d == "int32" || d == "int16" || d == "int8" || d == "uint8")
    return read_column<int32_t>(f, spec.key, range, spec.shape, torch::kInt64);
  if (d == "bool") return read_column<bool>(f, spec.key, range, spec.shape, torch::kBool);
  throw_data("unsupported feature dtype '" + d + "' for '" + spec.key + "'", f.label());
}

// The rows read for episode `ep` (the last entry of each column in `parts`) are the ones its
// metadata promises: episode_index is the episode, index runs over [dataset_from_index,
// dataset_to_index) (v3.0), task_index names a task. Otherwise meta/ and data/ disagree, and training would
// mix episodes, pad the wrong frames or lose the task.
void check_rows_match_metadata(const DatasetMetadata& m, const EpisodeInfo& ep, const ParquetFile& f,
                               const std::map<std::string, std::vector<torch::Tensor>>& parts) {
  const std::string fix = "meta/ and data/ disagree: restore the dataset from where it came from; "
                          "'lerobot-cpp dataset validate DIR' lists every problem";
  auto first_mismatch = [&](const char* key, const torch::Tensor& want) -> int64_t {
    auto it = parts.find(key);
    if (it == parts.end()) return -1;
    const torch::Tensor bad = it->second.back().reshape({-1}).to(torch::kInt64).ne(want);
    return bad.any().item<bool>() ? bad.nonzero()[0][0].item<int64_t>() : -1;
  };
  const std::string at = f.label() + " (episode " + std::to_string(ep.episode_index) + ", rows from " +
                         std::to_string(ep.data_row_begin) + ")";
  if (const int64_t r = first_mismatch("episode_index", torch::full({ep.length}, ep.episode_index, torch::kInt64)); r >= 0)
    throw_data("'episode_index' is " + std::to_string(parts.at("episode_index").back().reshape({-1})[r].item<int64_t>()) +
                   " at the episode's frame " + std::to_string(r) + " (" + (m.root / ep.meta_file).string() +
                   " places episode " + std::to_string(ep.episode_index) + " here)",
               at, fix);
  // v3.0 readers look frames up by 'index' (LeRobot's _absolute_to_relative_idx); v2.1 ones by position.
  if (const int64_t r = m.is_v21() ? -1 : first_mismatch("index", torch::arange(ep.dataset_from_index, ep.dataset_to_index, torch::kInt64)); r >= 0)
    throw_data("'index' is " + std::to_string(parts.at("index").back().reshape({-1})[r].item<int64_t>()) +
                   " at the episode's frame " + std::to_string(r) + " where " + (m.root / ep.meta_file).string() +
                   " gives " + std::to_string(ep.dataset_from_index + r),
               at, fix);
  if (auto it = parts.find("task_index"); it != parts.end()) {
    const torch::Tensor t = it->second.back().reshape({-1}).to(torch::kInt64);
    const torch::Tensor bad = t.lt(0).logical_or(t.ge(static_cast<int64_t>(m.tasks.size())));
    if (bad.any().item<bool>()) {
      const int64_t r = bad.nonzero()[0][0].item<int64_t>();
      throw_data("'task_index' is " + std::to_string(t[r].item<int64_t>()) + " at the episode's frame " + std::to_string(r) +
                     " but " + (m.root / (m.is_v21() ? "meta/tasks.jsonl" : "meta/tasks.parquet")).string() + " has " +
                     std::to_string(m.tasks.size()) + " task(s)",
                 at, fix);
    }
  }
}

}  // namespace

LeRobotDataset::LeRobotDataset(const fs::path& root, LeRobotDatasetOptions options)
    : meta_(load_dataset_metadata(root)), options_(std::move(options)) {
  std::set<int64_t> chosen;
  if (options_.episodes) {
    for (int64_t e : *options_.episodes) chosen.insert(meta_.episode(e).episode_index);
  } else {
    for (const auto& e : meta_.episodes) chosen.insert(e.episode_index);
  }
  if (options_.exclude_episodes)
    for (int64_t e : *options_.exclude_episodes) chosen.erase(e);
  selected_.assign(chosen.begin(), chosen.end());
  if (selected_.empty())
    throw_usage("no episodes selected", "--dataset.episodes", "select at least one episode");
  for (const auto& [k, _] : options_.delta_indices)
    if (!meta_.find_feature(k))
      throw_usage("delta indices given for unknown feature '" + k + "'", root.string());

  // Load every non-camera, non-string column of the selected episodes, episode after episode. Each
  // data file's columns are decoded once, over the rows its selected episodes span, and each episode
  // takes its slice: a file written as one row group (pyarrow's to_parquet, as in datasets converted
  // to v3.0) would otherwise be decoded whole once per episode and column.
  std::vector<const FeatureSpec*> specs;
  for (const auto& f : meta_.features)
    if (!f.is_camera() && !f.is_string()) specs.push_back(&f);
  std::map<std::string, std::shared_ptr<ParquetFile>> files;
  std::map<std::string, RowRange> span;  // data file -> rows its selected episodes cover
  std::vector<std::string> image_keys;
  for (const auto& f : meta_.features)
    if (f.is_image()) image_keys.push_back(f.key);
  int64_t row = 0;
  for (int64_t e : selected_) {  // check every episode against its file, open the files
    const EpisodeInfo& ep = meta_.episode(e);  // lengths and frame ranges agree (check_episode_ranges)
    loaded_offset_.push_back(row);
    row += ep.length;
    auto& pf = files[ep.data_file.string()];
    if (!pf) {
      const fs::path p = root / ep.data_file;
      if (!fs::exists(p))
        throw_data("data file of episode " + std::to_string(e) + " is missing", p.string(),
                   "restore the dataset's data/ folder");
      pf = std::make_shared<ParquetFile>(p);
      for (const auto& k : image_keys) {
        if (!pf->has_column(k))
          throw_data("image column '" + k + "' is missing", pf->label(), "the data parquet does not match info.json");
        image_files_[ep.data_file.string()] = pf;
      }
      for (const FeatureSpec* s : specs)
        if (!pf->has_column(s->key))
          throw_data("column '" + s->key + "' is missing", pf->label(), "the data parquet does not match info.json");
    }
    const RowRange rows{ep.data_row_begin, ep.data_row_begin + ep.length};
    if (rows.end > pf->num_rows())
      throw_data("episode " + std::to_string(e) + " needs rows up to " + std::to_string(rows.end) +
                     " but the file has " + std::to_string(pf->num_rows()),
                 pf->label());
    auto [it, fresh] = span.emplace(ep.data_file.string(), rows);
    if (!fresh) it->second = {std::min(it->second.begin, rows.begin), std::max(it->second.end, rows.end)};
  }
  std::map<std::string, std::vector<torch::Tensor>> parts;
  std::string decoded_file;  // the file whose span `decoded` holds
  std::map<std::string, torch::Tensor> decoded;
  for (int64_t e : selected_) {  // decode each file once, slice each episode out of it
    const EpisodeInfo& ep = meta_.episode(e);
    const std::string file = ep.data_file.string();
    const RowRange& file_rows = span.at(file);
    if (decoded_file != file) {
      decoded.clear();
      for (const FeatureSpec* s : specs) decoded[s->key] = read_feature(*files.at(file), *s, file_rows);
      decoded_file = file;
    }
    for (const FeatureSpec* s : specs)  // views into the file's columns until the concatenation below
      parts[s->key].push_back(decoded.at(s->key).narrow(0, ep.data_row_begin - file_rows.begin, ep.length));
    check_rows_match_metadata(meta_, ep, *files.at(file), parts);
  }
  num_frames_ = row;
  for (const FeatureSpec* s : specs) {
    Column c;
    c.data = torch::cat(parts[s->key], 0);
    c.scalar = s->shape.size() == 1 && s->shape[0] == 1;
    columns_[s->key] = std::move(c);
  }
  decoders_ = std::make_unique<DecoderCache>(options_.decoder_cache);
}

std::vector<std::pair<int64_t, int64_t>> LeRobotDataset::episode_ranges() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t e : selected_) {
    const auto& ep = meta_.episode(e);
    out.emplace_back(ep.dataset_from_index, ep.dataset_to_index);
  }
  return out;
}

std::vector<int64_t> LeRobotDataset::absolute_indices() const {
  std::vector<int64_t> out;
  out.reserve(num_frames_);
  for (auto [a, b] : episode_ranges())
    for (int64_t i = a; i < b; ++i) out.push_back(i);
  return out;
}

std::vector<int64_t> LeRobotDataset::task_indices() const {
  auto t = columns_.find("task_index");
  if (t == columns_.end()) return std::vector<int64_t>(static_cast<size_t>(num_frames_), -1);
  const torch::Tensor c = t->second.data.reshape({-1}).to(torch::kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::vector<std::string> LeRobotDataset::feature_keys() const {
  std::vector<std::string> out;
  for (const auto& f : meta_.features) out.push_back(f.key);
  return out;
}

size_t LeRobotDataset::selected_pos(int64_t a) const {
  // Episodes are contiguous in global index order: binary search on dataset_from_index.
  size_t lo = 0, hi = selected_.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (meta_.episodes[selected_[mid]].dataset_to_index <= a) lo = mid + 1; else hi = mid;
  }
  if (lo == selected_.size() || meta_.episodes[selected_[lo]].dataset_from_index > a)
    throw_usage("frame index " + std::to_string(a) + " is not in a selected episode", meta_.root.string());
  return lo;
}

int64_t LeRobotDataset::episode_of(int64_t a) const { return selected_[selected_pos(a)]; }

int64_t LeRobotDataset::loaded_row(int64_t a) const {
  const size_t p = selected_pos(a);
  return loaded_offset_[p] + (a - meta_.episodes[selected_[p]].dataset_from_index);
}

torch::Tensor LeRobotDataset::decode_frames(const std::string& key, const std::vector<int64_t>& abs) const {
  if (abs.empty()) throw_usage("no frames requested", key);
  const FeatureSpec& spec = meta_.feature(key);
  const int64_t e = episode_of(abs.front());
  const EpisodeInfo& ep = meta_.episode(e);
  if (spec.is_image()) return decode_images(spec, e, abs);
  auto vit = ep.videos.find(key);
  if (vit == ep.videos.end())
    throw_data("episode " + std::to_string(e) + " has no video location for '" + key + "'",
               (meta_.root / "meta/episodes").string());
  const fs::path path = meta_.root / vit->second.file;
  const auto& ts_col = columns_.at("timestamp").data;
  std::vector<double> ts;
  for (int64_t a : abs) ts.push_back(vit->second.from_timestamp + double(ts_col[loaded_row(a)].item<float>()));
  const int64_t first_frame = abs.front() - ep.dataset_from_index;
  auto where = [&] {
    return "episode " + std::to_string(e) + ", frame_index " + std::to_string(first_frame) + " (index " +
           std::to_string(abs.front()) + ")";
  };
  if (!fs::exists(path))
    throw_data("video file missing for " + where() + ", camera '" + key + "'", path.string(),
               "restore the dataset's videos/ folder");
  try {
    DecoderCache::Lease dec = decoders_->acquire(path.string());
    const int64_t h = dec->height(), w = dec->width();
    torch::Tensor out = torch::empty({static_cast<int64_t>(ts.size()), 3, h, w}, torch::kUInt8);
    decode_frames_at_into(*dec, ts, out.data_ptr<uint8_t>(), options_.tolerance_s, PixelLayout::kCHW);
    return out;
  } catch (const Error& err) {
    throw_data("cannot decode " + where() + ", camera '" + key + "': " + err.problem(), path.string(),
               err.fix().empty() ? "check the video file" : err.fix());
  }
}

torch::Tensor LeRobotDataset::decode_images(const FeatureSpec& spec, int64_t e, const std::vector<int64_t>& abs) const {
  const EpisodeInfo& ep = meta_.episode(e);
  auto fit = image_files_.find(ep.data_file.string());
  if (fit == image_files_.end()) throw_usage("episode " + std::to_string(e) + " is not loaded", meta_.root.string());
  const ParquetFile& f = *fit->second;
  std::vector<int64_t> rows;
  for (int64_t a : abs) {
    if (a < ep.dataset_from_index || a >= ep.dataset_to_index)
      throw_usage("frames of one episode expected; index " + std::to_string(a) + " is outside episode " + std::to_string(e),
                  spec.key);
    rows.push_back(ep.data_row_begin + (a - ep.dataset_from_index));
  }
  const auto bytes = f.read_binary_at(spec.key, "bytes", rows);
  const auto [h, w] = camera_height_width(spec);
  torch::Tensor out = torch::empty({static_cast<int64_t>(rows.size()), 3, h, w}, torch::kUInt8);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = f.label() + " row " + std::to_string(rows[i]) + " (episode " + std::to_string(e) +
                              ", frame_index " + std::to_string(abs[i] - ep.dataset_from_index) + "), column '" +
                              spec.key + "'";
    if (!bytes[i])
      throw_data("the image is null (no PNG bytes)", where, "re-record the frame or drop the episode (--dataset.episodes)");
    RgbImage img;
    try {
      img = decode_png(reinterpret_cast<const uint8_t*>(bytes[i]->data()), bytes[i]->size());
    } catch (const Error& err) {
      throw_data("cannot decode the image: " + err.problem(), where,
                 "the PNG is corrupt; re-record the frame or drop the episode (--dataset.episodes)");
    }
    if (img.height != h || img.width != w)
      throw_data("the image is " + std::to_string(img.width) + "x" + std::to_string(img.height) + " but info.json says " +
                     std::to_string(w) + "x" + std::to_string(h),
                 where, "fix the feature's shape in meta/info.json");
    out[static_cast<int64_t>(i)].copy_(torch::from_blob(img.pixels.data(), {h, w, 3}, torch::kUInt8).permute({2, 0, 1}));
  }
  return out;
}

std::string LeRobotDataset::describe_frame(int64_t a) const {
  const int64_t e = episode_of(a);
  const EpisodeInfo& ep = meta_.episode(e);
  std::string files;
  if (options_.decode_cameras)
    for (const auto& key : meta_.video_keys())
      if (auto v = ep.videos.find(key); v != ep.videos.end())
        files += (files.empty() ? "; videos: " : ", ") + (meta_.root / v->second.file).string();
  return "index " + std::to_string(a) + " (episode " + std::to_string(e) + ", frame_index " +
         std::to_string(a - ep.dataset_from_index) + files + ")";
}

DatasetItem LeRobotDataset::get_item(int64_t a) const {
  const size_t p = selected_pos(a);
  const EpisodeInfo& ep = meta_.episodes[selected_[p]];
  const int64_t row = loaded_offset_[p] + (a - ep.dataset_from_index);
  DatasetItem item;
  auto window = [&](const std::vector<int64_t>& deltas, std::vector<int64_t>& idx, torch::Tensor& pad) {
    pad = torch::empty({static_cast<int64_t>(deltas.size())}, torch::kBool);
    auto pa = pad.accessor<bool, 1>();
    for (size_t i = 0; i < deltas.size(); ++i) {
      const int64_t q = a + deltas[i];
      pa[i] = q < ep.dataset_from_index || q >= ep.dataset_to_index;
      idx.push_back(std::clamp(q, ep.dataset_from_index, ep.dataset_to_index - 1));
    }
  };
  for (const auto& [key, col] : columns_) {
    auto d = options_.delta_indices.find(key);
    if (d == options_.delta_indices.end()) {
      item.tensors[key] = col.data[row].clone();
      continue;
    }
    std::vector<int64_t> idx;
    torch::Tensor pad;
    window(d->second, idx, pad);
    std::vector<int64_t> rows;
    for (int64_t q : idx) rows.push_back(row + (q - a));
    item.tensors[key] = col.data.index_select(0, torch::tensor(rows, torch::kInt64));
    item.tensors[key + "_is_pad"] = pad;
  }
  for (const auto& key : meta_.camera_keys()) {
    if (!options_.decode_cameras) break;
    auto d = options_.delta_indices.find(key);
    std::vector<int64_t> idx{a};
    if (d != options_.delta_indices.end()) {
      idx.clear();
      torch::Tensor pad;
      window(d->second, idx, pad);
      item.tensors[key + "_is_pad"] = pad;
    }
    torch::Tensor frames = decode_frames(key, idx);
    if (frames.size(0) == 1) frames = frames.squeeze(0);
    if (!options_.return_uint8) frames = frames.to(torch::kFloat32).div_(255.0);
    item.tensors[key] = frames;
  }
  if (auto t = columns_.find("task_index"); t != columns_.end()) {
    const int64_t ti = t->second.data[row].item<int64_t>();
    if (ti >= 0 && ti < static_cast<int64_t>(meta_.tasks.size())) item.task = meta_.tasks[ti];
  }
  return item;
}

DeltaIndices resolve_delta_indices(const DatasetMetadata& meta,
                                   const std::optional<std::vector<int64_t>>& obs,
                                   const std::optional<std::vector<int64_t>>& action,
                                   const std::optional<std::vector<int64_t>>& reward,
                                   const std::map<std::string, std::string>& rename_map) {
  return resolve_delta_indices(meta, DeltaIndexRequest{obs, std::nullopt, std::nullopt, action, reward}, rename_map);
}

DeltaIndices resolve_delta_indices(const DatasetMetadata& meta, const DeltaIndexRequest& request,
                                   const std::map<std::string, std::string>& rename_map) {
  DeltaIndices out;
  const auto& image = request.image ? request.image : request.observation;
  const auto& state = request.state ? request.state : request.observation;
  bool camera = false;
  for (const auto& f : meta.features) {
    auto r = rename_map.find(f.key);
    const std::string& k = r == rename_map.end() ? f.key : r->second;
    if (k == "next.reward" && request.reward) out[f.key] = *request.reward;
    else if (k == "action" && request.action) out[f.key] = *request.action;
    else if (k.rfind("observation.image", 0) == 0) {
      camera = true;
      if (image) out[f.key] = *image;
    } else if (k == "observation.state") {
      if (state) out[f.key] = *state;
    } else if (k.rfind("observation.", 0) == 0 && request.observation) {
      out[f.key] = *request.observation;
    }
  }
  if (request.image && request.image->size() > 1 && !camera)
    throw_usage("the policy asks for " + std::to_string(request.image->size()) +
                    " history frames per camera, but no dataset feature is a camera (observation.image*)",
                "--rename_map", "map the dataset's camera keys to observation.images.<name>, or turn the image history off");
  return out;
}

std::shared_ptr<LeRobotDataset> make_dataset(const DatasetConfig& cfg, const DeltaIndices& delta_indices,
                                             double tolerance_s) {
  if (!cfg.root || cfg.root->empty())
    throw_usage("a local dataset directory is required", "--dataset.root",
                "pass --dataset.root=/path/to/dataset (nothing is downloaded)");
  if (cfg.streaming) throw_usage("streaming datasets are not supported", "--dataset.streaming");
  LeRobotDatasetOptions o;
  o.episodes = cfg.episodes;
  o.exclude_episodes = cfg.exclude_episodes;
  o.delta_indices = delta_indices;
  o.tolerance_s = tolerance_s;
  o.return_uint8 = true;
  auto ds = std::make_shared<LeRobotDataset>(fs::path(*cfg.root), o);
  check_video_streams(ds->meta(), ds->episode_of(ds->episode_ranges().front().first));
  return ds;
}

}  // namespace lerobot
