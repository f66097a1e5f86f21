// Compression codecs for Parquet pages.
#include "lerobot/io/parquet/compression.h"

#include <snappy.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound
#include <zstd.h>

#include <cstring>

#include "lerobot/io/parquet/format_error.h"

namespace lerobot::parquet {

namespace {
constexpr size_t kMaxPageBytes = size_t(1) << 30;  // 1 GiB: larger pages are rejected
}

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::kUncompressed: return "UNCOMPRESSED";
    case Codec::kSnappy: return "SNAPPY";
    case Codec::kGzip: return "GZIP";
    case Codec::kZstd: return "ZSTD";
  }
  return "unsupported codec";
}

uint32_t crc32_of(const uint8_t* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    uInt n = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, data, n);
    data += n;
    size -= n;
  }
  return static_cast<uint32_t>(crc);
}

void decompress(Codec codec, const uint8_t* src, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out) {
  if (uncompressed_size > kMaxPageBytes) fail("page larger than 1 GiB");
  const std::string mismatch = std::string(codec_name(codec)) + ": decompressed size differs from the page header";
  switch (codec) {
    case Codec::kUncompressed:
      if (size != uncompressed_size) fail("uncompressed page size differs from its stored size");
      out->assign(src, src + size);
      return;
    case Codec::kSnappy: {
      size_t n = 0;
      const char* s = reinterpret_cast<const char*>(src);
      if (!snappy::GetUncompressedLength(s, size, &n)) fail("SNAPPY: corrupt stream header");
      if (n != uncompressed_size) fail(mismatch);
      // A snappy copy element emits at most 64 bytes from 2-3 input bytes.
      if (n / 32 > size + 16) fail("SNAPPY: page header size implausible");
      out->resize(n);
      if (!snappy::RawUncompress(s, size, reinterpret_cast<char*>(out->data())))
        fail("SNAPPY: corrupt stream");
      return;
    }
    case Codec::kZstd: {
      unsigned long long n = ZSTD_getFrameContentSize(src, size);
      if (n == ZSTD_CONTENTSIZE_ERROR) fail("ZSTD: corrupt frame header");
      if (n != ZSTD_CONTENTSIZE_UNKNOWN && n != uncompressed_size) fail(mismatch);
      unsigned long long bound = ZSTD_decompressBound(src, size);
      if (bound == ZSTD_CONTENTSIZE_ERROR || bound < uncompressed_size) fail("ZSTD: corrupt frame");
      out->resize(uncompressed_size);
      size_t r = ZSTD_decompress(out->data(), out->size(), src, size);
      if (ZSTD_isError(r)) fail(std::string("ZSTD: ") + ZSTD_getErrorName(r));
      if (r != uncompressed_size) fail(mismatch);
      return;
    }
    case Codec::kGzip: {
      // Deflate cannot expand more than ~1032:1; reject absurd header sizes before allocating.
      if (uncompressed_size / 1032 > size + 64) fail("GZIP: page header size implausible");
      out->resize(uncompressed_size);
      z_stream zs;
      std::memset(&zs, 0, sizeof(zs));
      if (inflateInit2(&zs, 15 + 32) != Z_OK) fail("GZIP: inflateInit failed");
      zs.next_in = const_cast<Bytef*>(src);
      zs.avail_in = static_cast<uInt>(size);
      zs.next_out = out->data();
      zs.avail_out = static_cast<uInt>(out->size());
      int rc = inflate(&zs, Z_FINISH);
      size_t produced = zs.total_out;
      inflateEnd(&zs);
      if (rc != Z_STREAM_END) fail("GZIP: corrupt or truncated stream");
      if (produced != uncompressed_size) fail(mismatch);
      return;
    }
  }
  fail("unsupported compression codec " + std::to_string(static_cast<int>(codec)));
}

std::string compress(Codec codec, const uint8_t* src, size_t size, int level) {
  switch (codec) {
    case Codec::kUncompressed:
      return std::string(reinterpret_cast<const char*>(src), size);
    case Codec::kSnappy: {
      std::string out;
      snappy::Compress(reinterpret_cast<const char*>(src), size, &out);
      return out;
    }
    case Codec::kZstd: {
      std::string out(ZSTD_compressBound(size), '\0');
      size_t r = ZSTD_compress(out.data(), out.size(), src, size, level ? level : 3);
      if (ZSTD_isError(r)) fail(std::string("ZSTD: ") + ZSTD_getErrorName(r));
      out.resize(r);
      return out;
    }
    case Codec::kGzip: {
      z_stream zs;
      std::memset(&zs, 0, sizeof(zs));
      if (deflateInit2(&zs, level ? level : 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        fail("GZIP: deflateInit failed");
      std::string out(deflateBound(&zs, static_cast<uLong>(size)) + 32, '\0');
      zs.next_in = const_cast<Bytef*>(src);
      zs.avail_in = static_cast<uInt>(size);
      zs.next_out = reinterpret_cast<Bytef*>(out.data());
      zs.avail_out = static_cast<uInt>(out.size());
      int rc = deflate(&zs, Z_FINISH);
      out.resize(zs.total_out);
      deflateEnd(&zs);
      if (rc != Z_STREAM_END) fail("GZIP: deflate failed");
      return out;
    }
  }
  fail("unsupported compression codec " + std::to_string(static_cast<int>(codec)));
}

}  // namespace lerobot::parquet
