// The revision of a LeRobot dataset, as LeRobot 0.6's get_safe_version picks it
// (datasets/utils.py): the repo's branches and tags that parse as versions, the requested one if
// present, else the newest with the same major and a minor not above it. LeRobot refuses a repo
// with only v2.x versions; we read v2.1, so we take the newest v2.x not above v2.1 and say so.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lerobot::hub {

// packaging.version-style numbers of "v3.0", "3.0", "v2.1.1"; nullopt for "main" and the like.
std::optional<std::vector<int>> parse_version(const std::string& ref);

struct ChosenRevision {
  std::string revision;  // the ref name as the repo has it ("v3.0", "v2.1")
  std::string note;      // non-empty when not the version asked for (what to tell the user)
};

// Picks among `refs` (branch and tag names) for the requested codebase version. Throws a usage
// error naming the repo when none fits (no version refs; only newer or unsupported older ones).
ChosenRevision choose_dataset_revision(const std::string& repo_id, const std::string& requested,
                                       const std::vector<std::string>& refs);

}  // namespace lerobot::hub
