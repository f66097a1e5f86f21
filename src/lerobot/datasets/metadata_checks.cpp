// Checks of meta/ values against info.json's features (see metadata_checks.h).
#include "lerobot/datasets/metadata_checks.h"

#include <cmath>
#include <set>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {

constexpr const char* kRegenerate =
    "the metadata contradicts itself: restore the file from where the dataset came from (a copy, or the Hub for a "
    "downloaded one); 'lerobot-cpp dataset validate DIR' lists every problem";

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string tuple_text(torch::IntArrayRef s) {  // as Python prints a shape: (6,), (3, 1, 1)
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::string episode_where(const DatasetMetadata& m, const EpisodeInfo& e) {
  const fs::path file = e.meta_file.empty() ? fs::path("meta/episodes") : e.meta_file;
  return (m.root / file).string() + " (episode " + std::to_string(e.episode_index) + ")";
}

}  // namespace

std::string json_error_text(const std::exception& e) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0)
    if (const size_t close = s.find("] "); close != std::string::npos) s = s.substr(close + 2);
  return s;
}

FeatureSpec feature_from_json(const std::string& key, const Json& f, const std::string& where) {
  const std::string at = where + ": feature '" + key + "'";
  const char* fix = "each entry of info.json's \"features\" is {\"dtype\": \"float32\", \"shape\": [6], \"names\": [...]}";
  if (!f.is_object()) throw_data("is not an object", at, fix);
  if (!f.contains("dtype") || !f["dtype"].is_string()) throw_data("has no \"dtype\" string", at, fix);
  if (!f.contains("shape") || !f["shape"].is_array() || f["shape"].empty())
    throw_data("has no \"shape\" list", at, fix);
  FeatureSpec s;
  s.key = key;
  s.dtype = f["dtype"].get<std::string>();
  for (const auto& d : f["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() <= 0 || d.get<int64_t>() > (int64_t(1) << 31))
      throw_data("shape " + f["shape"].dump() + " holds " + d.dump() + " (dimensions are positive integers)", at, fix);
    s.shape.push_back(d.get<int64_t>());
  }
  s.names = f.value("names", Json());
  if (!s.names.is_null() && !s.names.is_array() && !s.names.is_object())
    throw_data("\"names\" is " + s.names.dump() + " (null, a list or an object expected)", at, fix);
  s.info = f.value("info", Json());
  if (!s.info.is_null() && !s.info.is_object()) throw_data("\"info\" is not an object", at, fix);
  if (s.is_camera() && s.shape.size() != 3)
    throw_data("is a camera but its shape " + shape_text(s.shape) + " is not (height, width, channels)", at, fix);
  return s;
}

int64_t camera_channels(const FeatureSpec& f) {
  if (f.shape.size() != 3) return 0;
  if (f.names.is_array() && f.names.size() == 3 && f.names[0].is_string()) {
    const std::string n = f.names[0].get<std::string>();
    if (n == "channels" || n == "channel") return f.shape[0];
  }
  return f.shape[2];
}

void fit_stats_to_features(const DatasetMetadata& m, DatasetStats& stats, const std::string& where, bool per_episode) {
  static const std::set<std::string> kShaped = {"min", "max", "mean", "std", "q01", "q10", "q50", "q90", "q99"};
  for (auto& [key, fstats] : stats) {
    const FeatureSpec* f = m.find_feature(key);
    if (!f || f->is_string()) continue;  // stats of a feature info.json does not declare are not read
    if (per_episode)
      for (const char* need : {"mean", "std", "min", "max", "count"})
        if (!fstats.count(need))
          throw_data("'" + key + "' has no '" + need + "' stat (aggregating episode stats needs mean, std, min, max, count)",
                     where, kRegenerate);
    for (auto& [stat, t] : fstats) {
      const std::string id = "'" + key + "/" + stat + "'";
      int64_t want = 0;
      std::vector<int64_t> shape;
      std::string declared;
      if (stat == "count") {
        want = 1;
        shape = {1};
        declared = "one number";
      } else if (kShaped.count(stat)) {
        want = f->is_camera() ? camera_channels(*f) : f->numel();
        shape = f->is_camera() ? std::vector<int64_t>{want, 1, 1} : f->shape;
        declared = f->is_camera() ? std::to_string(want) + " values (one per channel of camera shape " + shape_text(f->shape) + ")"
                                  : std::to_string(want) + " value(s), as info.json gives '" + key + "' shape " + shape_text(f->shape);
      } else {
        continue;  // a stat no reader uses
      }
      if (t.numel() != want)
        throw_data(id + " has " + std::to_string(t.numel()) + " value(s) (shape " + tuple_text(t.sizes()) + "); expected " +
                       declared,
                   where, kRegenerate);
      const torch::Tensor d = t.to(torch::kFloat64).contiguous();  // a loop: a v2.1 dataset has stats per episode
      for (int64_t i = 0; i < d.numel(); ++i)
        if (!std::isfinite(d.data_ptr<double>()[i])) throw_data(id + " holds a non-finite value", where, kRegenerate);
      if (stat == "count" && per_episode && t.item<int64_t>() < 1)
        throw_data(id + " is " + std::to_string(t.item<int64_t>()) + " (an episode has at least one frame)", where,
                   kRegenerate);
      if (stat == "count" && t.item<int64_t>() < 0)
        throw_data(id + " is negative", where, kRegenerate);
      t = t.reshape(shape);
    }
  }
}

void check_episode_ranges(const DatasetMetadata& m) {
  int64_t cursor = 0;
  for (size_t i = 0; i < m.episodes.size(); ++i) {
    const EpisodeInfo& e = m.episodes[i];
    if (e.episode_index != static_cast<int64_t>(i)) {
      std::string what;
      if (i > 0 && e.episode_index == m.episodes[i - 1].episode_index)
        what = "episode " + std::to_string(e.episode_index) + " is listed twice";
      else if (e.episode_index < 0)
        what = "episode_index " + std::to_string(e.episode_index) + " is negative";
      else
        what = "episode " + std::to_string(i) + " is missing (episode indices run 0..N-1; the next one is " +
               std::to_string(e.episode_index) + ")";
      throw_data(what, episode_where(m, e), kRegenerate);
    }
    const std::string at = episode_where(m, e);
    if (e.length < 1) throw_data("'length' is " + std::to_string(e.length) + " (an episode has at least one frame)", at, kRegenerate);
    if (e.dataset_from_index != cursor)
      throw_data("'dataset_from_index' is " + std::to_string(e.dataset_from_index) + " but the episode before ends at frame " +
                     std::to_string(cursor) + " (episodes follow each other from frame 0)",
                 at, kRegenerate);
    if (e.dataset_to_index - e.dataset_from_index != e.length)
      throw_data("'length' is " + std::to_string(e.length) + " but 'dataset_from_index'..'dataset_to_index' is [" +
                     std::to_string(e.dataset_from_index) + ", " + std::to_string(e.dataset_to_index) + ")",
                 at, kRegenerate);
    if (e.data_chunk_index < 0 || e.data_file_index < 0)
      throw_data("data chunk/file index " + std::to_string(e.data_chunk_index) + "/" + std::to_string(e.data_file_index) +
                     " is negative",
                 at, kRegenerate);
    for (const auto& [key, v] : e.videos) {
      if (!std::isfinite(v.from_timestamp) || !std::isfinite(v.to_timestamp) || v.from_timestamp < 0 ||
          v.to_timestamp < v.from_timestamp)
        throw_data("'videos/" + key + "/from_timestamp'..'to_timestamp' is [" + std::to_string(v.from_timestamp) + ", " +
                       std::to_string(v.to_timestamp) + "]",
                   at, kRegenerate);
      if (v.chunk_index < 0 || v.file_index < 0)
        throw_data("'videos/" + key + "' chunk/file index is negative", at, kRegenerate);
    }
    cursor = e.dataset_to_index;
  }
  if (!m.video_keys().empty() && !m.find_feature("timestamp"))
    throw_data("video features but no 'timestamp' feature (frames are found by timestamp)",
               (m.root / "meta/info.json").string(), "add LeRobot's default features to info.json");
}

}  // namespace lerobot
