// OpCounter: counts the ATen operators a piece of code runs and the ones among them that make the
// host wait for the device. A GPU training step is made of kernel launches and host
// synchronisations; these counts are the same on any machine, so the step's cost can be tracked
// without a GPU (bench/step_ops).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace lerobot {

class OpCounter {
 public:
  // Starts counting on the calling thread (and on the autograd threads it hands backward to).
  // One counter at a time.
  OpCounter();
  ~OpCounter();
  OpCounter(const OpCounter&) = delete;
  OpCounter& operator=(const OpCounter&) = delete;

  // Operators called from outside any other operator (the ones a step launches; the ops a
  // composite operator runs inside it are not counted again).
  int64_t ops() const { return ops_; }
  // Host synchronisations: reading a device value on the host (item(), aten::_local_scalar_dense),
  // data-dependent shapes (nonzero), equal(), and copies from a CUDA tensor into host memory.
  int64_t syncs() const { return syncs_; }
  // Top-level operator counts by name ("aten::add_", ...).
  const std::map<std::string, int64_t>& by_name() const { return by_name_; }
  // Where the synchronisations happened: the top-level operator each was inside ("aten::item" for a
  // plain item(); a kernel that reads a value itself names that kernel).
  const std::map<std::string, int64_t>& sync_sites() const { return sync_sites_; }
  // "aten::item x2, aten::_fused_adamw_ x1" (empty when there were none).
  std::string sync_sites_text() const;
  void reset();

  // Internal: called by the RecordFunction callbacks.
  // `site`: the top-level operator this one is inside (itself when top_level); never null.
  void on_start(const char* name, bool top_level, const char* site, bool sync);

 private:
  uint64_t handle_ = 0;
  std::mutex mutex_;  // backward may run on an autograd thread
  int64_t ops_ = 0;
  int64_t syncs_ = 0;
  std::map<std::string, int64_t> by_name_;
  std::map<std::string, int64_t> sync_sites_;
};

}  // namespace lerobot
