// ArchivePipe (pack.hpp): the bounded queue of blocks between the thread
// that downloads an archive and the one that unpacks it.
#include <algorithm>
#include <cstring>

#include "orchestrator/cache/pack.hpp"

namespace orc::cache {

bool ArchivePipe::hand_over(std::unique_lock<std::mutex>& lock) {
  m_changed.wait(lock, [&] { return m_closed || m_queue.size() < k_max_queued; });
  if (m_closed) return false;
  m_queue.push_back(std::move(m_filling));
  m_filling = {};
  if (!m_spare.empty()) {
    m_filling = std::move(m_spare.back());
    m_spare.pop_back();
  }
  m_changed.notify_all();
  return true;
}

bool ArchivePipe::push(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    if (m_filling.capacity() < k_block) m_filling.reserve(k_block);
    const std::size_t n = std::min(bytes.size(), k_block - m_filling.size());
    m_filling.insert(m_filling.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    if (m_filling.size() == k_block) {
      std::unique_lock lock(m_mutex);
      if (!hand_over(lock)) return false;
    }
  }
  std::lock_guard lock(m_mutex);
  return !m_closed;
}

void ArchivePipe::finish() {
  std::unique_lock lock(m_mutex);
  if (!m_filling.empty()) hand_over(lock);
  m_finished = true;
  m_changed.notify_all();
}

void ArchivePipe::fail(Error error) {
  std::lock_guard lock(m_mutex);
  m_failure = std::move(error);
  m_finished = true;
  m_changed.notify_all();
}

void ArchivePipe::close() {
  std::lock_guard lock(m_mutex);
  m_closed = true;
  m_changed.notify_all();
}

std::expected<std::span<const std::byte>, Error> ArchivePipe::next() {
  std::unique_lock lock(m_mutex);
  if (!m_reading.empty() || m_reading.capacity() > 0) {
    m_reading.clear();
    m_spare.push_back(std::move(m_reading));
    m_reading = {};
  }
  m_changed.wait(lock, [&] { return !m_queue.empty() || m_finished; });
  if (m_queue.empty()) {
    if (m_failure) return std::unexpected(*m_failure);
    return std::span<const std::byte>();
  }
  m_reading = std::move(m_queue.front());
  m_queue.pop_front();
  m_changed.notify_all();
  return std::span<const std::byte>(m_reading);
}

bool ArchivePipe::drain() {
  for (;;) {
    auto bytes = next();
    if (!bytes) return false;
    if (bytes->empty()) return true;
  }
}

}  // namespace orc::cache
