#pragma once
// One inventory input as its parsers read it (private to the module): in
// 64 KiB pieces from a ByteSource, by lines or byte by byte, never more
// than InputSpec::limits allow, counting lines for messages. Every bound
// that is hit is an error with the file and line, and reading stops there.
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::inventory::detail {

class InputReader {
 public:
  InputReader(ByteSource& source, const InputSpec& input);

  // The next line, without its "\n" or "\r\n"; false at the end or on an
  // error. The view lives until the next call.
  bool line(std::string_view& out);
  // The next byte, or -1 at the end or on an error.
  int get();
  // Up to `n` bytes ahead, not consumed.
  std::string_view peek(std::size_t n);
  // Skips white space and a UTF-8 byte order mark before the first text.
  void skip_space();

  // The line the last byte or line read is on (1-based).
  int line_no() const { return m_line; }
  const std::optional<util::Diagnostic>& error() const { return m_error; }
  // An error at the current line; the first one sticks.
  void fail(std::string message);
  const InputSpec& input() const { return m_input; }

 private:
  // Reads more after what is buffered; false at the end or on an error.
  bool fill();

  ByteSource& m_source;
  const InputSpec& m_input;
  std::string m_buffer;
  std::size_t m_pos = 0;  // the next byte to hand out
  std::uint64_t m_read = 0;
  int m_line = 1;
  bool m_line_pending = false;  // the last line() ended at a '\n' not yet counted
  bool m_eof = false;
  std::optional<util::Diagnostic> m_error;
};

// "line N: ..." errors the parsers return: the reader's, else one at its line.
util::Diagnostic error_at(const InputReader& in, std::string message);
// One about the whole input, at its line 1 ("no GPU in this ...").
util::Diagnostic error_in(const InputSpec& input, std::string message);

// The three parsers over a reader positioned where their input starts.
std::expected<Inventory, util::Diagnostic> read_nvidia_smi_csv(InputReader& in);
std::expected<Inventory, util::Diagnostic> read_scontrol_nodes(InputReader& in);
std::expected<Inventory, util::Diagnostic> read_kubectl_nodes(InputReader& in);

// The formats read, for messages about input that is none of them.
inline constexpr std::string_view k_formats =
    "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv, `scontrol show node -o` or "
    "`kubectl get nodes -o json` output";

}  // namespace orc::inventory::detail
