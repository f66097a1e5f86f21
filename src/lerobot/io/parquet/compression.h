// Page compression codecs: UNCOMPRESSED, SNAPPY, GZIP and ZSTD (via libsnappy, zlib, libzstd).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/io/parquet/metadata.h"

namespace lerobot::parquet {

const char* codec_name(Codec c);

// Decompresses exactly `uncompressed_size` bytes into `out`; throws FormatError if the codec is
// unsupported, the stream is corrupt or its size differs.
void decompress(Codec codec, const uint8_t* src, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out);

std::string compress(Codec codec, const uint8_t* src, size_t size, int level = 0);

uint32_t crc32_of(const uint8_t* data, size_t size);  // the page CRC (zlib's CRC-32)

}  // namespace lerobot::parquet
