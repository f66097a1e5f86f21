// PNG codec (io/video/png_codec): encode-then-decode is lossless; PNGs written by an independent
// writer (a zlib-based PNG writer in Python, made at test time) decode to their known pixels for
// every colour type we convert (RGB, RGBA, gray, gray+alpha, 16-bit, palette, filtered rows); our
// PNGs decode with that independent reader too; corrupt bytes are refused with a clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/io/video/png_codec.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

std::vector<uint8_t> random_rgb(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (auto& v : px) v = static_cast<uint8_t>(rng() & 0xff);
  return px;
}

// The pixel formula both the Python writer and these tests use: value of sample c at (x, y).
// 16-bit samples are spread over the whole range (x 251) so their high bytes vary.
int sample(int x, int y, int c, int maxval) {
  return ((x * 37 + y * 91 + c * 53 + x * y * 7) * (maxval > 255 ? 251 : 1)) % (maxval + 1);
}

struct Scratch {
  fs::path dir = lerobot::testing::process_temp_dir() / "png";
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_python(const fs::path& script, const std::string& args) {
  const std::string cmd = "python3 " + script.string() + " " + args + " > /dev/null 2>&1";
  return std::system(cmd.c_str());
}

// A minimal PNG writer and reader on Python's zlib, independent of FFmpeg. Rows are written with
// filter type (y % 5) (none, sub, up, average, paeth), so the decoder's unfiltering is exercised.
constexpr const char* kPythonPng = R"PY(
import struct, sys, zlib

def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)

def sample(x, y, c, maxval):
    return ((x * 37 + y * 91 + c * 53 + x * y * 7) * (251 if maxval > 255 else 1)) % (maxval + 1)

def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)

def write(path, w, h, color_type, depth):
    ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    bpp = max(1, ch * depth // 8)
    maxval = (1 << depth) - 1
    raw = b""
    prev = bytes(w * bpp)
    for y in range(h):
        row = bytearray()
        for x in range(w):
            for c in range(ch):
                v = sample(x, y, c, 255 if color_type == 3 else maxval)
                row += struct.pack(">H", v) if depth == 16 else bytes([v])
        f = y % 5
        out = bytearray()
        for i in range(len(row)):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][f]
            out.append((row[i] - pred) & 0xff)
        raw += bytes([f]) + bytes(out)
        prev = bytes(row)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0))
    if color_type == 3:  # palette entry i = (255 - i, i, i // 2)
        png += chunk(b"PLTE", b"".join(bytes([255 - i, i, i // 2]) for i in range(256)))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(png)

def read_rgb8(path, out):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while True:
        n, t = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(t + body) & 0xffffffff
        if t == b"IHDR":
            w, h, depth, ct = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ct == 2, (depth, ct)
        if t == b"IDAT":
            idat += body
        pos += 12 + n
        if t == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride, prev, pix = w * 3, bytearray(w * 3), bytearray()
    for y in range(h):
        f = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - 3] if i >= 3 else 0
            b = prev[i]
            c = prev[i - 3] if i >= 3 else 0
            row[i] = (row[i] + [0, a, b, (a + b) // 2, paeth(a, b, c)][f]) & 0xff
        pix += row
        prev = row
    open(out, "wb").write(struct.pack(">II", w, h) + bytes(pix))

if sys.argv[1] == "write":  # write W H PATH:COLOR_TYPE:DEPTH ...
    for spec in sys.argv[4:]:
        path, ct, depth = spec.rsplit(":", 2)
        write(path, int(sys.argv[2]), int(sys.argv[3]), int(ct), int(depth))
else:
    read_rgb8(sys.argv[2], sys.argv[3])
)PY";

class PngCodec : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = scratch_.dir / "png.py";
    std::ofstream(script_) << kPythonPng;
  }
  Scratch scratch_;
  fs::path script_;
};

TEST_F(PngCodec, RoundTripIsLossless) {
  for (auto [w, h] : {std::pair{1, 1}, std::pair{37, 53}, std::pair{96, 96}, std::pair{640, 3}}) {
    const auto px = random_rgb(w, h, static_cast<uint32_t>(w * 1000 + h));
    const std::string png = encode_png(px.data(), w, h);
    ASSERT_GT(png.size(), 8u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    const RgbImage img = decode_png(reinterpret_cast<const uint8_t*>(png.data()), png.size());
    ASSERT_EQ(img.width, w);
    ASSERT_EQ(img.height, h);
    EXPECT_EQ(img.pixels, px) << w << "x" << h;
  }
  // Compression level 0 (stored) and 9 decode to the same pixels.
  const auto px = random_rgb(20, 10, 3);
  for (int level : {0, 9}) {
    const std::string png = encode_png(px.data(), 20, 10, level);
    EXPECT_EQ(decode_png(reinterpret_cast<const uint8_t*>(png.data()), png.size()).pixels, px);
  }
}

TEST_F(PngCodec, OurPngsDecodeWithAnIndependentReader) {
  const int w = 29, h = 17;
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) px[(static_cast<size_t>(y) * w + x) * 3 + c] = static_cast<uint8_t>(sample(x, y, c, 255));
  const std::string png = encode_png(px.data(), w, h);
  const fs::path in = scratch_.dir / "ours.png", out = scratch_.dir / "ours.rgb";
  std::ofstream(in, std::ios::binary) << png;
  ASSERT_EQ(run_python(script_, "read " + in.string() + " " + out.string()), 0);
  const std::string got = read_bytes(out);
  ASSERT_EQ(got.size(), 8 + px.size());
  EXPECT_EQ(got.substr(8), std::string(px.begin(), px.end()));
}

TEST_F(PngCodec, DecodesEveryColourTypeOfAnIndependentWriter) {
  struct Case {
    const char* name;
    int color_type, depth;
  };
  const int w = 23, h = 11;
  const std::vector<Case> cases = {Case{"rgb8", 2, 8},    Case{"rgba8", 6, 8},  Case{"gray8", 0, 8},
                                   Case{"gray_alpha8", 4, 8}, Case{"rgb16", 2, 16}, Case{"rgba16", 6, 16},
                                   Case{"gray16", 0, 16}, Case{"palette", 3, 8}};
  std::string specs;
  for (const Case& k : cases)
    specs += " " + (scratch_.dir / k.name).string() + ".png:" + std::to_string(k.color_type) + ":" + std::to_string(k.depth);
  ASSERT_EQ(run_python(script_, "write " + std::to_string(w) + " " + std::to_string(h) + specs), 0);
  for (const Case& k : cases) {
    const fs::path p = scratch_.dir / (std::string(k.name) + ".png");
    const std::string bytes = read_bytes(p);
    const RgbImage img = decode_png(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ASSERT_EQ(img.width, w) << k.name;
    ASSERT_EQ(img.height, h) << k.name;
    int wrong = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c) {
          int want;
          const bool gray = k.color_type == 0 || k.color_type == 4;
          if (k.color_type == 3) {
            const int i = sample(x, y, 0, 255);
            want = c == 0 ? 255 - i : c == 1 ? i : i / 2;
          } else if (k.depth == 16) {
            want = sample(x, y, gray ? 0 : c, 65535) >> 8;  // high byte of each 16-bit sample
          } else {
            want = sample(x, y, gray ? 0 : c, 255);  // alpha dropped, gray repeated
          }
          const int got = img.pixels[(static_cast<size_t>(y) * w + x) * 3 + c];
          if (got != want && wrong++ < 3) ADD_FAILURE() << k.name << " (" << x << "," << y << "," << c << "): " << got << " != " << want;
        }
    EXPECT_EQ(wrong, 0) << k.name;
  }
}

TEST_F(PngCodec, CorruptBytesAreRefused) {
  const auto px = random_rgb(16, 16, 9);
  const std::string png = encode_png(px.data(), 16, 16);
  auto decode = [](const std::string& b) { return decode_png(reinterpret_cast<const uint8_t*>(b.data()), b.size()); };
  auto message = [&](const std::string& b) {
    try {
      decode(b);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kData);
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("definitely not a png").find("not a PNG"), std::string::npos);
  EXPECT_NE(message(png.substr(0, png.size() / 2)).find("truncated PNG"), std::string::npos);
  std::string flipped = png;
  const size_t idat = flipped.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  flipped[idat + 10] = static_cast<char>(flipped[idat + 10] ^ 0x5a);  // inside the compressed data: CRC fails
  EXPECT_NE(message(flipped).find("corrupt PNG"), std::string::npos) << message(flipped);
  // A failed decode leaves the thread's decoder usable.
  EXPECT_EQ(decode(png).pixels, px);
}

}  // namespace
}  // namespace lerobot
