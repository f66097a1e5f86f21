// The TCPStore rendezvous shared by the c10d process groups (Gloo and NCCL): connects to (or
// hosts) the store, checks every rank in and starts the heartbeat. Needs no gloo headers.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/distributed/c10d_group.h"

namespace lerobot {
namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

c10::intrusive_ptr<c10d::TCPStore> connect_store(const LaunchEnv& env, bool server,
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
  // The heartbeat thread gets a connection of its own (to the port the server took when it was
  // asked for any free one: a one-process NCCL group hosts its own store on port 0).
  LaunchEnv hb_env = env;
  if (server && hb_env.master_port == 0) hb_env.master_port = tcp->getPort();
  auto hb = c10::make_intrusive<c10d::PrefixStore>(ns, connect_store(hb_env, false, options.timeout));
  Rendezvous rv;
  rv.monitor = std::make_shared<PeerMonitor>(
      hb, env.rank, env.world_size, options.heartbeat,
      hb_env.master_addr + ":" + std::to_string(hb_env.master_port));
  store->set("checkin/" + std::to_string(env.rank), std::vector<uint8_t>{'1'});
  wait_for_ranks(*store, "checkin/", env.world_size, options.timeout, "the rendezvous");
  rv.store = c10::make_intrusive<c10d::PrefixStore>(backend + "/", store);
  return rv;
}

}  // namespace lerobot
