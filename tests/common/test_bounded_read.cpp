// #15 defect 2: whole-file reads are bounded: a link to /dev/zero or a FIFO is refused as not a
// regular file and a file over the limit is refused by its size, each naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

fs::path temp_dir() {
  return lerobot::testing::process_temp_dir();
}

void expect_data_error_naming(const fs::path& p, const std::string& words, std::uintmax_t max = kMaxTextFileBytes) {
  try {
    read_file(p, max);
    FAIL() << "read " << p;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData) << e.what();
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(BoundedRead, ALinkToDevZeroIsRefused) {
  const fs::path link = temp_dir() / "info.json";
  fs::remove(link);
  fs::create_symlink("/dev/zero", link);
  expect_data_error_naming(link, "not a regular file");
}

TEST(BoundedRead, AFifoIsRefusedWithoutBlocking) {
  const fs::path fifo = temp_dir() / "stats.json";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_data_error_naming(fifo, "not a regular file");
}

TEST(BoundedRead, AFileOverTheLimitIsRefusedBeforeReading) {
  const fs::path big = temp_dir() / "episodes.jsonl";
  { std::FILE* f = std::fopen(big.c_str(), "wb"); std::fclose(f); }
  fs::resize_file(big, kMaxTextFileBytes + 1);  // sparse: nothing is written
  expect_data_error_naming(big, "bytes");
  fs::resize_file(big, 100);
  expect_data_error_naming(big, "bytes", 99);
  EXPECT_EQ(read_file(big, 100).size(), 100u);
}

}  // namespace
}  // namespace lerobot
