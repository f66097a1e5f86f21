// safetensors reader (validating, memory-mapped) and writer.
#include "lerobot/common/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kF64, "F64", 8}, {DType::kF32, "F32", 4}, {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2}, {DType::kI64, "I64", 8}, {DType::kI32, "I32", 4},
    {DType::kI16, "I16", 2}, {DType::kI8, "I8", 1}, {DType::kU8, "U8", 1},
    {DType::kBool, "BOOL", 1},
};
constexpr uint64_t kMaxHeader = 100ull << 20;  // the reference implementation's limit

[[noreturn]] void bad(const std::string& label, const std::string& what) {
  throw_data("malformed safetensors file: " + what, label,
             "the file is truncated or was not written by a safetensors writer; re-export it");
}

}  // namespace

size_t dtype_size(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.size;
  return 0;
}
const char* dtype_name(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}
bool parse_dtype(const std::string& name, DType* out) {
  for (const auto& d : kDTypes)
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  return false;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

SafetensorsReader::SafetensorsReader(const fs::path& path) : file_(path), label_(path.string()) {
  parse(file_.data(), file_.size());
}

SafetensorsReader::SafetensorsReader(const uint8_t* data, size_t size, std::string label)
    : label_(std::move(label)) {
  parse(data, size);
}

void SafetensorsReader::parse(const uint8_t* data, size_t size) {
  if (size < 8) bad(label_, "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > kMaxHeader) bad(label_, "header length " + std::to_string(n) + " exceeds the 100 MiB limit");
  if (n > size - 8)
    bad(label_, "header length " + std::to_string(n) + " runs past the end of the file (" +
                    std::to_string(size) + " bytes)");
  const char* hbeg = reinterpret_cast<const char*>(data + 8);
  if (n == 0 || hbeg[0] != '{') bad(label_, "header does not start with '{'");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(hbeg, hbeg + n);
  } catch (const std::exception& e) {
    bad(label_, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) bad(label_, "header is not a JSON object");
  const uint8_t* buffer = data + 8 + n;
  const uint64_t buffer_size = size - 8 - n;

  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const auto& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) bad(label_, "__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) bad(label_, "__metadata__ value for '" + m.key() + "' is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      bad(label_, "tensor '" + name + "' lacks dtype, shape or data_offsets");
    TensorView t;
    if (!v["dtype"].is_string() || !parse_dtype(v["dtype"].get<std::string>(), &t.dtype))
      bad(label_, "tensor '" + name + "' has unknown dtype " + v["dtype"].dump());
    if (!v["shape"].is_array()) bad(label_, "tensor '" + name + "' shape is not a list");
    uint64_t numel = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) bad(label_, "tensor '" + name + "' has a negative or non-integer dimension");
      const uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > (UINT64_MAX / dim)) bad(label_, "tensor '" + name + "' shape overflows");
      numel *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      bad(label_, "tensor '" + name + "' data_offsets is not [begin, end]");
    const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (b > e) bad(label_, "tensor '" + name + "' data_offsets begin > end");
    if (e > buffer_size)
      bad(label_, "tensor '" + name + "' data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                      "] out of range of the " + std::to_string(buffer_size) + "-byte data buffer");
    if (numel > UINT64_MAX / dtype_size(t.dtype) || e - b != numel * dtype_size(t.dtype))
      bad(label_, "tensor '" + name + "' occupies " + std::to_string(e - b) + " bytes but its shape and dtype need " +
                      std::to_string(numel * dtype_size(t.dtype)));
    t.data = buffer + b;
    t.nbytes = e - b;
    ranges.emplace_back(b, e);
    tensors_.emplace(name, std::move(t));
  }
  // The byte buffer must be covered exactly once: sorted ranges, each starting where the last ended.
  std::sort(ranges.begin(), ranges.end());
  uint64_t cursor = 0;
  for (const auto& r : ranges) {
    if (r.first < cursor) bad(label_, "tensor data_offsets overlap at byte " + std::to_string(r.first));
    if (r.first > cursor) bad(label_, "gap in the data buffer at byte " + std::to_string(cursor));
    cursor = r.second;
  }
  if (cursor != buffer_size)
    bad(label_, "data buffer has " + std::to_string(buffer_size - cursor) + " trailing bytes not owned by any tensor");
}

std::vector<std::string> SafetensorsReader::names() const {
  std::vector<std::string> out;
  for (const auto& kv : tensors_) out.push_back(kv.first);
  return out;
}

const TensorView& SafetensorsReader::at(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw_data("tensor '" + name + "' is not in the file", label_,
               "check that the file was written for this model or state");
  return it->second;
}

std::string serialize_safetensors(const std::vector<TensorEntry>& tensors,
                                  const std::map<std::string, std::string>& metadata) {
  std::vector<const TensorEntry*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->name < b->name; });
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorEntry* t : order) {
    uint64_t numel = 1;
    for (int64_t s : t->shape) numel *= static_cast<uint64_t>(s);
    LEROBOT_CHECK(numel * dtype_size(t->dtype) == t->nbytes, "byte size mismatch for " + t->name);
    header[t->name] = {{"dtype", dtype_name(t->dtype)}, {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->nbytes}}};
    offset += t->nbytes;
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h.push_back(' ');
  std::string out;
  out.reserve(8 + h.size() + offset);
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += h;
  for (const TensorEntry* t : order) out.append(static_cast<const char*>(t->data), t->nbytes);
  return out;
}

void write_safetensors(const fs::path& path, const std::vector<TensorEntry>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, serialize_safetensors(tensors, metadata));
}

}  // namespace lerobot
