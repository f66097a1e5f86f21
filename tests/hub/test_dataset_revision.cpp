// The dataset revision LeRobot 0.6's get_safe_version picks, and our v2.1 fallback.
#include <gtest/gtest.h>

#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/hub/dataset_revision.h"

namespace lerobot::hub {
namespace {

std::string usage_error(const std::vector<std::string>& refs) {
  try {
    choose_dataset_revision("org/ds", "v3.0", refs);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  return "(no error)";
}

TEST(DatasetRevision, PicksLikeGetSafeVersion) {
  EXPECT_EQ(choose_dataset_revision("org/ds", "v3.0", {"main", "v2.1", "v3.0"}).revision, "v3.0");
  EXPECT_TRUE(choose_dataset_revision("org/ds", "v3.0", {"main", "v3.0"}).note.empty());
  // "3.0" and "v3.0" are the same version; the name the repo uses is kept.
  EXPECT_EQ(choose_dataset_revision("org/ds", "v3.0", {"3.0"}).revision, "3.0");
  // The newest v3.x not above v3.0 ... and never a newer minor.
  auto older = choose_dataset_revision("org/ds", "v3.1", {"v3.0", "v2.1", "main"});
  EXPECT_EQ(older.revision, "v3.0");
  EXPECT_NE(older.note.find("using version v3.0"), std::string::npos);
  EXPECT_NE(usage_error({"v3.1", "main"}).find("only has versions newer"), std::string::npos);
  // v2.1 only: LeRobot refuses; we take it and say so.
  auto v21 = choose_dataset_revision("org/ds", "v3.0", {"main", "v2.0", "v2.1"});
  EXPECT_EQ(v21.revision, "v2.1");
  EXPECT_NE(v21.note.find("has no v3.x version; taking v2.1"), std::string::npos);
  EXPECT_NE(usage_error({"v2.0", "main"}).find("older than v3.0"), std::string::npos);
  EXPECT_NE(usage_error({"main", "dev"}).find("no codebase-version branch or tag"), std::string::npos);
  // A branch or commit is not a version: used as given.
  EXPECT_EQ(choose_dataset_revision("org/ds", "main", {"v3.0"}).revision, "main");
}

TEST(DatasetRevision, RefsFromTheServer) {
  testing::TempDir tmp;
  testing::HubServer server(testing::make_test_repos(tmp.path / "repos"), tmp.path / "server");
  HubClient client = testing::make_client(server.endpoint(), tmp.path / "home");
  RepoRefs refs = client.list_refs(RepoType::kDataset, "lerobot/record-test");
  ASSERT_EQ(refs.branches.size(), 1u);
  EXPECT_EQ(refs.branches[0].name, "main");
  EXPECT_EQ(refs.branches[0].commit, testing::kCommitV30);
  ASSERT_EQ(refs.tags.size(), 2u);
  std::vector<std::string> names = {"main", refs.tags[0].name, refs.tags[1].name};
  EXPECT_EQ(choose_dataset_revision("lerobot/record-test", "v3.0", names).revision, "v3.0");
}

}  // namespace
}  // namespace lerobot::hub
