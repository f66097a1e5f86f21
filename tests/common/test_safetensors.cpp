// safetensors: round trip for every dtype and rejection of malformed files.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "lerobot/common/error.h"
#include "lerobot/common/safetensors.h"
#include "lerobot/common/safetensors_torch.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

fs::path temp_path(const std::string& name) {
  return lerobot::testing::process_temp_dir() / name;
}

TEST(Safetensors, RoundTripEveryDtype) {
  torch::manual_seed(0);
  TensorMap in;
  in["f32"] = torch::randn({3, 4});
  in["f16"] = torch::randn({5}).to(torch::kFloat16);
  in["bf16"] = torch::randn({2, 2, 2}).to(torch::kBFloat16);
  in["f64"] = torch::randn({2}, torch::kFloat64);
  in["i64"] = torch::randint(-1000000, 1000000, {7}, torch::kInt64);
  in["i32"] = torch::randint(-1000, 1000, {3, 1}, torch::kInt32);
  in["u8"] = torch::randint(0, 256, {4, 4}, torch::kUInt8);
  in["bool"] = torch::randint(0, 2, {6}).to(torch::kBool);
  in["scalar"] = torch::tensor(3.5f);                 // 0-d
  in["empty"] = torch::zeros({0, 3});                 // zero elements
  in["model.layer.0.weight"] = torch::randn({2, 3}).t();  // non-contiguous input
  const fs::path p = temp_path("all.safetensors");
  save_safetensors(p, in, {{"format", "pt"}, {"note", "x"}});

  SafetensorsReader reader(p);
  EXPECT_EQ(reader.metadata().at("format"), "pt");
  EXPECT_EQ(reader.metadata().at("note"), "x");
  EXPECT_EQ(reader.names().size(), in.size());
  EXPECT_EQ(reader.at("bf16").dtype, DType::kBF16);
  EXPECT_EQ(reader.at("scalar").shape.size(), 0u);
  const TensorMap out = load_safetensors(p);
  ASSERT_EQ(out.size(), in.size());
  for (const auto& kv : in) {
    const auto& got = out.at(kv.first);
    EXPECT_EQ(got.scalar_type(), kv.second.scalar_type()) << kv.first;
    EXPECT_EQ(got.sizes(), kv.second.sizes()) << kv.first;
    EXPECT_TRUE(torch::equal(got, kv.second.contiguous())) << kv.first;
  }
}

TEST(Safetensors, HeaderIsAlignedAndOffsetsContiguous) {
  TensorMap in{{"b", torch::ones({3})}, {"a", torch::zeros({1}, torch::kUInt8)}};
  const fs::path p = temp_path("align.safetensors");
  save_safetensors(p, in);
  const std::string bytes = read_file(p);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  EXPECT_EQ(n % 8, 0u);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["a"]["data_offsets"][0], 0);
  EXPECT_EQ(header["a"]["data_offsets"][1], 1);
  EXPECT_EQ(header["b"]["data_offsets"][0], 1);
  EXPECT_EQ(header["b"]["data_offsets"][1], 13);
  EXPECT_EQ(bytes.size(), 8 + n + 13);
}

// Builds a file from a header JSON string and a data buffer.
std::string make_file(const std::string& header, size_t data_bytes, int64_t declared_len = -1) {
  std::string out;
  const uint64_t n = declared_len >= 0 ? static_cast<uint64_t>(declared_len) : header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += header;
  out += std::string(data_bytes, '\x01');
  return out;
}

void expect_rejected(const std::string& bytes, const std::string& needle) {
  const fs::path p = temp_path("bad.safetensors");
  write_file_atomic(p, bytes);
  try {
    SafetensorsReader r(p);
    FAIL() << "accepted a malformed file (" << needle << ")";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;   // names the file
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;       // names the fault
  }
}

TEST(Safetensors, RejectsMalformedFiles) {
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  // Sanity: the well-formed variant is accepted, so the rejections below are about the fault.
  {
    const fs::path p = temp_path("good.safetensors");
    write_file_atomic(p, make_file(ok, 8));
    EXPECT_NO_THROW(SafetensorsReader r(p));
  }
  expect_rejected("abc", "shorter than the 8-byte header");
  expect_rejected(make_file(ok, 8, 5000), "runs past the end");
  expect_rejected(make_file("[1,2,3]", 0), "does not start with '{'");
  expect_rejected(make_file("{\"a\": nope}", 8), "not valid JSON");
  expect_rejected(make_file(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", 8), "unknown dtype");
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
                  "overlap");
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "out of range");
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "need 12");
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 12), "trailing bytes");
  expect_rejected(make_file(R"({"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8),
                  "not a string");
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "negative");
}

TEST(Safetensors, MissingTensorNamesKeyAndFile) {
  const fs::path p = temp_path("one.safetensors");
  save_safetensors(p, {{"x", torch::ones({1})}});
  SafetensorsReader r(p);
  try {
    r.at("y");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos);
  }
}

TEST(Safetensors, MissingFileIsAClearError) {
  EXPECT_THROW(SafetensorsReader r(temp_path("does-not-exist.safetensors")), Error);
}

}  // namespace
}  // namespace lerobot
