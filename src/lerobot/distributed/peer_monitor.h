// PeerMonitor: a store heartbeat per rank, so a failed collective can name the ranks at fault.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lerobot {

// Each rank publishes "<beat> <seq>" under "hb/<rank>" every `interval` from a thread: beat counts
// up while the process lives, seq is the number of collectives it has entered. When a collective
// fails or times out, fail() samples the heartbeats twice and names the ranks whose beat did not
// move (exited or frozen) and the ranks whose seq is behind (alive but never reached it).
class PeerMonitor {
 public:
  // `store` must be a connection of its own (the thread uses it concurrently with nothing else).
  PeerMonitor(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size,
              std::chrono::milliseconds interval, std::string store_address);
  ~PeerMonitor();
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;

  // Called when this rank enters a collective; returns its sequence number (1, 2, ...).
  int64_t enter() { return ++seq_; }
  int64_t seq() const { return seq_.load(); }

  // Throws a lerobot::Error (runtime) for collective `op` #seq that failed with `cause`.
  [[noreturn]] void fail(const std::string& op, int64_t seq, const std::string& cause);

  // Blocks until rank `root` has entered collective #seq (its heartbeat says so), for as long as
  // its heartbeat goes on: no deadline, since `what` is work only `root` does (an evaluation, a
  // checkpoint) and may take longer than any collective timeout. Logs every `report_every` that it
  // is still waiting; throws (fail()) when root's heartbeat stops for `stall` or its store is gone.
  void wait_for_rank(int root, int64_t seq, const std::string& what,
                     std::chrono::milliseconds stall = std::chrono::seconds(15),
                     std::chrono::milliseconds report_every = std::chrono::minutes(5));

  // Who is at fault, as text ("rank 1 stopped answering ..."); empty when nobody could be blamed.
  std::string diagnose(int64_t seq, std::vector<int>* blamed = nullptr);

 private:
  struct Beat {
    bool present = false;
    int64_t beat = 0;
    int64_t seq = 0;
  };
  void loop();
  std::vector<Beat> sample();
  Beat sample_one(int rank);

  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int world_size_;
  std::chrono::milliseconds interval_;
  std::string store_address_;
  std::atomic<int64_t> seq_{0};
  std::mutex store_mutex_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Waits until every rank has set "<prefix><r>" in `store` or `timeout` passes; on timeout throws a
// runtime error naming the ranks that never arrived.
void wait_for_ranks(c10d::Store& store, const std::string& prefix, int world_size,
                    std::chrono::milliseconds timeout, const std::string& what);

}  // namespace lerobot
