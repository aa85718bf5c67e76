#include "orchestrator/digest/sha256.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::digest {

namespace {

// OpenSSL failing to hash is a broken installation, not bad input.
[[noreturn]] void openssl_failed(const char* what) {
  throw util::Failure(util::ExitCode::outside_failure, std::string("OpenSSL SHA-256 failed in ") + what);
}

struct CtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// EVP_DigestUpdate takes size_t, but chunking keeps each call bounded and
// makes the loop identical on 32-bit hosts.
constexpr std::size_t k_chunk = std::size_t{1} << 30;

}  // namespace

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx{EVP_MD_CTX_new()};
  bool started = false;

  void start() {
    if (!ctx) openssl_failed("EVP_MD_CTX_new");
    if (EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) openssl_failed("EVP_DigestInit_ex");
    started = true;
  }
};

Sha256::Sha256() : m_context(std::make_unique<Context>()) { m_context->start(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(Bytes data) {
  if (!m_context->started) m_context->start();
  while (!data.empty()) {
    const std::size_t n = std::min(data.size(), k_chunk);
    if (EVP_DigestUpdate(m_context->ctx.get(), data.data(), n) != 1) openssl_failed("EVP_DigestUpdate");
    data = data.subspan(n);
  }
}

Digest Sha256::digest() {
  if (!m_context->started) m_context->start();
  Digest::Raw raw{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(m_context->ctx.get(), reinterpret_cast<unsigned char*>(raw.data()), &length) != 1 ||
      length != raw.size())
    openssl_failed("EVP_DigestFinal_ex");
  m_context->started = false;
  return Digest(raw);
}

void Sha256::reset() { m_context->start(); }

// The producer fills `filling`; full blocks queue for the thread, which
// hands them back through `spare` so steady state allocates nothing.
struct BackgroundSha256::State {
  static constexpr std::size_t k_block = 4 << 20;
  static constexpr std::size_t k_max_queued = 4;

  Sha256 hasher;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<std::byte>> queue;
  std::vector<std::vector<std::byte>> spare;
  std::vector<std::byte> filling;
  bool busy = false;  // the thread is hashing a block outside the lock
  bool stop = false;
  std::thread thread;

  void run() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty()) return;
      std::vector<std::byte> block = std::move(queue.front());
      queue.pop_front();
      busy = true;
      lock.unlock();
      hasher.update(block);
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

void BackgroundSha256::update(Bytes data) {
  State& s = *m_state;
  while (!data.empty()) {
    if (s.filling.capacity() < State::k_block) s.filling.reserve(State::k_block);
    const std::size_t n = std::min(data.size(), State::k_block - s.filling.size());
    s.filling.insert(s.filling.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n));
    data = data.subspan(n);
    if (s.filling.size() == State::k_block) {
      std::unique_lock lock(s.mutex);
      s.hand_over(lock);
    }
  }
}

Digest BackgroundSha256::digest() {
  std::unique_lock lock(m_state->mutex);
  m_state->drain(lock);
  return m_state->hasher.digest();
}

void BackgroundSha256::reset() {
  std::unique_lock lock(m_state->mutex);
  m_state->filling.clear();
  m_state->drain(lock);
  m_state->hasher = Sha256();
}

Digest sha256(Bytes data) {
  Sha256 hasher;
  hasher.update(data);
  return hasher.digest();
}

Digest sha256(std::string_view text) { return sha256(std::as_bytes(std::span(text.data(), text.size()))); }

namespace {

template <typename Hasher>
std::expected<std::uint64_t, std::string> hash_file_into(const std::filesystem::path& path, Hasher& hasher) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected("cannot read " + path.string() + ": " + std::strerror(errno));
  std::vector<std::byte> buffer(1 << 20);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return std::unexpected("cannot read " + path.string() + ": " + std::strerror(saved));
    }
    if (n == 0) break;
    hasher.update(Bytes(buffer.data(), static_cast<std::size_t>(n)));
    total += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return total;
}

}  // namespace

std::expected<std::uint64_t, std::string> hash_file(const std::filesystem::path& path, Sha256& hasher) {
  return hash_file_into(path, hasher);
}

std::expected<std::uint64_t, std::string> hash_file(const std::filesystem::path& path, BackgroundSha256& hasher) {
  return hash_file_into(path, hasher);
}

}  // namespace orc::digest
