// dist_test_helper: one rank of a multi-process test (started by launch_local or torchrun).
// Usage: dist_test_helper <mode> <outdir> [arg]; results go to <outdir>/*_rank<R>.* for the test.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/distributed/grad_reducer.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/distributed/launcher.h"
#include "lerobot/distributed/process_group.h"
#include "reducer_model.h"
#include "sharded_helper.h"

using namespace lerobot;
using namespace lerobot_test;

namespace {

std::string g_out;

std::string path(const std::string& name, int rank) {
  return g_out + "/" + name + "_rank" + std::to_string(rank);
}

void put(std::ofstream& f, const std::string& key, const torch::Tensor& t) {
  auto c = t.to(torch::kDouble).contiguous().reshape({-1});
  f << std::setprecision(17) << key;
  for (int64_t i = 0; i < c.numel(); ++i) f << " " << c[i].item<double>();
  f << "\n";
}

int collectives(ProcessGroup& pg) {
  const int r = pg.rank(), w = pg.world_size();
  std::ofstream f(path("collectives", r) + ".txt");
  auto base = torch::tensor({1.0f, 2.0f}) * (r + 1);
  auto sum = base.clone();
  pg.all_reduce(sum, ReduceOp::kSum);
  put(f, "sum", sum);
  auto avg = base.clone();
  pg.all_reduce(avg, ReduceOp::kAvg);
  put(f, "avg", avg);
  auto mx = torch::tensor({static_cast<float>(r * 10), static_cast<float>(-r)});
  pg.all_reduce(mx, ReduceOp::kMax);
  put(f, "max", mx);
  auto a1 = torch::full({3}, static_cast<double>(r), torch::kDouble);
  auto a2 = torch::full({1000}, 1.0f);
  auto w1 = pg.all_reduce_async(a1, ReduceOp::kSum);
  auto w2 = pg.all_reduce_async(a2, ReduceOp::kSum);
  w2->wait();
  w1->wait();
  put(f, "async1", a1);
  put(f, "async2_sum", a2.sum());
  int root = w > 1 ? 1 : 0;
  auto b = torch::arange(4, torch::kFloat) + 100.0f * r;
  pg.broadcast(b, root);
  put(f, "bcast", b);
  auto g = pg.all_gather(1.5 * r);
  put(f, "gather", torch::tensor(g, torch::kDouble));
  pg.barrier();
  put(f, "scalar", torch::tensor({pg.all_reduce(static_cast<double>(r), ReduceOp::kSum)}));
  f << "done\n";
  std::cout << "collectives ok on rank " << r << std::endl;
  return 0;
}

void save_grads(TinyNet& net, const std::string& name, int rank) {
  std::ofstream f(path(name, rank) + ".txt");
  for (auto& p : net->named_parameters()) {
    if (p.value().grad().defined()) put(f, p.key(), p.value().grad());
    else f << p.key() << " undefined\n";
  }
}

int reducer(std::shared_ptr<ProcessGroup> pg, const std::string& variant) {
  const int r = pg->rank(), w = pg->world_size();
  const int per_rank = 6;
  auto net = make_net(100 + r);  // differs per rank until broadcast_parameters
  broadcast_parameters(*net, *pg);
  GradReducerOptions opts;
  opts.first_bucket_cap_bytes = 256;
  opts.bucket_cap_bytes = 1024;
  opts.bf16_compress = variant == "bf16";
  // "rebuild": hand the parameters over in an order unlike the one backward produces them in
  // (module order reversed), so that only a rebuild from the observed order packs them well.
  std::vector<torch::Tensor> order = net->parameters();
  if (variant == "rebuild") std::reverse(order.begin(), order.end());
  GradReducer red(order, pg, opts);
  const int micro_steps = variant == "accum" ? 2 : 1;
  if (variant == "rebuild") {
    // A first synchronised step re-packs the buckets in the order gradients arrived; the second
    // step (same batch, gradients zeroed) must still give the global-batch gradients.
    auto batch = global_batch(0, w, per_rank);
    net->loss(batch.first.narrow(0, r * per_rank, per_rank), batch.second.narrow(0, r * per_rank, per_rank),
              r == 1).backward();
    std::ofstream f(path("layout", r) + ".txt");
    for (const auto& b : red.buckets()) f << b.front() << " ";
    f << "(first parameter of each bucket before the rebuild)\n";
    red.synchronize();
    for (auto& p : net->parameters()) p.mutable_grad() = torch::Tensor();
    for (const auto& b : red.buckets()) {
      for (size_t i : b) f << i << " ";
      f << "\n";
    }
  }
  for (int m = 0; m < micro_steps; ++m) {
    auto batch = global_batch(m, w, per_rank);
    auto x = batch.first.narrow(0, r * per_rank, per_rank);
    auto y = batch.second.narrow(0, r * per_rank, per_rank);
    red.set_sync(m == micro_steps - 1);
    net->loss(x, y, r == 1).backward();
    bool reduced = red.synchronize();
    std::ofstream f(path("steps", r) + ".txt", std::ios::app);
    f << "micro " << m << " reduced " << reduced << " buckets " << red.timings().buckets << "\n";
    save_grads(net, "grads_m" + std::to_string(m), r);
  }
  {
    std::ofstream f(path("steps", r) + ".txt", std::ios::app);
    f << "nbuckets " << red.buckets().size() << "\n";
  }
  // BatchNorm buffers: update them with a rank-specific batch, then take rank 0's.
  net->train();
  {
    torch::NoGradGuard ng;
    net->loss(torch::randn({4, 8}) + r, torch::zeros({4, 4}), false);
  }
  std::ofstream f(path("buffers", r) + ".txt");
  put(f, "before", net->bn->running_mean);
  broadcast_buffers(*net, *pg);
  put(f, "after", net->bn->running_mean);
  put(f, "params_fc1", net->fc1->weight);
  return 0;
}

int misbehave(ProcessGroup& pg, const std::string& how) {
  const int r = pg.rank();
  int culprit = how == "exit0" ? 0 : 1;
  // One collective both ranks finish first: the group is fully connected before the culprit leaves
  // (otherwise, on a loaded machine, the store host can exit while the other rank still connects).
  auto warm = torch::ones({1});
  pg.all_reduce(warm, ReduceOp::kSum);
  if (r == culprit) {
    if (how == "sleep") std::this_thread::sleep_for(std::chrono::seconds(60));
    std::_Exit(0);  // "exit", "exit0": leave without a word
  }
  auto t0 = std::chrono::steady_clock::now();
  try {
    auto t = torch::ones({4});
    pg.all_reduce(t, ReduceOp::kSum);
    std::ofstream(path("misbehave", r) + ".txt") << "no error\n";
    return 0;
  } catch (const Error& e) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ofstream(path("misbehave", r) + ".txt") << s << "\n" << e.what() << "\n";
    return 5;
  }
}

// Work only rank 0 does, longer than the 2 s collective timeout, then wait_for_rank0: "slow" (rank 0
// works 6 s, then joins), "dies" (rank 0 leaves without a word after 1 s). Each rank writes how long it
// waited and the error it got.
int rank0_phase(ProcessGroup& pg, const std::string& how) {
  const int r = pg.rank();
  auto warm = torch::ones({1});
  pg.all_reduce(warm, ReduceOp::kSum);
  if (r == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(how == "dies" ? 1 : 6));
    if (how == "dies") std::_Exit(0);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  try {
    pg.wait_for_rank0("the test's rank-0 work");
    auto t = torch::ones({1});
    pg.all_reduce(t, ReduceOp::kSum);  // the group still works afterwards
    std::ofstream(path("rank0_phase", r) + ".txt") << seconds() << "\nok " << t.item<float>() << "\n";
    return 0;
  } catch (const Error& e) {
    std::ofstream(path("rank0_phase", r) + ".txt") << seconds() << "\n" << e.what() << "\n";
    return 5;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: dist_test_helper <mode> <outdir> [arg]\n";
    return 2;
  }
  std::string mode = argv[1];
  g_out = argv[2];
  std::string arg = argc > 3 ? argv[3] : "";
  try {
    if (mode == "echo") {
      auto env = detect_launch_env();
      std::cout << "hello from rank " << env.rank << " of " << env.world_size << std::endl;
      std::cerr << "stderr line " << env.local_rank << "\nno newline at end";
      return 0;
    }
    if (mode == "launch") {  // launch_local of this executable, children run "echo"
      LocalLaunchOptions o;
      o.num_processes = std::stoi(arg);
      auto res = launch_local({argv[0], "echo", g_out}, o);
      std::cout << "launch result " << res.exit_code << std::endl;
      return res.exit_code;
    }
    if (mode == "fail") {  // rank 1 exits with 3; rank 0 would sleep for a minute
      auto env = detect_launch_env();
      if (env.rank == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return 3;
      }
      std::ofstream(path("pid", env.rank) + ".txt") << getpid() << "\n";
      std::this_thread::sleep_for(std::chrono::seconds(60));
      return 0;
    }
    auto env = detect_launch_env();
    double timeout = mode == "misbehave" ? 5.0 : mode == "rank0_phase" ? 2.0 : 60.0;
    auto pg = make_process_group(env, process_group_options("gloo", timeout));
    {
      std::ofstream f(path("env", env.rank) + ".txt");
      const char* raw = std::getenv("TORCHELASTIC_USE_AGENT_STORE");  // as the launcher set it
      f << env.launcher << " " << env.world_size << " " << env.local_rank << " "
        << env.use_agent_store << " " << (raw ? raw : "unset") << "\n";
    }
    if (mode == "collectives") return collectives(*pg);
    if (mode == "reducer") return reducer(pg, arg);
    if (mode == "sharded") return sharded(pg, g_out, arg);
    if (mode == "misbehave") return misbehave(*pg, arg);
    if (mode == "rank0_phase") return rank0_phase(*pg, arg);
    std::cerr << "unknown mode " << mode << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 1;
  }
}
