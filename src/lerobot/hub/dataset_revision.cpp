// get_safe_version's choice among a dataset repo's version refs, plus our v2.1 fallback.
#include "lerobot/hub/dataset_revision.h"

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

// Compares as packaging does: missing trailing parts are zeros (3 == 3.0).
int compare(std::vector<int> a, std::vector<int> b) {
  size_t n = std::max(a.size(), b.size());
  a.resize(n, 0);
  b.resize(n, 0);
  return a < b ? -1 : (a == b ? 0 : 1);
}

int part(const std::vector<int>& v, size_t i) { return i < v.size() ? v[i] : 0; }

}  // namespace

std::optional<std::vector<int>> parse_version(const std::string& ref) {
  std::string s = ref;
  if (!s.empty() && (s[0] == 'v' || s[0] == 'V')) s = s.substr(1);
  if (s.empty()) return std::nullopt;
  std::vector<int> out;
  for (const auto& p : split(s, '.')) {
    if (p.empty() || p.size() > 6 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    out.push_back(std::stoi(p));
  }
  return out;
}

ChosenRevision choose_dataset_revision(const std::string& repo_id, const std::string& requested,
                                       const std::vector<std::string>& refs) {
  auto target = parse_version(requested);
  if (!target) return {requested, ""};  // a branch name or a commit: used as given
  struct Candidate {
    std::vector<int> v;
    std::string name;
  };
  std::vector<Candidate> versions;
  for (const auto& r : refs)
    if (auto v = parse_version(r)) versions.push_back({*v, r});
  const std::string where = "--dataset.repo_id=" + repo_id;
  if (versions.empty())
    throw_usage("dataset '" + repo_id + "' has no codebase-version branch or tag (such as v3.0), so no revision fits " +
                    requested,
                where, "pass --dataset.revision=<branch, tag or commit> to pick one");
  auto best_of = [](std::vector<Candidate> c) {
    return *std::max_element(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return compare(a.v, b.v) < 0; });
  };
  for (const auto& c : versions)
    if (compare(c.v, *target) == 0) return {c.name, ""};
  std::vector<Candidate> same_major, v21;
  for (const auto& c : versions) {
    if (part(c.v, 0) == part(*target, 0) && part(c.v, 1) <= part(*target, 1)) same_major.push_back(c);
    if (part(c.v, 0) == 2 && compare(c.v, {2, 1}) >= 0 && compare(c.v, {2, 2}) < 0) v21.push_back(c);
  }
  if (!same_major.empty()) {
    Candidate c = best_of(same_major);
    return {c.name, "revision " + requested + " not found for " + repo_id + ", using version " + c.name};
  }
  bool has_lower = false;
  for (const auto& c : versions) has_lower |= part(c.v, 0) < part(*target, 0);
  if (has_lower && !v21.empty() && part(*target, 0) == 3) {
    Candidate c = best_of(v21);
    return {c.name, "dataset " + repo_id + " has no v3.x version; taking " + c.name +
                        " (LeRobot 0.6 would refuse it and ask for a conversion; lerobot.cpp reads v2.1)"};
  }
  if (has_lower) {
    std::vector<Candidate> lower;
    for (const auto& c : versions)
      if (part(c.v, 0) < part(*target, 0)) lower.push_back(c);
    throw_usage("dataset '" + repo_id + "' is at version " + best_of(lower).name + ", older than " + requested +
                    " and not readable here (lerobot.cpp reads v3.0 and v2.1)",
                where, "convert it with LeRobot's scripts (v2.0 -> v2.1 -> v3.0), or pass --dataset.revision");
  }
  std::vector<Candidate> newer;
  for (const auto& c : versions)
    if (compare(c.v, *target) > 0) newer.push_back(c);
  Candidate oldest_newer = newer.front();
  for (const auto& c : newer)
    if (compare(c.v, oldest_newer.v) < 0) oldest_newer = c;
  throw_usage("dataset '" + repo_id + "' only has versions newer than " + requested + " (the oldest is " +
                  oldest_newer.name + ")",
              where, "update lerobot.cpp, or pass --dataset.revision to pick a branch, tag or commit");
}

}  // namespace lerobot::hub
