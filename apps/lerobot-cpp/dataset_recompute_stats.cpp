// `lerobot-cpp dataset recompute-stats DIR`: LeRobot 0.6.2's `lerobot-edit-dataset --operation.type
// recompute_stats` (dataset_tools.recompute_stats). Numeric features other than the bookkeeping
// columns are recomputed per episode and aggregated; with --relative_action=true the action's entry
// is instead the relative-action stats π0/π0.5 normalize with under --policy.use_relative_actions=true
// (datasets/relative_action_stats.h, the mask from policies/relative_actions.h); camera and other
// entries already in stats.json are kept. Everything is computed before anything is written: by
// default into a copy of the dataset, DIR_recomputed_stats beside it (built in a temporary folder and
// renamed), or with --overwrite=true into DIR's own meta/stats.json (atomically), as LeRobot refuses
// to write in place without --operation.overwrite.
#include "dataset_recompute_stats.h"

#include <unistd.h>

#include <cctype>
#include <iostream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/datasets/relative_action_stats.h"
#include "lerobot/policies/relative_actions.h"

namespace lerobot::app {

const char* const kRecomputeStatsHelp =
    "usage: lerobot-cpp dataset recompute-stats DIR [--relative_action=true] [--chunk_size=50]\n"
    "       [--relative_exclude_joints=[gripper]] [--new_root=OUT | --overwrite=true]\n"
    "  recomputes meta/stats.json from the data, as lerobot-edit-dataset's recompute_stats operation\n"
    "  (its operation.<name> spellings are taken too). Numeric features are recomputed; camera stats\n"
    "  are kept. --relative_action=true: the action's stats are those of every in-episode chunk of\n"
    "  --chunk_size frames minus its first frame's observation.state (what pi0/pi05 normalize with when\n"
    "  trained with use_relative_actions; pass the policy's chunk_size and relative_exclude_joints:\n"
    "  a joint whose name contains an excluded name stays absolute; default [gripper]).\n"
    "  Writes a copy of the dataset to --new_root (default DIR_recomputed_stats; it must not exist);\n"
    "  --overwrite=true rewrites DIR/meta/stats.json in place instead.\n";

namespace {

const std::set<std::string> kFlags = {"relative_action", "relative_exclude_joints", "chunk_size", "new_root",
                                      "overwrite", "skip_image_video", "type"};

// A flag's true/false, or nothing when it was not given.
std::optional<bool> flag_bool(const std::map<std::string, std::string>& f, const std::string& name) {
  auto it = f.find(name);
  if (it == f.end()) return std::nullopt;
  std::string v = it->second;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw_usage("bad value '" + it->second + "' for --" + name, "--" + name, "pass true or false");
}

// draccus' list spellings: [gripper], ["a","b"], [a, b], a,b; [] or null: none.
std::optional<std::vector<std::string>> parse_joints(const std::string& text) {
  std::string s = trim(text);
  if (s == "null" || s == "None") return std::nullopt;
  if (!s.empty() && s.front() == '[') s.erase(0, 1);
  if (!s.empty() && s.back() == ']') s.pop_back();
  std::vector<std::string> out;
  for (std::string part : split(s, ',')) {
    part = trim(part);
    if (part.size() >= 2 && (part.front() == '"' || part.front() == '\'') && part.back() == part.front())
      part = part.substr(1, part.size() - 2);
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::optional<std::vector<std::string>> names_of(const FeatureSpec& f) {
  if (f.names.is_null()) return std::nullopt;
  std::vector<std::string> out;
  if (f.names.is_object())
    for (auto it = f.names.begin(); it != f.names.end(); ++it) out.push_back(it.key());
  else
    for (const auto& n : f.names) out.push_back(n.is_string() ? n.get<std::string>() : n.dump());
  return out;
}

bool same_place(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a) && fs::exists(b)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

}  // namespace

int dataset_recompute_stats_main(const Args& input) {
  Args args;
  for (const auto& a : input)  // LeRobot's spelling: --operation.relative_action=true
    args.push_back(a.rfind("--operation.", 0) == 0 ? "--" + a.substr(12) : a);
  for (auto& a : args)  // bare switches
    if ((a == "--relative_action" || a == "--overwrite")) a += "=true";
  const auto flags = take_named_flags(args, kFlags);
  std::vector<std::string> candidates;
  for (const auto& n : kFlags) candidates.push_back("--" + n);
  fs::path root;
  for (const auto& a : args) {
    if (a.rfind("-", 0) == 0) {
      const std::string key = a.substr(0, a.find('='));
      const std::string near = nearest(key, candidates);
      throw_usage("unknown flag '" + key + "' for lerobot-cpp dataset recompute-stats", key,
                  near.empty() ? "valid flags: " + join(candidates, ", ") : "did you mean '" + near + "'?");
    }
    if (!root.empty())
      throw_usage("more than one dataset directory ('" + root.string() + "', '" + a + "')", a, kRecomputeStatsHelp);
    root = a;
  }
  if (root.empty()) throw_usage("missing dataset directory", "lerobot-cpp dataset recompute-stats", kRecomputeStatsHelp);
  if (auto t = flags.find("type"); t != flags.end() && t->second != "recompute_stats")
    throw_usage("--operation.type=" + t->second + " is not this command's", "--operation.type",
                "lerobot-cpp dataset recompute-stats is recompute_stats only");
  if (!flag_bool(flags, "skip_image_video").value_or(true))
    throw_usage("--skip_image_video=false is not supported (LeRobot 0.6.2 leaves camera stats as they are too)",
                "--skip_image_video", "drop the flag: camera stats are kept");
  const bool relative = flag_bool(flags, "relative_action").value_or(false);
  const bool overwrite = flag_bool(flags, "overwrite").value_or(false);
  int64_t chunk_size = 50;
  if (auto c = flags.find("chunk_size"); c != flags.end()) {
    try {
      size_t used = 0;
      chunk_size = std::stoll(c->second, &used);
      if (used != c->second.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw_usage("bad value '" + c->second + "' for --chunk_size", "--chunk_size", "pass a whole number of frames, e.g. 50");
    }
    if (chunk_size < 1) throw_usage("--chunk_size must be at least 1", "--chunk_size", "pass the policy's chunk_size, e.g. 50");
  }
  std::optional<std::vector<std::string>> exclude;
  if (auto e = flags.find("relative_exclude_joints"); e != flags.end()) exclude = parse_joints(e->second);
  if (!exclude) exclude = std::vector<std::string>{"gripper"};  // LeRobot's recompute_stats default

  if (!fs::exists(root / "meta/info.json"))
    throw_usage("'" + root.string() + "' is not a LeRobot dataset (no meta/info.json)", root.string(),
                "pass the dataset's root folder: lerobot-cpp dataset recompute-stats DIR");
  // Where it goes: LeRobot's default is a new dataset; in place only with --overwrite.
  const fs::path src = root.lexically_normal();
  fs::path out = flags.count("new_root") ? fs::path(flags.at("new_root")).lexically_normal()
                                         : fs::path(src.string() + "_recomputed_stats");
  if (src.filename().empty()) out = fs::path(src.parent_path().string() + "_recomputed_stats");
  const bool in_place = (flags.count("new_root") && same_place(out, src)) || (overwrite && !flags.count("new_root"));
  if (flags.count("new_root") && same_place(out, src) && !overwrite)
    throw_usage("recompute-stats would overwrite the dataset in place at " + src.string(), "--new_root",
                "pass --overwrite=true to rewrite its meta/stats.json, or a --new_root that is another folder");
  if (!in_place && fs::exists(out))
    throw_usage("the output folder " + out.string() + " already exists", "--new_root",
                "remove it, or pass another --new_root (or --overwrite=true to rewrite " + (src / "meta/stats.json").string() +
                    " in place)");

  const DatasetMetadata m = load_dataset_metadata(src);
  const std::set<std::string> bookkeeping = {"index", "episode_index", "task_index", "frame_index", "timestamp"};
  const FeatureSpec* action = m.find_feature("action");
  const FeatureSpec* state = m.find_feature("observation.state");
  if (relative && (!action || !state))
    throw_data(std::string("--relative_action=true needs the features 'action' and 'observation.state'; ") +
                   src.string() + "/meta/info.json has no '" + (action ? "observation.state" : "action") + "'",
               "--relative_action", "drop --relative_action (relative actions subtract the state from the action)");
  if (relative && (action->shape.size() != 1 || state->shape.size() != 1))
    throw_data("--relative_action=true needs 'action' and 'observation.state' as vectors", "--relative_action");

  std::vector<DatasetStats> per_episode;
  std::vector<torch::Tensor> actions, states;
  std::vector<int64_t> episode_index;
  for (const auto& e : m.episodes) {
    DatasetStats st;
    for (const auto& f : m.features) {
      if (f.is_string() || f.is_camera() || bookkeeping.count(f.key)) continue;
      torch::Tensor col = read_episode_column(src, f, e);
      if (relative && (&f == action || &f == state)) {
        (&f == action ? actions : states).push_back(col.reshape({e.length, -1}));
        if (&f == action) continue;
      }
      st[f.key] = compute_array_stats(col);
    }
    if (relative) episode_index.insert(episode_index.end(), static_cast<size_t>(e.length), e.episode_index);
    per_episode.push_back(std::move(st));
  }
  if (per_episode.empty()) throw_data("the dataset has no episodes", (src / "meta/episodes").string());
  DatasetStats stats = aggregate_stats(per_episode);
  if (relative) {
    RelativeActions ra;
    ra.enabled = true;
    ra.exclude_joints = *exclude;
    ra.action_names = names_of(*action);
    const std::vector<bool> mask = ra.mask(action->shape[0]);
    stats["action"] = compute_relative_action_stats(torch::cat(actions), torch::cat(states), episode_index, chunk_size, mask);
    std::vector<std::string> kept;
    for (size_t d = 0; d < mask.size(); ++d)
      if (!mask[d]) kept.push_back(ra.action_names && d < ra.action_names->size() ? (*ra.action_names)[d] : std::to_string(d));
    std::cout << "relative action stats: chunk_size " << chunk_size << ", "
              << stats["action"]["count"].item<int64_t>() / chunk_size << " chunks, "
              << (kept.empty() ? std::string("every dimension relative") : "kept absolute: " + join(kept, ", ")) << "\n";
  }
  for (const auto& [k, v] : m.stats)
    if (!stats.count(k)) stats[k] = v;  // cameras, bookkeeping columns: as they were
  const std::string text = dump_pretty(stats_to_json(stats));

  if (in_place) {
    write_file_atomic(src / "meta/stats.json", text);
    std::cout << "wrote " << (src / "meta/stats.json").string() << " (in place)\n";
    return 0;
  }
  const fs::path tmp = out.parent_path() / (".tmp-" + out.filename().string() + "-" + std::to_string(::getpid()));
  try {
    if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
    fs::copy(src, tmp, fs::copy_options::recursive);
    write_file_atomic(tmp / "meta/stats.json", text);
    fs::rename(tmp, out);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  std::cout << "wrote " << out.string() << " (a copy of " << src.string() << " with the recomputed meta/stats.json)\n";
  return 0;
}

}  // namespace lerobot::app
