#include "orchestrator/util/byte_pipe.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace orc::util {

BytePipe::BytePipe(std::size_t capacity) : m_capacity(std::max<std::size_t>(capacity, 1)) {}

bool BytePipe::write(std::string_view bytes) {
  if (bytes.empty()) return true;
  std::unique_lock lock(m_mutex);
  // A chunk larger than the capacity still goes in whole once the pipe is
  // empty: the bound is the capacity plus one chunk.
  m_changed.wait(lock, [&] { return m_abandoned || m_waiting == 0 || m_waiting + bytes.size() <= m_capacity; });
  if (m_abandoned) return false;
  m_chunks.emplace_back(bytes);
  m_waiting += bytes.size();
  m_changed.notify_all();
  return true;
}

void BytePipe::close(std::optional<std::string> error) {
  std::lock_guard lock(m_mutex);
  m_closed = true;
  m_error = std::move(error);
  m_changed.notify_all();
}

std::expected<std::size_t, std::string> BytePipe::read(std::span<std::byte> out) {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_waiting > 0 || m_closed; });
  if (m_waiting == 0) {
    if (m_error) return std::unexpected(*m_error);
    return 0;
  }
  std::size_t copied = 0;
  while (copied < out.size() && !m_chunks.empty()) {
    const std::string& front = m_chunks.front();
    const std::size_t n = std::min(out.size() - copied, front.size() - m_front);
    std::memcpy(out.data() + copied, front.data() + m_front, n);
    copied += n;
    m_front += n;
    if (m_front == front.size()) {
      m_chunks.pop_front();
      m_front = 0;
    }
  }
  m_waiting -= copied;
  m_changed.notify_all();
  return copied;
}

void BytePipe::abandon() {
  std::lock_guard lock(m_mutex);
  m_abandoned = true;
  m_chunks.clear();
  m_waiting = 0;
  m_changed.notify_all();
}

void BytePipe::drain() {
  std::vector<std::byte> sink(1 << 16);
  for (auto n = read(sink); n && *n > 0; n = read(sink)) {
  }
}

PipeProducer::PipeProducer(BytePipe& pipe, std::function<std::optional<std::string>()> run) : m_pipe(pipe) {
  m_thread = std::thread([this, run = std::move(run)] {
    auto error = run();
    if (error) m_error = *error;
    m_pipe.close(error);
  });
}

const std::optional<std::string>& PipeProducer::join() {
  if (m_thread.joinable()) {
    m_pipe.abandon();
    m_thread.join();
  }
  return m_error;
}

}  // namespace orc::util
