// The Gloo process group (CPU tensors). Compiled only where gloo headers were found (see
// cmake/Dependencies.cmake); the official LibTorch builds ship none.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "lerobot/common/logging.h"
#include "lerobot/distributed/c10d_group.h"

namespace lerobot {
namespace {

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
  auto ctx = std::make_shared<C10dContext>();
  ctx->monitor = rv.monitor;
  ctx->timeout = options.timeout;
  auto wait_timeout = options.timeout + std::chrono::seconds(2);
  ctx->wait = [wait_timeout](const c10::intrusive_ptr<c10d::Work>& w) {
    if (!w->wait(wait_timeout)) throw std::runtime_error("timed out waiting for the collective");
  };
  LOG_DEBUG << "gloo process group ready: " << describe(env);
  auto make = [opts](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size) {
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
  };
  return std::make_shared<C10dGroup<c10d::ProcessGroupGloo>>(rv.store, make, ctx, env.rank, env.world_size, "gloo",
                                                             torch::Device(torch::kCPU));
}

}  // namespace lerobot
