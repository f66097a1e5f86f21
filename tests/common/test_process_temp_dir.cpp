// Each test process's temp directory (tests/support/process_temp_dir.h): where temp files go, and
// that it is gone once the process exits, but not when a forked child exits.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/process_temp_dir.h"
#include "support/run_command.h"

namespace lerobot::testing {
namespace {

namespace fs = std::filesystem;

TEST(ProcessTempDir, IsWhereTempFilesGo) {
  const fs::path& dir = process_temp_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  EXPECT_EQ(dir.filename().string().rfind("lerobot_test_", 0), 0u) << dir;
  EXPECT_EQ(fs::temp_directory_path(), dir);
  const std::string out = run_command("echo \"$TMPDIR\"").out;
  EXPECT_EQ(out, dir.string() + "\n") << "commands a test starts inherit it";
}

// Run by the next test in a child process: writes a file into its own temp directory and
// reports that directory's path to the file the parent named.
TEST(ProcessTempDir, ChildWritesAFile) {
  const char* report = std::getenv("LEROBOT_TEST_TEMP_DIR_REPORT");
  const fs::path file = process_temp_dir() / "scratch.bin";
  std::ofstream(file) << std::string(4096, 'x');
  EXPECT_EQ(fs::file_size(file), 4096u);
  if (report != nullptr) std::ofstream(report) << process_temp_dir().string();
}

TEST(ProcessTempDir, IsRemovedWhenTheProcessExits) {
  const fs::path report = process_temp_dir() / "child_dir.txt";
  const CommandResult r = run_command("LEROBOT_TEST_TEMP_DIR_REPORT=" + report.string() + " " +
                                      fs::read_symlink("/proc/self/exe").string() +
                                      " --gtest_filter=ProcessTempDir.ChildWritesAFile");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(report);
  std::string child_dir;
  std::getline(in, child_dir);
  ASSERT_FALSE(child_dir.empty()) << r.out;
  EXPECT_EQ(fs::path(child_dir).parent_path(), process_temp_dir()) << "made under the TMPDIR it inherited";
  EXPECT_FALSE(fs::exists(child_dir)) << child_dir << " outlived its process";
}

TEST(ProcessTempDir, AForkedChildThatExitsLeavesItToItsParent) {
  const fs::path marker = process_temp_dir() / "marker";
  std::ofstream(marker) << "kept";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) std::exit(0);  // runs static destructors in the child
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::exists(marker)) << "a child's exit removed its parent's temp directory";
}

}  // namespace
}  // namespace lerobot::testing
