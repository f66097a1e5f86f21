// libFuzzer target: SafetensorsReader over arbitrary bytes must throw lerobot::Error or succeed,
// and every tensor view it returns must lie inside the buffer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "lerobot/common/error.h"
#include "lerobot/common/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    lerobot::SafetensorsReader r(data, size, "fuzz-input");
    for (const auto& [name, t] : r.tensors()) {
      if (t.nbytes && (t.data < data || t.data + t.nbytes > data + size)) std::abort();
      volatile uint8_t sink = 0;
      for (size_t i = 0; i < t.nbytes; i += 64) sink ^= t.data[i];  // touch: ASan checks bounds
      (void)sink;
    }
  } catch (const lerobot::Error&) {
  }
  return 0;
}
