// bench_allreduce_overlap: samples/s of an MLP training step with 1 and 2 CPU processes (Gloo),
// and the share of all-reduce time hidden behind backward by GradReducer's bucket hooks.
// The default MLP (256-2048x12-10, 50 M parameters, 201 MB of float32 gradients) is the size of
// LeRobot's default ACT (52 M parameters), so DDP's 25 MB buckets split it as they would ACT.
// Usage: bench_allreduce_overlap [--steps=N] [--batch=B] [--width=W] [--layers=L] [--bucket_mbs=25,4]
//        [--rebuild=0|1] (re-pack buckets in the observed gradient order after step 1; default 1)
//        [--threads=T] (compute threads per process; 1 keeps per-process work equal in both runs)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "lerobot/distributed/grad_reducer.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/distributed/launcher.h"
#include "lerobot/distributed/process_group.h"

using namespace lerobot;

namespace {

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> f{{"steps", "20"}, {"batch", "64"}, {"width", "2048"},
                                       {"layers", "12"}, {"bucket_mb", "25"}, {"threads", "1"},
                                       {"rebuild", "1"}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) f[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  return f;
}

// One rank: trains and, on rank 0, writes "samples_per_s allreduce_ms overlap_share wait_ms buckets".
int worker(const std::map<std::string, std::string>& f, const std::string& out) {
  auto env = detect_launch_env();
  auto pg = make_process_group(env, process_group_options("gloo", 120));
  const int steps = std::stoi(f.at("steps")), batch = std::stoi(f.at("batch"));
  const int width = std::stoi(f.at("width")), layers = std::stoi(f.at("layers"));
  torch::set_num_threads(std::stoi(f.at("threads")));
  torch::manual_seed(0);
  torch::nn::Sequential net;
  net->push_back(torch::nn::Linear(256, width));
  for (int i = 0; i < layers; ++i) {
    net->push_back(torch::nn::ReLU());
    net->push_back(torch::nn::Linear(width, width));
  }
  net->push_back(torch::nn::ReLU());
  net->push_back(torch::nn::Linear(width, 10));
  broadcast_parameters(*net, *pg);
  GradReducerOptions ro;
  ro.bucket_cap_bytes = static_cast<int64_t>(std::stod(f.at("bucket_mb")) * 1024 * 1024);
  ro.rebuild_buckets = f.at("rebuild") != "0";
  GradReducer reducer(*net, pg, ro);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01));
  auto x = torch::randn({batch, 256});
  auto y = torch::randint(0, 10, {batch});
  auto step = [&] {
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    reducer.synchronize();
    opt.step();
  };
  for (int i = 0; i < 3; ++i) step();
  reducer.reset_timings();
  pg->barrier();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  pg->barrier();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& t = reducer.timings();
  if (env.rank == 0) {
    std::ofstream o(out);
    o << batch * env.world_size * steps / s << " " << 1000 * t.allreduce_s / steps << " "
      << t.overlap_share() << " " << 1000 * t.wait_s / steps << " " << reducer.buckets().size()
      << "\n";
  }
  return 0;
}

struct Figures {
  double samples_per_s = 0, allreduce_ms = 0, overlap = 0, wait_ms = 0;
  int buckets = 0;
};

Figures run(int n, char** argv, int argc, const std::string& out, const std::string& bucket_mb) {
  std::vector<std::string> args{argv[0]};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back("--worker=" + out);
  args.push_back("--bucket_mb=" + bucket_mb);  // the last occurrence wins in parse_flags
  LocalLaunchOptions o;
  o.num_processes = n;
  o.extra_env["OMP_NUM_THREADS"] = parse_flags(argc, argv)["threads"];
  auto res = launch_local(args, o);
  if (res.exit_code != 0) {
    std::cerr << "run with " << n << " processes failed: " << res.message << "\n";
    std::exit(1);
  }
  Figures fg;
  std::ifstream in(out);
  in >> fg.samples_per_s >> fg.allreduce_ms >> fg.overlap >> fg.wait_ms >> fg.buckets;
  std::remove(out.c_str());
  return fg;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("usage: bench_allreduce_overlap [--steps=20] [--batch=64] [--width=2048] [--layers=12] "
                  "[--bucket_mbs=25,4] [--rebuild=0|1] [--threads=1]\n");
      return 0;
    }
  auto f = parse_flags(argc, argv);
  if (f.count("worker")) return worker(f, f["worker"]);
  if (!f.count("bucket_mbs")) f["bucket_mbs"] = "25,4";  // DDP's default, and a small one
  char tmpl[] = "/tmp/lerobot_bench_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const double width = std::stod(f["width"]), layers = std::stod(f["layers"]);
  const double params = 256 * width + width + layers * (width * width + width) + width * 10 + 10;
  std::printf("allreduce_overlap: MLP 256-%sx%s-10 (%.1f M parameters, %.0f MB of gradients), batch %s per process, %s steps, "
              "%s compute thread(s)/process, Gloo on 127.0.0.1, %u hardware threads\n",
              f["width"].c_str(), f["layers"].c_str(), params / 1e6, params * 4 / (1024 * 1024), f["batch"].c_str(), f["steps"].c_str(),
              f["threads"].c_str(), std::thread::hardware_concurrency());
  Figures one = run(1, argv, argc, dir + "/one.txt", "25");
  std::printf("  1 process : %8.1f samples/s\n", one.samples_per_s);
  std::stringstream list(f["bucket_mbs"]);
  std::string mb;
  while (std::getline(list, mb, ',')) {
    Figures two = run(2, argv, argc, dir + "/two.txt", mb);
    std::printf("  2 processes, buckets of %s MB (first 1 MB): %8.1f samples/s (global), "
                "%.2fx of 1 process; %d buckets, all-reduce %.2f ms/step, %.0f%% of it overlapped "
                "with backward, exposed wait %.2f ms/step\n",
                mb.c_str(), two.samples_per_s, two.samples_per_s / one.samples_per_s, two.buckets,
                two.allreduce_ms, 100 * two.overlap, two.wait_ms);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);  // the ranks' store files too
  return 0;
}
