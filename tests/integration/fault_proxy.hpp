#pragma once
// A TCP proxy on 127.0.0.1 for the registry suites' network faults: it
// relays every connection to the registry, and does one thing to the
// answers, as a bad network or a hostile registry would:
//   cut:     the first connection is cut (closed both ways) once `cut_after`
//            bytes of its answers have passed: a dropped link;
//   trickle: once a request on a connection holds `trickle_after` (a path
//            such as "/blobs/sha256:..."), every answer byte after it is
//            sent alone, `trickle_gap` apart: a registry that trickles a byte
//            every 0.4 s, which passes any stall check.
// No fake registry: the bytes are the real registry's, only their pace or
// the connection changes.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace orc::integration {

struct ProxyFault {
  std::uint64_t cut_after = 0;  // 0: no cut
  std::string trickle_after;    // empty: no trickle
  std::chrono::milliseconds trickle_gap{400};
};

class FaultProxy {
 public:
  FaultProxy(int upstream_port, ProxyFault fault);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return m_port; }
  int connections() const { return m_connections.load(); }
  bool did_cut() const { return m_cut.load(); }
  bool did_trickle() const { return m_trickled.load(); }

 private:
  void accept_loop();
  void relay(int client, bool cut);
  // Sends `size` bytes one at a time, trickle_gap apart; false once the
  // client has gone (or the proxy stops).
  bool trickle(int client, const char* data, std::size_t size);

  int m_upstream_port;
  ProxyFault m_fault;
  int m_listen = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_connections{0};
  std::atomic<bool> m_cut{false};
  std::atomic<bool> m_trickled{false};
  std::thread m_acceptor;
  std::vector<std::thread> m_relays;  // touched by the acceptor thread only
};

}  // namespace orc::integration
