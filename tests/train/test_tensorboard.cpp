// TensorBoard event files: CRC-32C, write then read back with every CRC checked, corruption caught.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "lerobot/common/error.h"
#include "lerobot/train/metrics/tensorboard.h"
#include "support/process_temp_dir.h"

using namespace lerobot;

namespace {
fs::path temp_dir() {
  auto d = lerobot::testing::process_temp_dir() / "tb";
  fs::remove_all(d);
  return d;
}
}  // namespace

TEST(TensorBoard, Crc32cKnownValues) {
  // The standard CRC-32C check value and RFC 3720 (iSCSI) test vectors.
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  EXPECT_EQ(crc32c("", 0), 0u);
  const uint32_t c = crc32c("123456789", 9);
  EXPECT_EQ(masked_crc32c("123456789", 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST(TensorBoard, WriteReadBackAndDetectCorruption) {
  const auto dir = temp_dir();
  fs::path file;
  {
    TensorBoardWriter w(dir);
    file = w.path();
    w.add_scalar("train/loss", 0.5, 10, 1700000000.25);
    w.add_scalar("train/lr", 1e-5, 10);
    Json d = {{"steps", 20}, {"loss", 0.25}, {"name", "skip me"}};
    w.add_scalars("train", d, 20);
    w.flush();
  }
  const std::string name = file.filename().string();
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  EXPECT_EQ(file.parent_path(), dir);

  auto ev = read_tensorboard_events(file);
  EXPECT_EQ(ev.file_version, "brain.Event:2");
  EXPECT_EQ(ev.num_records, 5u);  // version + 4 scalars
  ASSERT_EQ(ev.scalars.size(), 4u);
  EXPECT_EQ(ev.scalars[0].tag, "train/loss");
  EXPECT_EQ(ev.scalars[0].step, 10);
  EXPECT_FLOAT_EQ(ev.scalars[0].value, 0.5f);
  EXPECT_DOUBLE_EQ(ev.scalars[0].wall_time, 1700000000.25);
  EXPECT_EQ(ev.scalars[1].tag, "train/lr");
  EXPECT_FLOAT_EQ(ev.scalars[1].value, 1e-5f);
  EXPECT_EQ(ev.scalars[2].tag, "train/steps");
  EXPECT_FLOAT_EQ(ev.scalars[2].value, 20.0f);
  EXPECT_EQ(ev.scalars[3].tag, "train/loss");
  EXPECT_EQ(ev.scalars[3].step, 20);
  EXPECT_FLOAT_EQ(ev.scalars[3].value, 0.25f);

  // Flip one byte inside the second record's payload (the "train/loss" tag): a data CRC error.
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t pos = bytes.find("train/loss");
  ASSERT_NE(pos, std::string::npos);
  std::string bad = bytes;
  bad[pos] ^= 0x01;
  const auto bad_path = dir / "events.out.tfevents.corrupt";
  { std::ofstream(bad_path, std::ios::binary) << bad; }
  try {
    read_tensorboard_events(bad_path);
    FAIL() << "corruption not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos) << e.what();
  }
  // A corrupted length field is caught by the length CRC.
  std::string bad_len = bytes;
  bad_len[0] ^= 0x40;
  { std::ofstream(bad_path, std::ios::binary | std::ios::trunc) << bad_len; }
  EXPECT_THROW(read_tensorboard_events(bad_path), Error);
  // A truncated file is an error too.
  { std::ofstream(bad_path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 3); }
  EXPECT_THROW(read_tensorboard_events(bad_path), Error);
  fs::remove_all(dir);
}
