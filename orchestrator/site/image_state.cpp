#include "orchestrator/site/image_state.hpp"

#include <nlohmann/json.hpp>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::site {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

ordered_json image_record_json(const ImageRecord& r) {
  return ordered_json{{"name", r.name},         {"reference", r.reference},   {"id", r.id},
                      {"digests", r.digests},   {"created", r.created},       {"toolkit", r.toolkit},
                      {"packages", r.packages}, {"rootfs_key", r.rootfs_key}, {"engine", r.engine},
                      {"pushed", r.pushed}};
}

namespace {

constexpr std::string_view k_schema = "orchestrate.images.v1";

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
  r.pushed = text("pushed");
  return r;
}

}  // namespace

fs::path image_state_path() { return cache::default_store_root() / "images.v1.json"; }

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
  for (const auto& r : records) root["images"].push_back(image_record_json(r));
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

}  // namespace orc::site
