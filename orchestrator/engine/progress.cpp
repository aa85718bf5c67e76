#include "orchestrator/engine/progress.hpp"

#include <nlohmann/json.hpp>

namespace orc::engine {

namespace {

std::string string_at(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::expected<ProgressEvent, std::string> parse_progress_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  ProgressEvent event;
  if (line.empty()) return event;
  const auto doc = nlohmann::json::parse(line, nullptr, false);
  if (!doc.is_object()) {
    std::string shown(line.substr(0, 200));
    return std::unexpected("not a progress object: " + shown);
  }
  event.stream = string_at(doc, "stream");
  event.status = string_at(doc, "status");
  event.id = string_at(doc, "id");
  event.error = string_at(doc, "error");
  if (const auto detail = doc.find("errorDetail"); event.error.empty() && detail != doc.end() && detail->is_object())
    event.error = string_at(*detail, "message");
  if (const auto aux = doc.find("aux"); aux != doc.end() && aux->is_object()) {
    if (std::string id = string_at(*aux, "ID"); !id.empty()) {
      event.id = std::move(id);
      event.is_aux_id = true;
    }
  }
  return event;
}

void ProgressParser::feed(std::string_view bytes) {
  // Only the new bytes can hold the next newline: searching the whole
  // pending line again on every read made a long line quadratic.
  std::size_t search = m_pending.size();
  m_pending.append(bytes);
  std::size_t start = 0;
  for (std::size_t nl; (nl = m_pending.find('\n', search)) != std::string::npos; start = search = nl + 1) {
    if (m_skipping)
      m_skipping = false;
    else
      line(std::string_view(m_pending).substr(start, nl - start));
  }
  m_pending.erase(0, start);
  if (m_pending.size() > k_max_line) {
    // An engine that never ends its line would otherwise grow this without
    // bound; the rest of the line is dropped up to its newline.
    if (!m_skipping && !m_error) m_error = "a progress line longer than " + std::to_string(k_max_line >> 20) + " MiB";
    m_skipping = true;
    m_pending.clear();
  }
}

void ProgressParser::finish() {
  if (!m_pending.empty() && !m_skipping) line(m_pending);
  m_pending.clear();
}

void ProgressParser::line(std::string_view text) {
  auto event = parse_progress_line(text);
  if (!event) {
    if (!m_error) m_error = std::move(event.error());
    return;
  }
  m_on_event(*event);
}

}  // namespace orc::engine
