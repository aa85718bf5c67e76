#include "orchestrator/inventory/reader.hpp"

#include <algorithm>
#include <cstring>

#include "orchestrator/util/strings.hpp"

namespace orc::inventory {

std::expected<std::size_t, std::string> TextSource::read(std::span<char> into) {
  const std::size_t n = std::min(into.size(), m_text.size());
  std::memcpy(into.data(), m_text.data(), n);
  m_text.remove_prefix(n);
  return n;
}

namespace detail {

namespace {

constexpr std::size_t k_piece = 64 << 10;

}  // namespace

InputReader::InputReader(ByteSource& source, const InputSpec& input) : m_source(source), m_input(input) {}

void InputReader::fail(std::string message) {
  if (m_error) return;
  m_error = util::Diagnostic{.where = {.file = m_input.file, .line = m_line, .col = 0}, .message = std::move(message)};
}

bool InputReader::fill() {
  if (m_eof || m_error) return false;
  // What was handed out is dropped, so the buffer holds one line and a piece.
  m_buffer.erase(0, m_pos);
  m_pos = 0;
  // Up to the bound and no further: past it, one byte more is asked for, so
  // the input is refused only when it has more, at the line that holds it.
  const std::size_t had = m_buffer.size();
  const std::uint64_t room = m_input.limits.input_bytes - m_read;
  m_buffer.resize(had + static_cast<std::size_t>(std::min<std::uint64_t>(k_piece, std::max<std::uint64_t>(room, 1))));
  auto got = m_source.read(std::span(m_buffer).subspan(had));
  if (!got) {
    m_buffer.resize(had);
    fail("cannot read: " + got.error());
    return false;
  }
  m_buffer.resize(had + *got);
  m_read += *got;
  if (m_read > m_input.limits.input_bytes) {
    fail("more than " + util::human_size(m_input.limits.input_bytes) +
         " of input, the most tiers import reads from one file or standard input: give it the inventory in "
         "parts (a partition, a namespace, a file per node) as several files");
    return false;
  }
  if (*got == 0) m_eof = true;
  return *got > 0;
}

bool InputReader::line(std::string_view& out) {
  if (m_line_pending) {
    ++m_line;
    m_line_pending = false;
  }
  std::size_t scanned = m_pos;
  for (;;) {
    if (const auto eol = m_buffer.find('\n', scanned); eol != std::string::npos) {
      if (eol - m_pos > m_input.limits.line_bytes) break;
      out = std::string_view(m_buffer).substr(m_pos, eol - m_pos);
      m_pos = eol + 1;
      m_line_pending = true;
      if (out.ends_with('\r')) out.remove_suffix(1);
      return true;
    }
    if (m_buffer.size() - m_pos > m_input.limits.line_bytes) break;
    const std::size_t pending = m_buffer.size() - m_pos;
    if (!fill()) {
      if (m_error || m_pos == m_buffer.size()) return false;
      out = std::string_view(m_buffer).substr(m_pos);  // the last line, without '\n'
      m_pos = m_buffer.size();
      return true;
    }
    scanned = m_pos + pending;  // fill() moved the pending bytes to the front
  }
  fail("a line longer than " + util::human_size(m_input.limits.line_bytes) + ": not " + std::string(k_formats) +
       ", whose lines are short");
  return false;
}

int InputReader::get() {
  if (m_line_pending) {
    ++m_line;
    m_line_pending = false;
  }
  if (m_pos == m_buffer.size() && !fill()) return -1;
  const char c = m_buffer[m_pos++];
  if (c == '\n') m_line_pending = true;
  return static_cast<unsigned char>(c);
}

std::string_view InputReader::peek(std::size_t n) {
  while (m_buffer.size() - m_pos < n && fill()) {
  }
  return std::string_view(m_buffer).substr(m_pos, n);
}

void InputReader::skip_space() {
  if (peek(3) == "\xef\xbb\xbf") m_pos += 3;
  for (;;) {
    const std::string_view next = peek(1);
    if (next.empty() || (next[0] != ' ' && next[0] != '\t' && next[0] != '\r' && next[0] != '\n')) break;
    get();
  }
  // What follows starts a line of its own when a newline was skipped.
  if (m_line_pending) {
    ++m_line;
    m_line_pending = false;
  }
}

util::Diagnostic error_at(const InputReader& in, std::string message) {
  if (in.error()) return *in.error();
  return util::Diagnostic{.where = {.file = in.input().file, .line = in.line_no(), .col = 0},
                          .message = std::move(message)};
}

util::Diagnostic error_in(const InputSpec& input, std::string message) {
  return util::Diagnostic{.where = {.file = input.file, .line = 1, .col = 0}, .message = std::move(message)};
}

}  // namespace detail
}  // namespace orc::inventory
