#pragma once
// The JSON-lines progress that POST /build and POST /images/create stream
// back. Each line is one object; the keys that matter:
//
//   {"stream": "Step 1/2 : FROM x\n"}        build output, to show as is
//   {"status": "sha256:...", "id": "..."}    import/pull progress; an import's
//                                            last status is the new image ID
//   {"aux": {"ID": "sha256:..."}}            the built image's ID
//   {"errorDetail": {"code": 9, "message": "..."}, "error": "..."}
//                                            the failure; the status is still 200
//
// Objects can be split across reads and several can arrive in one read;
// Podman's builder sends the same keys.
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace orc::engine {

struct ProgressEvent {
  std::string stream;      // text to show (build output)
  std::string status;      // a status line (import, pull)
  std::string id;          // "id" of a status line (a layer), or aux.ID
  std::string error;       // non-empty: the operation failed with this message
  bool is_aux_id = false;  // `id` came from {"aux": {"ID": ...}}
};

// Parses one line. Blank lines are an empty event; text that is not a JSON
// object is an error.
std::expected<ProgressEvent, std::string> parse_progress_line(std::string_view line);

// Cuts a byte stream into lines and parses each. The first unparsable line
// is kept as error(); later lines are still delivered.
class ProgressParser {
 public:
  explicit ProgressParser(std::function<void(const ProgressEvent&)> on_event) : m_on_event(std::move(on_event)) {}

  void feed(std::string_view bytes);
  // Parses what is left after the last newline.
  void finish();

  const std::optional<std::string>& error() const { return m_error; }

 private:
  void line(std::string_view text);

  // A line longer than this is an error, not memory: no real progress
  // object comes near it.
  static constexpr std::size_t k_max_line = 16u << 20;

  std::function<void(const ProgressEvent&)> m_on_event;
  std::string m_pending;
  bool m_skipping = false;  // inside a line over k_max_line
  std::optional<std::string> m_error;
};

}  // namespace orc::engine
