#pragma once
// Container output as the engine sends it, and where it goes.
//
// GET /containers/{id}/logs (and attach) on a container created with
// Tty=false sends a multiplexed stream of frames:
//
//   byte 0     stream: 0 stdin, 1 stdout, 2 stderr (3: the engine's own error)
//   bytes 1-3  zero
//   bytes 4-7  payload length, unsigned 32-bit big-endian
//   then       that many payload bytes
//
// A frame may be split across reads at any byte, header included. With
// Tty=true there is no framing at all: raw bytes, stdout and stderr merged,
// lines ending in "\r\n".
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace orc::engine {

enum class OutputStream { out, err };

// Receives a container's output as it is produced. Chunks follow the
// engine's writes, not lines; a sink that wants lines must join them.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void on_output(OutputStream stream, std::string_view bytes) = 0;
};

// Splits a log stream into its stdout and stderr bytes, forwarding payload
// bytes to the sink as soon as they arrive (a frame's payload may reach the
// sink in several pieces).
class LogDemuxer {
 public:
  enum class Mode {
    multiplexed,  // Tty=false: frames as above
    raw,          // Tty=true: everything is stdout
    detect,       // decide from the first 8 bytes: a valid frame header, or raw
  };

  // Podman answers 200, then may fail and write its JSON error object where
  // the next frame header belongs; that text is kept (up to this many bytes)
  // instead of being taken for a frame.
  static constexpr std::size_t k_engine_error_max = 4096;

  LogDemuxer(LogSink& sink, Mode mode) : m_sink(sink), m_mode(mode) {}

  // Feeds the next bytes of the stream. An error means the stream is not
  // what the mode says (a header with a nonzero pad byte or an unknown
  // stream number); nothing more should be fed.
  std::expected<void, std::string> feed(std::string_view bytes);
  // The stream ended: an error when it ended inside a frame.
  std::expected<void, std::string> finish();

  std::uint64_t frames() const { return m_frames; }
  // The engine's own error text written into the stream ('{' where a frame
  // header belongs), empty when there was none.
  const std::string& engine_error() const { return m_engine_error; }

 private:
  std::expected<void, std::string> take_header();

  LogSink& m_sink;
  Mode m_mode;
  char m_header[8] = {};
  std::size_t m_header_fill = 0;
  std::uint32_t m_payload_left = 0;
  OutputStream m_current = OutputStream::out;
  std::uint64_t m_frames = 0;
  bool m_in_engine_error = false;
  std::string m_engine_error;
};

}  // namespace orc::engine
