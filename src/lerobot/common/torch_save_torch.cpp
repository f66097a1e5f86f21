// torch.save-compatible writer for a dict of plain values and tensor lists (see torch_save.h).
#include "lerobot/common/torch_save.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>

namespace lerobot {
namespace {

// A protocol-2 pickle stream of the few opcodes a state dict needs.
class PickleWriter {
 public:
  std::string out;
  void op(char c) { out.push_back(c); }
  void raw(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  void str(const std::string& s) {  // BINUNICODE
    op('X');
    const uint32_t n = uint32_t(s.size());
    raw(&n, 4);  // little-endian host (x86, aarch64)
    raw(s.data(), s.size());
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      op('K');
      const uint8_t b = uint8_t(v);
      raw(&b, 1);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      const int32_t i = int32_t(v);
      raw(&i, 4);
    } else {
      op('\x8a');  // LONG1: 8 little-endian two's-complement bytes
      const uint8_t n = 8;
      raw(&n, 1);
      raw(&v, 8);
    }
  }
  void real(double v) {  // BINFLOAT is big-endian
    op('G');
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int i = 7; i >= 0; --i) op(char((bits >> (8 * i)) & 0xff));
  }
  void boolean(bool b) { op(b ? '\x88' : '\x89'); }
  void global(const char* module, const char* name) {
    op('c');
    out += module;
    op('\n');
    out += name;
    op('\n');
  }
  void int_tuple(c10::IntArrayRef v) {
    if (v.empty()) return op(')');
    op('(');
    for (int64_t x : v) integer(x);
    op('t');
  }
};

const char* storage_type(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat32: return "FloatStorage";
    case torch::kFloat64: return "DoubleStorage";
    case torch::kFloat16: return "HalfStorage";
    case torch::kBFloat16: return "BFloat16Storage";
    case torch::kInt64: return "LongStorage";
    case torch::kInt32: return "IntStorage";
    case torch::kUInt8: return "ByteStorage";
    case torch::kBool: return "BoolStorage";
    default: TORCH_CHECK(false, "torch_save_dict: unsupported dtype ", t);
  }
}

}  // namespace

void torch_save_dict(const fs::path& file, const TorchSaveDict& dict) {
  PickleWriter p;
  std::vector<torch::Tensor> storages;
  p.op('\x80');
  p.op('\x02');
  p.op('}');  // EMPTY_DICT
  p.op('(');  // MARK
  for (const auto& [key, value] : dict) {
    p.str(key);
    if (const auto* d = std::get_if<double>(&value)) p.real(*d);
    else if (const auto* i = std::get_if<int64_t>(&value)) p.integer(*i);
    else if (const auto* b = std::get_if<bool>(&value)) p.boolean(*b);
    else {
      const auto& list = std::get<std::vector<torch::Tensor>>(value);
      p.op(']');  // EMPTY_LIST
      if (list.empty()) continue;
      p.op('(');
      for (const auto& t : list) {
        const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
        p.global("torch._utils", "_rebuild_tensor_v2");
        p.op('(');
        p.op('(');  // persistent id: ('storage', torch.<T>Storage, key, 'cpu', numel)
        p.str("storage");
        p.global("torch", storage_type(c.scalar_type()));
        p.str(std::to_string(storages.size()));
        p.str("cpu");
        p.integer(c.numel());
        p.op('t');
        p.op('Q');  // BINPERSID
        p.integer(0);  // storage offset
        p.int_tuple(c.sizes());
        p.int_tuple(c.strides());
        p.boolean(false);  // requires_grad
        p.global("collections", "OrderedDict");
        p.op(')');
        p.op('R');  // OrderedDict()
        p.op('t');
        p.op('R');
        storages.push_back(c);
      }
      p.op('e');  // APPENDS
    }
  }
  p.op('u');  // SETITEMS
  p.op('.');  // STOP

  std::string bytes;
  {
    caffe2::serialize::PyTorchStreamWriter w([&](const void* data, size_t n) {
      bytes.append(static_cast<const char*>(data), n);
      return n;
    });
    w.writeRecord("data.pkl", p.out.data(), p.out.size());
    const std::string order = "little";
    w.writeRecord("byteorder", order.data(), order.size());
    for (size_t i = 0; i < storages.size(); ++i)
      w.writeRecord("data/" + std::to_string(i), storages[i].data_ptr(), storages[i].nbytes());
    w.writeEndOfFile();
  }
  write_file_atomic(file, bytes);
}

}  // namespace lerobot
