#include "orchestrator/engine/answers.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace orc::engine {

namespace {

using nlohmann::json;

std::string string_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> strings_at(const json& object, const char* key) {
  std::vector<std::string> out;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& item : *it)
    if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

// An object, or a discarded value when the body is not JSON or not an object.
json object_of(std::string_view body) {
  json doc = json::parse(body, nullptr, false);
  return doc.is_object() ? doc : json(json::value_t::discarded);
}

}  // namespace

std::optional<ApiVersion> ApiVersion::parse(std::string_view text) {
  ApiVersion v;
  // from_chars takes a leading '-'; a version has digits only.
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v.major);
  if (ec != std::errc() || p == end || *p != '.') return std::nullopt;
  if (p + 1 == end || p[1] < '0' || p[1] > '9') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, v.minor);
  if (ec2 != std::errc() || q != end) return std::nullopt;
  return v;
}

std::string ApiVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::expected<EngineVersion, Error> parse_version(std::string_view body) {
  constexpr std::string_view doing = "reading the engine's version: ";
  const auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object())
    return std::unexpected(Error{.kind = ErrorKind::protocol, .message = std::string(doing) + "not a JSON object"});
  const auto api = ApiVersion::parse(string_at(doc, "ApiVersion"));
  if (!api) return std::unexpected(Error{.kind = ErrorKind::protocol, .message = std::string(doing) + "no ApiVersion"});
  EngineVersion v{.version = string_at(doc, "Version"),
                  .api = *api,
                  .min_api = *api,
                  .os = string_at(doc, "Os"),
                  .arch = string_at(doc, "Arch")};
  if (const auto min = ApiVersion::parse(string_at(doc, "MinAPIVersion"))) v.min_api = *min;
  if (const auto components = doc.find("Components"); components != doc.end() && components->is_array())
    for (const auto& c : *components)
      if (c.is_object() && string_at(c, "Name") == "Podman Engine") v.podman = true;
  return v;
}

std::expected<ImageInfo, std::string> read_image_info(std::string_view body) {
  const json doc = object_of(body);
  if (!doc.is_object() || string_at(doc, "Id").empty()) return std::unexpected("no image Id");
  ImageInfo info{
      .id = string_at(doc, "Id"), .tags = strings_at(doc, "RepoTags"), .digests = strings_at(doc, "RepoDigests")};
  if (const auto size = doc.find("Size"); size != doc.end() && size->is_number_unsigned())
    info.size = size->get<std::uint64_t>();
  if (const auto config = doc.find("Config"); config != doc.end() && config->is_object())
    if (const auto labels = config->find("Labels"); labels != config->end() && labels->is_object())
      for (const auto& [key, value] : labels->items())
        if (value.is_string()) info.labels.emplace(key, value.get<std::string>());
  return info;
}

std::expected<std::string, std::string> read_created_id(std::string_view body) {
  const json doc = object_of(body);
  std::string id = doc.is_object() ? string_at(doc, "Id") : std::string();
  if (id.empty()) return std::unexpected("no container Id in the answer");
  return id;
}

std::expected<WaitAnswer, std::string> read_wait(std::string_view body) {
  const json doc = object_of(body);
  const auto code = doc.is_object() ? doc.find("StatusCode") : doc.end();
  // A status an int cannot hold is not one the engine's containers return.
  if (!doc.is_object() || code == doc.end() || !code->is_number_integer() || code->get<std::int64_t>() > INT32_MAX ||
      code->get<std::int64_t>() < INT32_MIN)
    return std::unexpected("no StatusCode in the answer");
  WaitAnswer answer{.status_code = static_cast<int>(code->get<std::int64_t>())};
  if (const auto error = doc.find("Error"); error != doc.end() && error->is_object())
    answer.error = string_at(*error, "Message");
  return answer;
}

std::expected<std::string, std::string> read_container_status(std::string_view body) {
  const json doc = object_of(body);
  const auto state = doc.is_object() ? doc.find("State") : doc.end();
  const std::string status = state != doc.end() && state->is_object() ? string_at(*state, "Status") : std::string();
  if (status.empty()) return std::unexpected("no State.Status in the answer");
  return status;
}

std::expected<std::vector<ContainerSummary>, std::string> read_container_list(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (!doc.is_array()) return std::unexpected("not a list");
  std::vector<ContainerSummary> out;
  for (const auto& item : doc) {
    if (!item.is_object()) continue;
    out.push_back(ContainerSummary{
        .id = string_at(item, "Id"), .state = string_at(item, "State"), .image = string_at(item, "Image")});
  }
  return out;
}

std::string read_engine_message(std::string_view body, int status) {
  const json doc = object_of(body);
  if (doc.is_object()) {
    if (std::string message = string_at(doc, "message"); !message.empty()) return message;
  }
  std::string text(body);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.size() > 500) text = text.substr(0, 500) + "...";
  if (text.empty()) return "HTTP status " + std::to_string(status);
  return text;
}

}  // namespace orc::engine
