// The TCPStore rendezvous shared by the c10d groups, and the Gloo process group (CPU tensors).
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/distributed/c10d_group.h"

namespace lerobot {
namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

c10::intrusive_ptr<c10d::Store> connect_store(const LaunchEnv& env, bool server,
                                              std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env.master_port);
  so.isServer = server;
  so.waitWorkers = false;
  so.timeout = timeout;
  // Like torch.distributed: the libuv store backend unless USE_LIBUV=0. A LibTorch built without
  // libuv refuses it, so fall back to the classic backend there unless USE_LIBUV=1 asked for it.
  const char* use_libuv = std::getenv("USE_LIBUV");
  const bool want_libuv = !use_libuv || std::string(use_libuv) != "0";
  const bool libuv = compat::set_tcpstore_libuv(so, want_libuv) && want_libuv;
  std::string address = env.master_addr + ":" + std::to_string(env.master_port);
  try {
    try {
      return c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    } catch (const std::exception& e) {
      const bool no_libuv_here = std::string(e.what()).find("without libuv") != std::string::npos;
      if (!libuv || use_libuv || !no_libuv_here) throw;
      LOG_DEBUG << "this LibTorch has no libuv TCPStore backend; using the classic one";
      compat::set_tcpstore_libuv(so, false);
      return c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    }
  } catch (const std::exception& e) {
    if (server)
      throw_runtime("rank 0 could not host the rendezvous store on " + address + ": " +
                        first_line(e.what()),
                    "MASTER_PORT", "choose a free port (--main_process_port / MASTER_PORT)");
    throw_runtime("rank " + std::to_string(env.rank) + " could not reach the rendezvous store at " +
                      address + " (hosted by " +
                      (env.use_agent_store ? std::string("the torchrun agent") : "rank 0") +
                      ") within " + std::to_string(timeout.count() / 1000.0) +
                      " s: " + first_line(e.what()),
                  "MASTER_ADDR/MASTER_PORT",
                  "check that rank 0 is running and that MASTER_ADDR/MASTER_PORT are the same on "
                  "every rank and reachable");
  }
}

// The IPv4 address this host sends from to reach host:port (the route's source address; a UDP
// connect sends nothing), or "" when unknown.
std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) return "";
  std::string out;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    char buf[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, buf, sizeof(buf)))
      out = buf;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return out;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

Rendezvous rendezvous(const LaunchEnv& env, const ProcessGroupOptions& options,
                      const std::string& backend) {
  if (env.master_addr.empty())
    throw_usage("the address of rank 0 is unknown for this " + env.launcher + " launch",
                "MASTER_ADDR", "export MASTER_ADDR=<host of rank 0> (and MASTER_PORT) on every rank");
  bool server = env.rank == 0 && !env.use_agent_store;
  auto tcp = connect_store(env, server, options.timeout);
  const std::string ns = "lerobot/" + std::to_string(env.restart_count) + "/";
  auto store = c10::make_intrusive<c10d::PrefixStore>(ns, tcp);
  // The heartbeat thread gets a connection of its own.
  auto hb = c10::make_intrusive<c10d::PrefixStore>(ns, connect_store(env, false, options.timeout));
  Rendezvous rv;
  rv.monitor = std::make_shared<PeerMonitor>(
      hb, env.rank, env.world_size, options.heartbeat,
      env.master_addr + ":" + std::to_string(env.master_port));
  store->set("checkin/" + std::to_string(env.rank), std::vector<uint8_t>{'1'});
  wait_for_ranks(*store, "checkin/", env.world_size, options.timeout, "the rendezvous");
  rv.store = c10::make_intrusive<c10d::PrefixStore>(backend + "/", store);
  return rv;
}

std::shared_ptr<ProcessGroup> make_gloo_group(const LaunchEnv& env,
                                              const ProcessGroupOptions& options) {
  Rendezvous rv = rendezvous(env, options, "gloo");
  auto opts = c10d::ProcessGroupGloo::Options::create(options.timeout);
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (ifname && *ifname) {
    std::string first(ifname);
    opts->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForInterface(first.substr(0, first.find(','))));
  } else if (is_loopback(env.master_addr)) {
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else if (const std::string local = local_address_towards(env.master_addr, env.master_port); !local.empty()) {
    // Gloo's default device binds to the address the hostname resolves to, which is often a
    // loopback one (Debian's 127.0.1.1) or absent from the interface that reaches the other
    // machines; the peers then dial their own loopback. Bind where the route to rank 0 starts.
    LOG_DEBUG << "gloo binds to " << local << " (the route to " << env.master_addr << ")";
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(local));
  } else {
    opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  opts->threads = 2;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  try {
    pg = c10::make_intrusive<c10d::ProcessGroupGloo>(rv.store, env.rank, env.world_size, opts);
  } catch (const std::exception& e) {
    rv.monitor->fail("gloo connect", 0, e.what());
  }
  auto ctx = std::make_shared<C10dContext>();
  ctx->monitor = rv.monitor;
  ctx->timeout = options.timeout;
  auto wait_timeout = options.timeout + std::chrono::seconds(2);
  ctx->wait = [wait_timeout](const c10::intrusive_ptr<c10d::Work>& w) {
    if (!w->wait(wait_timeout)) throw std::runtime_error("timed out waiting for the collective");
  };
  LOG_DEBUG << "gloo process group ready: " << describe(env);
  return std::make_shared<C10dGroup<c10d::ProcessGroupGloo>>(pg, ctx, env.rank, env.world_size,
                                                             "gloo", torch::Device(torch::kCPU));
}

}  // namespace lerobot
