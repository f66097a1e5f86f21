// SHA-256 (the etag of an LFS file on the Hub) and git's blob SHA-1 (the etag of a regular
// file), computed in streaming form so a download can be checked before it enters the cache.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lerobot/common/fs.h"

namespace lerobot::hub {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  std::string hex_digest();  // finishes; the object is spent afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

class Sha1 {
 public:
  Sha1();
  void update(const void* data, size_t n);
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  uint32_t h_[5];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view bytes);
std::string sha256_file(const fs::path& path);
// git's object id of a blob: sha1("blob <size>\0" + content), what the Hub sends as the ETag
// of a file not stored in LFS.
std::string git_blob_sha1_file(const fs::path& path);

}  // namespace lerobot::hub
