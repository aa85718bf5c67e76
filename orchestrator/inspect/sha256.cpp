#include "orchestrator/inspect/sha256.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::inspect {

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

std::string Sha256::hex_digest() {
  if (!m_context->started) m_context->start();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(m_context->ctx.get(), digest, &length) != 1) openssl_failed("EVP_DigestFinal_ex");
  m_context->started = false;
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += k_hex[digest[i] >> 4];
    out += k_hex[digest[i] & 0xf];
  }
  return out;
}

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

std::string BackgroundSha256::hex_digest() {
  std::unique_lock lock(m_state->mutex);
  m_state->drain(lock);
  return m_state->hasher.hex_digest();
}

void BackgroundSha256::reset() {
  std::unique_lock lock(m_state->mutex);
  m_state->filling.clear();
  m_state->drain(lock);
  m_state->hasher = Sha256();
}

std::string sha256_hex(Bytes data) {
  Sha256 hasher;
  hasher.update(data);
  return hasher.hex_digest();
}

}  // namespace orc::inspect
