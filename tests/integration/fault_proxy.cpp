#include "tests/integration/fault_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace orc::integration {

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

FaultProxy::FaultProxy(int upstream_port, ProxyFault fault)
    : m_upstream_port(upstream_port), m_fault(std::move(fault)) {
  m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(0);
  if (m_listen < 0 || ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(m_listen, 16) != 0)
    throw std::runtime_error("fault proxy: cannot listen on 127.0.0.1");
  socklen_t length = sizeof addr;
  ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &length);
  m_port = ntohs(addr.sin_port);
  m_acceptor = std::thread([this] { accept_loop(); });
}

FaultProxy::~FaultProxy() {
  m_stop = true;
  m_acceptor.join();
  for (auto& t : m_relays) t.join();
  ::close(m_listen);
}

void FaultProxy::accept_loop() {
  while (!m_stop) {
    pollfd p{m_listen, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int client = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const bool cut = m_connections.fetch_add(1) == 0 && m_fault.cut_after > 0;
    m_relays.emplace_back([this, client, cut] { relay(client, cut); });
  }
}

bool FaultProxy::trickle(int client, const char* data, std::size_t size) {
  m_trickled = true;
  for (std::size_t i = 0; i < size; ++i) {
    if (m_stop || !send_all(client, data + i, 1)) return false;
    // Wait the gap, unless the client closes meanwhile (it gave up).
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(m_fault.trickle_gap.count())) > 0) {
      char byte;
      if (::recv(client, &byte, 1, MSG_PEEK) <= 0) return false;
    }
  }
  return true;
}

void FaultProxy::relay(int client, bool cut) {
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(m_upstream_port);
  if (upstream < 0 || ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(client);
    if (upstream >= 0) ::close(upstream);
    return;
  }
  std::array<char, 64 * 1024> buffer{};
  std::uint64_t answered = 0;
  bool trickling = false;
  std::array<pollfd, 2> fds{pollfd{client, POLLIN, 0}, pollfd{upstream, POLLIN, 0}};
  while (!m_stop) {
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    if (fds[0].revents) {
      const ssize_t n = ::recv(client, buffer.data(), buffer.size(), 0);
      if (n <= 0 || !send_all(upstream, buffer.data(), static_cast<std::size_t>(n))) break;
      // A request's line arrives in its first read: curl writes a request's
      // head in one piece.
      if (!m_fault.trickle_after.empty() &&
          std::string_view(buffer.data(), static_cast<std::size_t>(n)).find(m_fault.trickle_after) !=
              std::string_view::npos)
        trickling = true;
    }
    if (fds[1].revents) {
      ssize_t n = ::recv(upstream, buffer.data(), buffer.size(), 0);
      if (n <= 0) break;
      if (cut && answered + static_cast<std::uint64_t>(n) >= m_fault.cut_after) {
        send_all(client, buffer.data(), m_fault.cut_after - answered);
        m_cut = true;
        break;
      }
      answered += static_cast<std::uint64_t>(n);
      if (trickling ? !trickle(client, buffer.data(), static_cast<std::size_t>(n))
                    : !send_all(client, buffer.data(), static_cast<std::size_t>(n)))
        break;
    }
  }
  ::close(client);
  ::close(upstream);
}

}  // namespace orc::integration
