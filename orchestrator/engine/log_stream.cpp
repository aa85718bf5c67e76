#include "orchestrator/engine/log_stream.hpp"

#include <algorithm>

namespace orc::engine {

namespace {

bool looks_like_header(const char* h) {
  return static_cast<unsigned char>(h[0]) <= 3 && h[1] == 0 && h[2] == 0 && h[3] == 0;
}

}  // namespace

std::expected<void, std::string> LogDemuxer::take_header() {
  const auto* h = reinterpret_cast<const unsigned char*>(m_header);
  if (m_header[0] == '{') {
    m_in_engine_error = true;
    m_engine_error.assign(m_header, sizeof m_header);
    m_header_fill = 0;
    return {};
  }
  if (!looks_like_header(m_header))
    return std::unexpected("log stream: bad frame header (stream byte " + std::to_string(h[0]) + ")");
  // stdin (0) only appears when attached with stdin; the engine's own error
  // text (3, "systemerr") belongs with stderr.
  m_current = h[0] >= 2 ? OutputStream::err : OutputStream::out;
  m_payload_left = (std::uint32_t{h[4]} << 24) | (std::uint32_t{h[5]} << 16) | (std::uint32_t{h[6]} << 8) | h[7];
  m_header_fill = 0;
  ++m_frames;
  return {};
}

std::expected<void, std::string> LogDemuxer::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (m_in_engine_error) {
      const std::size_t room = k_engine_error_max - std::min(k_engine_error_max, m_engine_error.size());
      m_engine_error.append(bytes.substr(0, room));
      return {};
    }
    if (m_mode == Mode::raw) {
      m_sink.on_output(OutputStream::out, bytes);
      return {};
    }
    if (m_payload_left > 0) {
      const std::size_t n = std::min<std::size_t>(m_payload_left, bytes.size());
      m_sink.on_output(m_current, bytes.substr(0, n));
      m_payload_left -= static_cast<std::uint32_t>(n);
      bytes.remove_prefix(n);
      continue;
    }
    const std::size_t n = std::min(sizeof m_header - m_header_fill, bytes.size());
    std::copy_n(bytes.data(), n, m_header + m_header_fill);
    m_header_fill += n;
    bytes.remove_prefix(n);
    if (m_header_fill < sizeof m_header) return {};
    if (m_mode == Mode::detect) {
      m_mode = looks_like_header(m_header) ? Mode::multiplexed : Mode::raw;
      if (m_mode == Mode::raw) {
        m_sink.on_output(OutputStream::out, std::string_view(m_header, sizeof m_header));
        m_header_fill = 0;
        continue;
      }
    }
    if (auto ok = take_header(); !ok) return ok;
  }
  return {};
}

std::expected<void, std::string> LogDemuxer::finish() {
  if (m_mode == Mode::detect && m_header_fill > 0) {
    // Fewer than 8 bytes in all: too short to be a frame, so it was raw.
    m_sink.on_output(OutputStream::out, std::string_view(m_header, m_header_fill));
    m_header_fill = 0;
    return {};
  }
  if (m_in_engine_error) return std::unexpected("log stream: the engine wrote an error in place of a frame");
  if (m_header_fill > 0) return std::unexpected("log stream: ended inside a frame header");
  if (m_payload_left > 0)
    return std::unexpected("log stream: ended inside a frame (" + std::to_string(m_payload_left) +
                           " payload bytes missing)");
  return {};
}

}  // namespace orc::engine
