#include "orchestrator/registry/digest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
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

// The threading is inspect's; this adds the "sha256:" form.
struct BackgroundSha256::State {
  inspect::BackgroundSha256 hasher;
};

BackgroundSha256::BackgroundSha256() : m_state(std::make_unique<State>()) {}

BackgroundSha256::~BackgroundSha256() = default;

void BackgroundSha256::update(std::string_view bytes) {
  m_state->hasher.update(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

std::string BackgroundSha256::digest() { return "sha256:" + m_state->hasher.hex_digest(); }

void BackgroundSha256::reset() { m_state->hasher.reset(); }

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
