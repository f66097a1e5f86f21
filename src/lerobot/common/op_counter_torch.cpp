// OpCounter over ATen's RecordFunction callbacks (see op_counter.h).
#include "lerobot/common/op_counter.h"

#include <ATen/record_function.h>

#include <atomic>
#include <cstring>

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

std::atomic<OpCounter*> g_active{nullptr};
thread_local int t_depth = 0;                   // operators entered and not yet left on this thread
thread_local const char* t_top_name = nullptr;  // the outermost of them (ATen's static schema name)

bool is_device_to_host_copy(const at::RecordFunction& fn) {
  if (std::strcmp(fn.name(), "aten::copy_") != 0) return false;
  const auto inputs = fn.inputs();
  if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return false;
  return inputs[0].toTensor().is_cpu() && inputs[1].toTensor().is_cuda();
}

bool is_sync(const at::RecordFunction& fn) {
  const char* n = fn.name();
  return std::strcmp(n, "aten::_local_scalar_dense") == 0 || std::strcmp(n, "aten::nonzero") == 0 ||
         std::strcmp(n, "aten::equal") == 0 || is_device_to_host_copy(fn);
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  const bool top = t_depth++ == 0;
  if (top) t_top_name = fn.name();
  if (OpCounter* c = g_active.load()) c->on_start(fn.name(), top, t_top_name, is_sync(fn));
  return nullptr;
}

void on_exit(const at::RecordFunction&, at::ObserverContext*) { --t_depth; }

}  // namespace

OpCounter::OpCounter() {
  OpCounter* expected = nullptr;
  LEROBOT_CHECK(g_active.compare_exchange_strong(expected, this), "only one OpCounter may be active");
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(on_enter, on_exit).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

OpCounter::~OpCounter() {
  at::removeCallback(handle_);
  g_active.store(nullptr);
}

void OpCounter::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  ops_ = 0;
  syncs_ = 0;
  by_name_.clear();
  sync_sites_.clear();
}

void OpCounter::on_start(const char* name, bool top_level, const char* site, bool sync) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sync) {
    ++syncs_;
    ++sync_sites_[site];
  }
  if (!top_level) return;  // inside another operator: counted with it
  ++ops_;
  ++by_name_[name];
}

std::string OpCounter::sync_sites_text() const {
  std::string text;
  for (const auto& [site, n] : sync_sites_)
    text += (text.empty() ? "" : ", ") + site + " x" + std::to_string(n);
  return text;
}

}  // namespace lerobot
