// Two "machines": network namespaces joined by a veth pair (10.x.y.1 and 10.x.y.2), one
// `lerobot-cpp train --num_machines=2 --num_processes=1` in each, talking Gloo over the veth. The
// parameter update must equal one process at twice the batch. Needs root (CAP_NET_ADMIN): without
// it the test fails and says so.
#include <unistd.h>

#include "train_dist_util.h"

using namespace lerobot_test;

namespace {

// Two namespaces and a veth pair, removed on destruction (and before creation, in case a crashed
// run left them behind). Names carry the pid, so concurrent runs do not collide.
class TwoMachines {
 public:
  TwoMachines() {
    const int pid = static_cast<int>(getpid());
    ns_[0] = "lrb" + std::to_string(pid) + "m0";
    ns_[1] = "lrb" + std::to_string(pid) + "m1";
    const std::string veth0 = "lrv" + std::to_string(pid % 1000000) + "a";  // <= 15 chars
    const std::string veth1 = "lrv" + std::to_string(pid % 1000000) + "b";
    const std::string net = "10." + std::to_string(100 + pid % 150) + "." + std::to_string((pid / 150) % 250) + ".";
    ip_[0] = net + "1";
    ip_[1] = net + "2";
    remove();
    const std::string script =
        "set -e; ip netns add " + ns_[0] + "; ip netns add " + ns_[1] +
        "; ip link add " + veth0 + " type veth peer name " + veth1 +
        "; ip link set " + veth0 + " netns " + ns_[0] + "; ip link set " + veth1 + " netns " + ns_[1] +
        "; ip -n " + ns_[0] + " addr add " + ip_[0] + "/24 dev " + veth0 +
        "; ip -n " + ns_[1] + " addr add " + ip_[1] + "/24 dev " + veth1 +
        "; for n in " + ns_[0] + " " + ns_[1] + "; do ip -n $n link set lo up; done"
        "; ip -n " + ns_[0] + " link set " + veth0 + " up; ip -n " + ns_[1] + " link set " + veth1 + " up";
    auto r = run_command(script);
    ok_ = r.code == 0;
    error_ = r.out;
  }
  ~TwoMachines() { remove(); }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  const std::string& ns(int m) const { return ns_[m]; }
  const std::string& ip(int m) const { return ip_[m]; }

 private:
  void remove() {
    for (const auto& n : ns_) run_command("ip netns del " + n + " >/dev/null 2>&1 || true");
  }
  std::string ns_[2], ip_[2], error_;
  bool ok_ = false;
};

}  // namespace

TEST(TrainTwoMachines, NetworkNamespacesMatchOneBigBatch) {
  // A machine that cannot make network namespaces at all (no iproute2, not root: a rented GPU box)
  // skips, saying so; where it can (root with `ip`, as CI and scripts/setup.sh give), any failure to
  // build them fails the test.
  if (run_command("command -v ip >/dev/null").code != 0 || ::geteuid() != 0)
    GTEST_SKIP() << "needs root and the `ip` tool (iproute2) to make two network namespaces; this machine has "
                 << (::geteuid() != 0 ? "no root" : "no `ip`");
  TwoMachines net;
  ASSERT_TRUE(net.ok()) << "cannot build two network namespaces joined by a veth pair (this test needs root, "
                           "or CAP_NET_ADMIN and CAP_SYS_ADMIN, and the `ip` tool from iproute2); "
                           "ip said:\n" << net.error();
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const Params init = initial_params(dir.path, ds);
  ASSERT_FALSE(init.empty());
  const std::string a_dir = dir.path + "/a";
  auto a = run_command("timeout -k 5 180 " + cli() + " train" + equivalence_flags(ds) +
                       " --batch_size=8 --steps=20 --output_dir=" + a_dir);
  ASSERT_EQ(a.code, 0) << a.out;

  const std::string out = dir.path + "/m";
  auto machine = [&](int m) {
    return "timeout -k 5 120 ip netns exec " + net.ns(m) + " " + cli() + " train" + equivalence_flags(ds) +
           " --batch_size=4 --steps=20 --num_machines=2 --num_processes=1 --machine_rank=" + std::to_string(m) +
           " --main_process_ip=" + net.ip(0) + " --main_process_port=29500 --distributed.timeout_s=60"
           " --output_dir=" + out + " > " + dir.path + "/m" + std::to_string(m) + ".txt 2>&1";
  };
  auto r = run_command("(" + machine(1) + ") & m1=$!; " + machine(0) + "; c0=$?; wait $m1; c1=$?; echo \"exit $c0 $c1\"");
  const std::string log0 = read_text(dir.path + "/m0.txt"), log1 = read_text(dir.path + "/m1.txt");
  ASSERT_NE(r.out.find("exit 0 0"), std::string::npos) << r.out << "\nmachine 0:\n" << log0 << "\nmachine 1:\n" << log1;
  // Machine 0 hosts rank 0, which reached the store on its veth address.
  EXPECT_NE(log0.find("rank 0/2"), std::string::npos) << log0;
  EXPECT_NE(log1.find("rank 1/2"), std::string::npos) << log1;
  EXPECT_NE(log1.find(net.ip(0)), std::string::npos) << log1;

  const double diff = relative_update_diff(init, load_params(final_model(a_dir)), load_params(final_model(out)));
  std::printf("relative update difference, 2 machines vs 1 process: %.3g\n", diff);
  EXPECT_LE(diff, 1e-3) << "2 machines x batch 4 differ from 1 process x batch 8";
}
