#include "orchestrator/registry/digest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <span>
#include <thread>
#include <vector>

#include "orchestrator/inspect/sha256.hpp"

namespace orc::registry {

// The hashing itself is inspect's (OpenSSL EVP behind inspect::Sha256); this
// class adds the "sha256:" form the distribution spec writes and reset().
struct Sha256::Context {
  inspect::Sha256 hasher;
};

Sha256::Sha256() : m_context(std::make_unique<Context>()) {}

Sha256::~Sha256() = default;

Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&& other) noexcept {
  std::swap(m_context, other.m_context);
  return *this;
}

void Sha256::reset() { m_context->hasher = inspect::Sha256(); }

void Sha256::update(std::string_view bytes) {
  m_context->hasher.update(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

std::string Sha256::digest() { return "sha256:" + m_context->hasher.hex_digest(); }

std::string sha256_digest(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.digest();
}

namespace {

template <typename Hasher>
std::expected<std::uint64_t, Error> hash_file_into(const std::filesystem::path& path, Hasher& hasher) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::unexpected(Error{ErrorKind::io, "cannot read " + path.string() + ": " + std::strerror(errno)});
  std::vector<char> buffer(1 << 20);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return std::unexpected(Error{ErrorKind::io, "cannot read " + path.string() + ": " + std::strerror(saved)});
    }
    if (n == 0) break;
    hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    total += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return total;
}

}  // namespace

std::expected<std::uint64_t, Error> hash_file(const std::filesystem::path& path, Sha256& hasher) {
  return hash_file_into(path, hasher);
}

std::expected<std::uint64_t, Error> hash_file(const std::filesystem::path& path, BackgroundSha256& hasher) {
  return hash_file_into(path, hasher);
}

// The producer fills `filling`; full blocks queue for the thread, which
// hands them back through `spare` so steady state allocates nothing.
struct BackgroundSha256::State {
  static constexpr std::size_t k_block = 4 << 20;
  static constexpr std::size_t k_max_queued = 4;

  Sha256 hasher;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<char>> queue;
  std::vector<std::vector<char>> spare;
  std::vector<char> filling;
  bool busy = false;  // the thread is hashing a block outside the lock
  bool stop = false;
  std::thread thread;

  void run() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty()) return;
      std::vector<char> block = std::move(queue.front());
      queue.pop_front();
      busy = true;
      lock.unlock();
      hasher.update(std::string_view(block.data(), block.size()));
      block.clear();
      lock.lock();
      busy = false;
      spare.push_back(std::move(block));
      changed.notify_all();
    }
  }

  void hand_over(std::unique_lock<std::mutex>& lock) {
    changed.wait(lock, [&] { return queue.size() < k_max_queued; });
    queue.push_back(std::move(filling));
    filling = {};
    if (!spare.empty()) {
      filling = std::move(spare.back());
      spare.pop_back();
    }
    changed.notify_all();
  }

  void drain(std::unique_lock<std::mutex>& lock) {
    if (!filling.empty()) hand_over(lock);
    changed.wait(lock, [&] { return queue.empty() && !busy; });
  }
};

BackgroundSha256::BackgroundSha256() : m_state(std::make_unique<State>()) {
  m_state->filling.reserve(State::k_block);
  m_state->thread = std::thread([state = m_state.get()] { state->run(); });
}

BackgroundSha256::~BackgroundSha256() {
  {
    std::lock_guard lock(m_state->mutex);
    m_state->stop = true;
    m_state->queue.clear();
  }
  m_state->changed.notify_all();
  m_state->thread.join();
}

void BackgroundSha256::update(std::string_view bytes) {
  State& s = *m_state;
  while (!bytes.empty()) {
    if (s.filling.capacity() < State::k_block) s.filling.reserve(State::k_block);
    const std::size_t n = std::min(bytes.size(), State::k_block - s.filling.size());
    s.filling.insert(s.filling.end(), bytes.data(), bytes.data() + n);
    bytes.remove_prefix(n);
    if (s.filling.size() == State::k_block) {
      std::unique_lock lock(s.mutex);
      s.hand_over(lock);
    }
  }
}

std::string BackgroundSha256::digest() {
  std::unique_lock lock(m_state->mutex);
  m_state->drain(lock);
  return m_state->hasher.digest();
}

void BackgroundSha256::reset() {
  std::unique_lock lock(m_state->mutex);
  m_state->filling.clear();
  m_state->drain(lock);
  m_state->hasher.reset();
}

bool is_sha256_digest(std::string_view digest) {
  if (!digest.starts_with("sha256:") || digest.size() != 7 + 64) return false;
  for (const char c : digest.substr(7))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string_view digest_hex(std::string_view digest) {
  const auto colon = digest.find(':');
  return colon == std::string_view::npos ? digest : digest.substr(colon + 1);
}

}  // namespace orc::registry
