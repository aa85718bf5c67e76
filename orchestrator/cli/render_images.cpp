// `orchestrate images list | build`, rendered: the catalog as tables (the
// one table renderer), the build's record and timings, or --json.
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"

namespace orc::cli {

namespace {

using nlohmann::ordered_json;

ordered_json or_null(const std::string& text) { return text.empty() ? ordered_json(nullptr) : ordered_json(text); }

std::string short_id(const std::string& id) {
  const auto colon = id.find(':');
  return id.substr(colon == std::string::npos ? 0 : colon + 1, 12);
}

std::string toolkit_cell(const compat::OfflineImage& image, const std::optional<compat::HostCuda>& host) {
  if (!image.host_mount) return image.toolkit.str();
  return "host " + (host ? "(" + host->toolkit.str() + ")" : std::string("(none found)"));
}

// Where the engine stands on the image: its short ID, and whether it is the
// one the state file recorded.
std::string engine_cell(const app::ImagesReport& report, const app::OfflineImageRow& row) {
  if (!report.engine.reachable) return "engine not reachable";
  if (!row.in_engine) return "not built";
  std::string where = short_id(row.in_engine->id);
  if (row.record && row.record->id == row.in_engine->id)
    where += " (built " + row.record->created + ", nvcc " + row.record->toolkit + ")";
  if (row.record && row.record->id != row.in_engine->id) where += " (not the image recorded in the state file)";
  return where;
}

ordered_json offline_json(const app::ImagesReport& report, const app::OfflineImageRow& row) {
  const compat::OfflineImage& image = *row.image;
  const bool host = image.host_mount && report.host;
  ordered_json j{{"name", image.name},
                 {"reference", image.reference()},
                 {"source", image.host_mount ? "host_mount" : "offline"},
                 {"toolkit", image.host_mount ? ordered_json(nullptr) : ordered_json(image.toolkit.str())},
                 {"host_toolkit", host ? ordered_json(report.host->toolkit.str()) : ordered_json(nullptr)},
                 {"suite", image.suite},
                 {"components", image.components},
                 {"packages", image.packages},
                 {"summary", image.summary}};
  j["built"] = row.record ? site::image_record_json(*row.record) : ordered_json(nullptr);
  j["in_engine"] =
      row.in_engine
          ? ordered_json{{"id", row.in_engine->id}, {"digests", row.in_engine->digests}, {"size", row.in_engine->size}}
          : ordered_json(nullptr);
  return j;
}

ordered_json official_json(const compat::OfficialImage& image) {
  return {{"toolkit", image.cuda.truncated(2).str()},
          {"reference", image.reference(false)},
          {"cudnn_reference", image.has_cudnn ? ordered_json(image.reference(true)) : ordered_json(nullptr)},
          {"cudnn", image.cudnn_version.empty() ? ordered_json(nullptr) : ordered_json(image.cudnn_version)}};
}

std::string images_json(const app::ImagesReport& report) {
  ordered_json offline = ordered_json::array();
  for (const auto& row : report.offline) offline.push_back(offline_json(report, row));
  ordered_json official = ordered_json::array();
  for (const auto& image : report.official) official.push_back(official_json(image));
  ordered_json root;
  root["engine"] = {
      {"socket", or_null(report.engine.socket)},
      {"reachable", report.engine.reachable},
      {"version", report.engine.reachable ? ordered_json(report.engine.description) : ordered_json(nullptr)},
      {"error", or_null(report.engine.error)}};
  root["state_file"] = report.state_file.string();
  root["offline"] = std::move(offline);
  root["official"] = std::move(official);
  return root.dump(2) + "\n";
}

std::string images_text(const app::ImagesReport& report) {
  Table offline({"NAME", "REFERENCE", "TOOLKIT", "IN ENGINE"});
  for (const auto& row : report.offline)
    offline.add_row({std::string(row.image->name), row.image->reference(), toolkit_cell(*row.image, report.host),
                     engine_cell(report, row)});
  Table official;
  for (const auto& image : report.official) {
    std::string cudnn;
    if (image.has_cudnn)
      cudnn = "cuDNN: " + image.tag(true) +
              (image.cudnn_version.empty() ? "" : " (" + std::string(image.cudnn_version) + ")");
    official.add_row({image.cuda.truncated(2).str(), image.reference(false), std::move(cudnn)});
  }
  const auto& engine = report.engine;
  return "offline images (orchestrate images build NAME; no registry needed)\n" + offline.render(2) +
         "\nofficial images (sites with registry access; images/official/Dockerfile.cuda)\n" + official.render(2) +
         "\nengine: " + (engine.reachable ? engine.description + " at " + engine.socket : engine.error) + "\n";
}

// 5.1 GiB, 730 MiB, 12 KiB: binary units, one decimal below ten.
std::string size_text(std::uintmax_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(unit > 0 && value < 10.0 ? 1 : 0);
  out << value << " " << units[unit];
  return out.str();
}

ordered_json files_json(const std::vector<imaging::CachedFile>& files) {
  ordered_json out = ordered_json::array();
  for (const auto& f : files) out.push_back({{"path", f.path.string()}, {"bytes", f.bytes}});
  return out;
}

// What the build left on disk: the engine's image, and the rootfs files
// kept in the cache folder (and those it removed).
std::string disk_text(const app::ImageBuildResult& r) {
  std::string out = "  engine: " + r.record.reference + ", " + size_text(r.engine_bytes) + "\n";
  if (r.cache.kept.empty()) {
    out += "  kept beside it: nothing (--keep-rootfs keeps the rootfs tar in " + r.cache_dir.string() + ")\n";
  } else {
    std::uintmax_t kept = 0;
    for (const auto& f : r.cache.kept) kept += f.bytes;
    out += "  kept in " + r.cache_dir.string() + " (" + size_text(kept) + "):\n";
    for (const auto& f : r.cache.kept) out += "    " + f.path.filename().string() + " (" + size_text(f.bytes) + ")\n";
  }
  if (!r.cache.removed.empty()) {
    std::uintmax_t removed = 0;
    for (const auto& f : r.cache.removed) removed += f.bytes;
    out += "  removed from " + r.cache_dir.string() + ": " + std::to_string(r.cache.removed.size()) +
           " rootfs file(s), " + size_text(removed) + "\n";
  }
  return out;
}

std::string seconds(double s) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << s;
  return out.str();
}

}  // namespace

std::string render(const app::ImagesReport& report, Format format) {
  return format == Format::json ? images_json(report) : images_text(report);
}

std::string render(const app::ImageBuildResult& r, Format format) {
  if (format == Format::json) {
    ordered_json j;
    j["image"] = {{"name", r.record.name},        {"reference", r.record.reference}, {"id", r.record.id},
                  {"digests", r.record.digests},  {"created", r.record.created},     {"toolkit", r.record.toolkit},
                  {"packages", r.record.packages}};
    j["scripts"] = r.scripts;
    j["rootfs_cached"] = r.rootfs_cached;
    j["imported"] = r.imported;
    j["disk"] = {{"engine_bytes", r.engine_bytes},
                 {"tar_bytes", r.tar_bytes},
                 {"cache_dir", r.cache_dir.string()},
                 {"kept", files_json(r.cache.kept)},
                 {"removed", files_json(r.cache.removed)}};
    const auto ms = [](double s) { return std::round(s * 1000.0) / 1000.0; };
    j["seconds"] = {{"debootstrap", ms(r.debootstrap_s)}, {"setup", ms(r.setup_s)}, {"tar", ms(r.tar_s)},
                    {"import", ms(r.import_s)},           {"nvcc", ms(r.nvcc_s)},   {"total", ms(r.total_s)}};
    return j.dump(2) + "\n";
  }
  std::string out = r.record.reference + "  " + r.record.id + "  nvcc " + r.record.toolkit + "\n";
  out += "  setup scripts: " + r.scripts + "\n";
  if (!r.imported)
    out += "  rootfs: none needed (the engine has this image)\n";
  else if (r.rootfs_cached)
    out += "  rootfs: the kept tar\n";
  else
    out += "  rootfs: debootstrap " + seconds(r.debootstrap_s) + " s, setup " + seconds(r.setup_s) + " s, tar " +
           seconds(r.tar_s) + " s\n";
  if (r.imported) out += "  import: " + size_text(r.tar_bytes) + " in " + seconds(r.import_s) + " s\n";
  out += "  nvcc --version in a container: " + seconds(r.nvcc_s) + " s\n";
  out += disk_text(r);
  out += "  total: " + seconds(r.total_s) + " s\n";
  return out;
}

void emit(Io& io, const app::ImagesReport& report, Format format) {
  io.out << render(report, format);
  io.exit_code = report.exit_code;
}

void emit(Io& io, const app::ImageBuildResult& result, Format format) {
  io.out << render(result, format);
  io.exit_code = result.exit_code;
}

}  // namespace orc::cli
