// Hand-encoded tensorflow.Event protobufs in TFRecord framing, with CRC-32C.
#include "lerobot/train/metrics/tensorboard.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : (c >> 1);
      t[i] = c;
    }
    return t;
  }();
  return table;
}

double now_seconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

// ---- protobuf wire format (varint = 0, fixed64 = 1, length-delimited = 2, fixed32 = 5) ----
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, int field, int wire) { put_varint(out, (static_cast<uint64_t>(field) << 3) | wire); }
template <class T>
void put_fixed(std::string& out, T v) {  // little-endian host (x86/arm64)
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}
void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

std::string event_header(double wall_time, int64_t step) {
  std::string e;
  put_tag(e, 1, 1);  // wall_time: double
  put_fixed(e, wall_time);
  put_tag(e, 2, 0);  // step: int64
  put_varint(e, static_cast<uint64_t>(step));
  return e;
}

struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  const std::string& where;
  [[noreturn]] void fail(const std::string& what) const { throw_data("malformed event protobuf: " + what, where, "the event file is corrupt; delete it"); }
  bool done() const { return p >= end; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) fail("truncated varint");
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint too long");
  }
  template <class T>
  T fixed() {
    if (end - p < static_cast<ptrdiff_t>(sizeof(T))) fail("truncated fixed field");
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  Reader sub() {
    const uint64_t n = varint();
    if (static_cast<uint64_t>(end - p) < n) fail("truncated length-delimited field");
    Reader r{p, p + n, where};
    p += n;
    return r;
  }
  void skip(int wire) {
    switch (wire) {
      case 0: varint(); break;
      case 1: fixed<uint64_t>(); break;
      case 2: sub(); break;
      case 5: fixed<uint32_t>(); break;
      default: fail("unsupported wire type " + std::to_string(wire));
    }
  }
};

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto& t = crc_table();
  const auto* b = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = t[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

TensorBoardWriter::TensorBoardWriter(const fs::path& log_dir) {
  fs::create_directories(log_dir);
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') std::strcpy(host, "localhost");
  const double t = now_seconds();
  path_ = log_dir / ("events.out.tfevents." + std::to_string(static_cast<int64_t>(t)) + "." + host);
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_)
    throw_runtime("cannot create the TensorBoard event file: " + std::string(std::strerror(errno)),
                  path_.string(), "check that the output directory is writable");
  std::string e = event_header(t, 0);
  put_bytes(e, 3, "brain.Event:2");  // file_version
  write_record(e);
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_) std::fclose(file_);
}

void TensorBoardWriter::write_record(const std::string& data) {
  std::string rec;
  const uint64_t len = data.size();
  put_fixed(rec, len);
  put_fixed(rec, masked_crc32c(rec.data(), 8));
  rec += data;
  put_fixed(rec, masked_crc32c(data.data(), data.size()));
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size())
    throw_runtime("write failed", path_.string(), "check free disk space");
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  add_scalar(tag, value, step, now_seconds());
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  std::string v;
  put_bytes(v, 1, tag);  // Summary.Value.tag
  put_tag(v, 2, 5);      // Summary.Value.simple_value: float
  put_fixed(v, static_cast<float>(value));
  std::string summary;
  put_bytes(summary, 1, v);  // Summary.value (repeated)
  std::string e = event_header(wall_time, step);
  put_bytes(e, 5, summary);  // Event.summary
  write_record(e);
}

void TensorBoardWriter::add_scalars(const std::string& prefix, const Json& values, int64_t step) {
  const double t = now_seconds();
  for (auto it = values.begin(); it != values.end(); ++it)
    if (it.value().is_number())
      add_scalar(prefix.empty() ? it.key() : prefix + "/" + it.key(), it.value().get<double>(), step, t);
}

void TensorBoardWriter::flush() {
  if (file_) std::fflush(file_);
}

TensorBoardEvents read_tensorboard_events(const fs::path& path) {
  const std::string bytes = read_file(path, std::uintmax_t(1) << 36);  // event files grow with the run
  TensorBoardEvents out;
  size_t off = 0;
  const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
  while (off < bytes.size()) {
    const std::string where = path.string() + " (record at byte " + std::to_string(off) + ")";
    if (bytes.size() - off < 12) throw_data("truncated record header", where, "the event file is corrupt or still being written");
    uint64_t len;
    uint32_t len_crc;
    std::memcpy(&len, base + off, 8);
    std::memcpy(&len_crc, base + off + 8, 4);
    if (len_crc != masked_crc32c(base + off, 8)) throw_data("length CRC mismatch", where, "the event file is corrupt");
    const size_t avail = bytes.size() - off - 12;
    if (avail < 4 || len > avail - 4) throw_data("truncated record", where, "the event file is corrupt or still being written");
    const uint8_t* data = base + off + 12;
    uint32_t data_crc;
    std::memcpy(&data_crc, data + len, 4);
    if (data_crc != masked_crc32c(data, len)) throw_data("data CRC mismatch", where, "the event file is corrupt");
    off += 12 + len + 4;
    ++out.num_records;

    Reader ev{data, data + len, where};
    double wall_time = 0.0;
    int64_t step = 0;
    std::vector<std::pair<std::string, float>> values;
    while (!ev.done()) {
      const uint64_t key = ev.varint();
      const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
      if (field == 1 && wire == 1) wall_time = ev.fixed<double>();
      else if (field == 2 && wire == 0) step = static_cast<int64_t>(ev.varint());
      else if (field == 3 && wire == 2) {
        Reader s = ev.sub();
        if (out.file_version.empty()) out.file_version.assign(reinterpret_cast<const char*>(s.p), s.end - s.p);
      } else if (field == 5 && wire == 2) {
        Reader summary = ev.sub();
        while (!summary.done()) {
          const uint64_t sk = summary.varint();
          if ((sk >> 3) != 1 || (sk & 7) != 2) { summary.skip(static_cast<int>(sk & 7)); continue; }
          Reader val = summary.sub();
          std::string tag;
          bool has_simple = false;
          float simple = 0.0f;
          while (!val.done()) {
            const uint64_t vk = val.varint();
            if ((vk >> 3) == 1 && (vk & 7) == 2) {
              Reader t = val.sub();
              tag.assign(reinterpret_cast<const char*>(t.p), t.end - t.p);
            } else if ((vk >> 3) == 2 && (vk & 7) == 5) {
              simple = val.fixed<float>();
              has_simple = true;
            } else {
              val.skip(static_cast<int>(vk & 7));
            }
          }
          if (has_simple) values.emplace_back(tag, simple);
        }
      } else {
        ev.skip(wire);
      }
    }
    for (auto& [tag, v] : values) out.scalars.push_back({tag, step, v, wall_time});
  }
  return out;
}

}  // namespace lerobot
