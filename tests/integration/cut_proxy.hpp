#pragma once
// A TCP proxy on 127.0.0.1 for the registry suite's broken-transfer case: it
// relays every connection to the registry, except that the first one is cut
// (closed both ways) once `cut_after` bytes of the answer have passed, as a
// dropped network link would. No fake registry: the bytes are the real
// registry's, only the connection breaks.
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace orc::integration {

class CutProxy {
 public:
  CutProxy(int upstream_port, std::uint64_t cut_after);
  ~CutProxy();
  CutProxy(const CutProxy&) = delete;
  CutProxy& operator=(const CutProxy&) = delete;

  int port() const { return m_port; }
  int connections() const { return m_connections.load(); }
  bool did_cut() const { return m_cut.load(); }

 private:
  void accept_loop();
  void relay(int client, bool cut);

  int m_upstream_port;
  std::uint64_t m_cut_after;
  int m_listen = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_connections{0};
  std::atomic<bool> m_cut{false};
  std::thread m_acceptor;
  std::vector<std::thread> m_relays;  // touched by the acceptor thread only
};

}  // namespace orc::integration
