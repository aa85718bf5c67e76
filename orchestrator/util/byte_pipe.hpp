#pragma once
// A bounded pipe of bytes between two threads: one writes what arrives
// (an HTTP body, pushed by libcurl), the other reads it as a stream (a tar
// walked by libarchive, which pulls). The writer blocks while `capacity`
// bytes wait unread, so memory stays bounded whatever the body's size, and
// the two sides overlap: the download and the scan run at once.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <expected>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>

namespace orc::util {

class BytePipe {
 public:
  explicit BytePipe(std::size_t capacity = 16u << 20);

  // Blocks while the pipe is full; false once the reader abandoned it.
  bool write(std::string_view bytes);
  // The writer is done: the reader sees the end after the bytes already
  // written, or `error` in place of the end.
  void close(std::optional<std::string> error = std::nullopt);

  // Blocks until bytes, the end (0) or the writer's error.
  std::expected<std::size_t, std::string> read(std::span<std::byte> out);
  // The reader stops early: writes fail from now on, so the writer ends.
  void abandon();
  // Reads and drops the rest, up to the end or the writer's error (what
  // follows an archive's end blocks: the writer streams to its end).
  void drain();

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::string> m_chunks;
  std::size_t m_front = 0;    // bytes of m_chunks.front() already read
  std::size_t m_waiting = 0;  // bytes written, not yet read
  std::size_t m_capacity;
  bool m_closed = false;
  bool m_abandoned = false;
  std::optional<std::string> m_error;
};

// A thread that writes into a pipe the calling thread reads (an export, a
// download): `run` returns its own failure, or nullopt, and the pipe is
// closed with it. Whatever way the reader ends, join() (or the destructor)
// abandons the pipe, so a blocked writer ends, and joins the thread.
class PipeProducer {
 public:
  PipeProducer(BytePipe& pipe, std::function<std::optional<std::string>()> run);
  ~PipeProducer() { join(); }
  PipeProducer(const PipeProducer&) = delete;
  PipeProducer& operator=(const PipeProducer&) = delete;

  // The producer's own failure (the engine's, the registry's), once joined.
  const std::optional<std::string>& join();

 private:
  BytePipe& m_pipe;
  std::thread m_thread;
  std::optional<std::string> m_error;
};

}  // namespace orc::util
