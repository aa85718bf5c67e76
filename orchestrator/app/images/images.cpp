#include "orchestrator/app/images/images.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/app/images/images_detail.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr std::string_view k_schema = "orchestrate.images.v1";

ordered_json to_json(const ImageRecord& r) {
  return ordered_json{{"name", r.name},         {"reference", r.reference},   {"id", r.id},
                      {"digests", r.digests},   {"created", r.created},       {"toolkit", r.toolkit},
                      {"packages", r.packages}, {"rootfs_key", r.rootfs_key}, {"engine", r.engine}};
}

std::optional<ImageRecord> from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("reference") || !j["reference"].is_string()) return std::nullopt;
  ImageRecord r;
  const auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
  };
  const auto list = [&](const char* key) {
    std::vector<std::string> out;
    if (j.contains(key) && j[key].is_array())
      for (const auto& e : j[key])
        if (e.is_string()) out.push_back(e.get<std::string>());
    return out;
  };
  r.name = text("name");
  r.reference = text("reference");
  r.id = text("id");
  r.digests = list("digests");
  r.created = text("created");
  r.toolkit = text("toolkit");
  r.packages = list("packages");
  r.rootfs_key = text("rootfs_key");
  r.engine = text("engine");
  return r;
}

// What the engine has under an offline image's reference.
struct EngineView {
  std::string socket;
  std::string description;  // "docker 20.10.24"
  std::string error;        // why we could not ask
  std::optional<engine::DockerEngine> engine;
};

EngineView open_engine(const std::optional<fs::path>& given) {
  EngineView view;
  auto socket = images_detail::engine_socket(given);
  if (!socket) {
    view.error = socket.error();
    return view;
  }
  view.socket = socket->string();
  auto connected = engine::DockerEngine::connect(*socket);
  if (!connected) {
    view.error = "cannot reach the engine at " + view.socket + ": " + connected.error().message;
    return view;
  }
  view.description = std::string(connected->name()) + " " + connected->client().engine().version;
  view.engine.emplace(std::move(*connected));
  return view;
}

std::string short_id(const std::string& id) {
  const auto colon = id.find(':');
  return id.substr(colon == std::string::npos ? 0 : colon + 1, 12);
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s + "  ";
}

}  // namespace

namespace images_detail {

std::expected<fs::path, std::string> engine_socket(const std::optional<fs::path>& given) {
  if (given && !given->empty()) return *given;
  auto found = engine::discover_engine(std::nullopt);
  if (!found) return std::unexpected(found.error().message);
  if (found->kind == engine::EngineKind::host)
    return std::unexpected("no container engine socket found (looked at " + util::join(found->looked_at, ", ") +
                           "); start dockerd (scripts/start-dockerd.sh) or pass --engine-socket PATH");
  return found->socket;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace images_detail

fs::path cache_root() { return cache::default_store_root(); }

fs::path image_state_path() { return cache_root() / "images.v1.json"; }

std::vector<ImageRecord> read_image_state(const fs::path& file) {
  const auto text = util::read_file(file);
  if (!text) return {};
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema", "") != k_schema || !j.contains("images") || !j["images"].is_array())
    return {};
  std::vector<ImageRecord> records;
  for (const auto& e : j["images"])
    if (auto r = from_json(e)) records.push_back(std::move(*r));
  return records;
}

void save_image_record(const fs::path& file, const ImageRecord& record) {
  std::vector<ImageRecord> records = read_image_state(file);
  std::erase_if(records, [&](const ImageRecord& r) { return r.reference == record.reference; });
  records.push_back(record);
  ordered_json root{{"schema", k_schema}, {"images", ordered_json::array()}};
  for (const auto& r : records) root["images"].push_back(to_json(r));
  if (auto written = util::write_file_atomic(file, root.dump(2) + "\n"); !written)
    throw util::Failure(util::ExitCode::outside_failure, "cannot write " + written.error().message);
}

std::optional<ImageRecord> find_built_image(const std::string& reference, const fs::path& state_file) {
  const compat::OfflineImage* image = compat::find_offline_image(reference);
  const std::string wanted = image ? image->reference() : reference;
  for (auto& r : read_image_state(state_file))
    if (r.reference == wanted) return std::move(r);
  return std::nullopt;
}

std::optional<ImageRecord> find_built_image(const std::string& reference) {
  return find_built_image(reference, image_state_path());
}

std::optional<compat::HostCuda> detect_host_cuda() {
  std::string root = util::env_value("ORCHESTRATE_HOST_CUDA");
  if (root.empty()) root = std::string(compat::k_default_host_cuda);
  const fs::path nvcc = fs::path(root) / "bin" / "nvcc";
  if (::access(nvcc.c_str(), X_OK) != 0) return std::nullopt;
  const auto ran = util::run_process({.argv = {nvcc.string(), "--version"}, .merge_stderr = true});
  if (!ran || !ran->ok()) return std::nullopt;
  auto version = compat::parse_nvcc_version(ran->out);
  if (!version) return std::nullopt;
  return compat::HostCuda{.toolkit = *version, .root = root};
}

ImagesOutput list_images(const ImagesListRequest& request) {
  EngineView view = open_engine(request.engine_socket);
  const std::vector<ImageRecord> records = read_image_state(image_state_path());
  const std::optional<compat::HostCuda> host = detect_host_cuda();

  ordered_json offline = ordered_json::array();
  std::ostringstream text;
  text << "offline images (orchestrate images build NAME; no registry needed)\n";
  text << "  " << pad("NAME", 14) << pad("REFERENCE", 31) << pad("TOOLKIT", 16) << "IN ENGINE\n";
  for (const compat::OfflineImage& image : compat::offline_images()) {
    const std::string reference = image.reference();
    std::optional<ImageRecord> record;
    for (const auto& r : records)
      if (r.reference == reference) record = r;
    std::optional<engine::ImageInfo> present;
    if (view.engine)
      if (auto info = view.engine->inspect_image(reference)) present = *info;

    std::string toolkit = image.host_mount ? "host" : image.toolkit.str();
    if (image.host_mount) toolkit += host ? " (" + host->toolkit.str() + ")" : " (none found)";
    std::string where = !view.engine ? "engine not reachable" : present ? short_id(present->id) : "not built";
    if (present && record && record->id == present->id)
      where += " (built " + record->created + ", nvcc " + record->toolkit + ")";
    if (present && record && record->id != present->id) where += " (not the image recorded in the state file)";
    text << "  " << pad(std::string(image.name), 14) << pad(reference, 31) << pad(toolkit, 16) << where << "\n";

    ordered_json j{
        {"name", image.name},
        {"reference", reference},
        {"source", image.host_mount ? "host_mount" : "offline"},
        {"toolkit", image.host_mount ? ordered_json(nullptr) : ordered_json(image.toolkit.str())},
        {"host_toolkit", image.host_mount && host ? ordered_json(host->toolkit.str()) : ordered_json(nullptr)},
        {"suite", image.suite},
        {"components", image.components},
        {"packages", image.packages},
        {"summary", image.summary}};
    j["built"] = record ? to_json(*record) : ordered_json(nullptr);
    j["in_engine"] = present ? ordered_json{{"id", present->id}, {"digests", present->digests}, {"size", present->size}}
                             : ordered_json(nullptr);
    offline.push_back(std::move(j));
  }

  ordered_json official = ordered_json::array();
  text << "\nofficial images (sites with registry access; images/official/Dockerfile.cuda)\n";
  for (const compat::OfficialImage& image : compat::official_images()) {
    const std::string minor = image.cuda.truncated(2).str();
    std::string line = "  " + pad(minor, 5) + image.reference(false);
    if (image.has_cudnn)
      line += "  cuDNN: " + image.tag(true) +
              (image.cudnn_version.empty() ? "" : " (" + std::string(image.cudnn_version) + ")");
    text << line << "\n";
    official.push_back(
        {{"toolkit", minor},
         {"reference", image.reference(false)},
         {"cudnn_reference", image.has_cudnn ? ordered_json(image.reference(true)) : ordered_json(nullptr)},
         {"cudnn", image.cudnn_version.empty() ? ordered_json(nullptr) : ordered_json(image.cudnn_version)}});
  }
  text << "\nengine: " << (view.engine ? view.description + " at " + view.socket : view.error) << "\n";

  ImagesOutput output;
  if (request.json) {
    ordered_json root;
    root["engine"] = {{"socket", view.socket.empty() ? ordered_json(nullptr) : ordered_json(view.socket)},
                      {"reachable", view.engine.has_value()},
                      {"version", view.engine ? ordered_json(view.description) : ordered_json(nullptr)},
                      {"error", view.error.empty() ? ordered_json(nullptr) : ordered_json(view.error)}};
    root["state_file"] = image_state_path().string();
    root["offline"] = std::move(offline);
    root["official"] = std::move(official);
    output.out = root.dump(2) + "\n";
  } else {
    output.out = text.str();
  }
  return output;
}

}  // namespace orc::app
