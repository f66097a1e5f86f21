// PeerMonitor: store heartbeats and the diagnosis that names dead or lagging ranks.
#include "lerobot/distributed/peer_monitor.h"

#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"

namespace lerobot {
namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

PeerMonitor::PeerMonitor(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size,
                         std::chrono::milliseconds interval, std::string store_address)
    : store_(std::move(store)),
      rank_(rank),
      world_size_(world_size),
      interval_(interval),
      store_address_(std::move(store_address)) {
  thread_ = std::thread([this] { loop(); });
}

PeerMonitor::~PeerMonitor() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeerMonitor::loop() {
  int64_t beat = 0;
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_) {
    ++beat;
    lock.unlock();
    try {
      std::lock_guard<std::mutex> g(store_mutex_);
      store_->set("hb/" + std::to_string(rank_),
                  bytes(std::to_string(beat) + " " + std::to_string(seq_.load())));
    } catch (const std::exception&) {
      // The store host (rank 0) is gone; fail() reports it when a collective fails.
    }
    lock.lock();
    stop_cv_.wait_for(lock, interval_, [this] { return stop_; });
  }
}

PeerMonitor::Beat PeerMonitor::sample_one(int rank) {
  Beat b;
  std::lock_guard<std::mutex> g(store_mutex_);
  const std::string key = "hb/" + std::to_string(rank);
  if (!store_->check({key})) return b;
  auto v = store_->get(key);
  std::istringstream is(std::string(v.begin(), v.end()));
  b.present = static_cast<bool>(is >> b.beat >> b.seq);
  return b;
}

std::vector<PeerMonitor::Beat> PeerMonitor::sample() {
  std::vector<Beat> out(world_size_);
  for (int r = 0; r < world_size_; ++r) out[r] = sample_one(r);
  return out;
}

void PeerMonitor::wait_for_rank(int root, int64_t seq, const std::string& what, std::chrono::milliseconds stall,
                                std::chrono::milliseconds report_every) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last_change = start, next_report = start + report_every;
  int64_t last_beat = -1;
  while (true) {
    Beat b;
    try {
      b = sample_one(root);
    } catch (const std::exception& e) {
      fail("waiting for " + what, seq, e.what());
    }
    if (b.present && b.seq >= seq) return;
    const auto now = Clock::now();
    if (b.beat != last_beat) {
      last_beat = b.beat;
      last_change = now;
    } else if (now - last_change >= stall) {
      fail("waiting for " + what, seq,
           "rank " + std::to_string(root) + "'s heartbeat stopped while it was busy with " + what);
    }
    if (now >= next_report) {
      LOG_INFO << "rank " << rank_ << ": still waiting for rank " << root << " (" << what << ", "
               << std::chrono::duration_cast<std::chrono::seconds>(now - start).count()
               << " s so far; it is alive)";
      next_report += report_every;
    }
    std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(interval_, std::chrono::milliseconds(200)));
  }
}

std::string PeerMonitor::diagnose(int64_t seq, std::vector<int>* blamed) {
  std::vector<int> dead, missing, behind;
  std::ostringstream os;
  try {
    auto first = sample();
    auto wait = std::max<std::chrono::milliseconds>(interval_ * 3, std::chrono::milliseconds(1000));
    std::this_thread::sleep_for(wait);
    auto second = sample();
    std::ostringstream behind_detail;
    for (int r = 0; r < world_size_; ++r) {
      if (r == rank_) continue;
      if (!second[r].present) missing.push_back(r);
      else if (first[r].present && second[r].beat == first[r].beat) dead.push_back(r);
      else if (second[r].seq < seq) {
        behind.push_back(r);
        behind_detail << " rank " << r << " is at collective #" << second[r].seq << ";";
      }
    }
    if (!dead.empty())
      os << "rank(s) " << join_ranks(dead) << " stopped answering (no heartbeat for "
         << wait.count() / 1000.0 << " s: the process exited, crashed or is frozen). ";
    if (!missing.empty())
      os << "rank(s) " << join_ranks(missing) << " never published a heartbeat. ";
    if (!behind.empty())
      os << "rank(s) " << join_ranks(behind) << " are alive but did not reach this collective (#"
         << seq << "):" << behind_detail.str() << " ";
  } catch (const std::exception& e) {
    if (rank_ != 0) {
      dead.push_back(0);
      os << "rank(s) 0 stopped answering (it hosts the rendezvous store at " << store_address_
         << ", which is unreachable: " << first_line(e.what()) << "). ";
    }
  }
  if (blamed) {
    *blamed = dead;
    blamed->insert(blamed->end(), missing.begin(), missing.end());
    blamed->insert(blamed->end(), behind.begin(), behind.end());
  }
  return os.str();
}

void PeerMonitor::fail(const std::string& op, int64_t seq, const std::string& cause) {
  std::string who = diagnose(seq);
  if (who.empty())
    who = "every other rank is alive and reached this collective, so the backend itself failed "
          "(see below). ";
  throw_runtime(op + " (collective #" + std::to_string(seq) + ") failed on rank " +
                    std::to_string(rank_) + ": " + who + "Backend said: " + first_line(cause),
                "distributed " + op,
                "check the log of the rank(s) named for their own error; if they are only slow, "
                "raise the distributed timeout");
}

void wait_for_ranks(c10d::Store& store, const std::string& prefix, int world_size,
                    std::chrono::milliseconds timeout, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> keys;
  for (int r = 0; r < world_size; ++r) keys.push_back(prefix + std::to_string(r));
  while (true) {
    std::vector<int> missing;
    for (int r = 0; r < world_size; ++r)
      if (!store.check({keys[r]})) missing.push_back(r);
    if (missing.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline)
      throw_runtime("rank(s) " + join_ranks(missing) + " did not arrive at " + what + " within " +
                        std::to_string(timeout.count() / 1000.0) + " s",
                    "distributed rendezvous",
                    "check that every rank was started with the same MASTER_ADDR/MASTER_PORT and "
                    "WORLD_SIZE, and look at the missing ranks' logs");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace lerobot
