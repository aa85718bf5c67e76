#include "orchestrator/inspect/image.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/layers.hpp"
#include "orchestrator/inspect/needs.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::inspect {

namespace {

// A bill-of-materials text over this is not one: dpkg's status of a large
// image is a few MiB.
constexpr std::uint64_t k_max_text = 32ull << 20;
// An image archive's JSON files (manifest.json, index.json, configs) are
// small; a larger non-layer entry is skipped.
constexpr std::uint64_t k_max_json = 8ull << 20;
constexpr std::uint64_t k_layer_member_in_memory = 1ull << 30;

bool starts_with(Bytes data, std::initializer_list<unsigned char> magic) {
  if (data.size() < magic.size()) return false;
  std::size_t i = 0;
  for (unsigned char m : magic)
    if (data[i++] != std::byte{m}) return false;
  return true;
}

// What the image runs: ELF files and standalone fatbins.
bool runnable_code(Bytes head) {
  return starts_with(head, {0x7f, 'E', 'L', 'F'}) || read_le<std::uint32_t>(head, 0) == k_fatbin_magic;
}

LayerMerge::Kind merge_kind(TarKind kind) {
  switch (kind) {
    case TarKind::file:
      return LayerMerge::Kind::file;
    case TarKind::directory:
      return LayerMerge::Kind::directory;
    case TarKind::symlink:
      return LayerMerge::Kind::symlink;
    case TarKind::hardlink:
      return LayerMerge::Kind::hardlink;
    case TarKind::other:
      break;
  }
  return LayerMerge::Kind::other;
}

bool is_root(std::string_view name) { return name.find_first_not_of("./") == std::string_view::npos; }

std::string quoted(std::string_view text) { return "'" + util::printable(text) + "'"; }

}  // namespace

bool bom_text(std::string_view path) {
  if (path == "var/lib/dpkg/status") return true;
  // Distroless images keep one status file per package.
  if (path.starts_with("var/lib/dpkg/status.d/") && path.find('/', 22) == std::string_view::npos) return true;
  // CUDA's redistributable layout: /usr/local/cuda-12.4/version.json.
  if (path.starts_with("usr/local/cuda") && path.ends_with("/version.json") &&
      std::count(path.begin(), path.end(), '/') == 3)
    return true;
  return false;
}

struct ImageScanner::Layer {
  struct Recorded {
    std::string path;  // normalized
    LayerMerge::Kind kind;
    std::string link;
  };
  std::vector<Recorded> entries;
  std::map<std::string, FileReport> reports;  // by normalized path
  std::map<std::string, std::string> texts;
  std::uint64_t bytes = 0;
};

ImageScanner::ImageScanner(InspectOptions options) : m_options(options) {}
ImageScanner::~ImageScanner() = default;

std::expected<void, ImageError> ImageScanner::add_layer(const std::string& id, const StreamRead& read) {
  auto layer = std::make_unique<Layer>();
  const std::string where = "layer " + util::printable(id);
  std::string current;  // the entry being read, normalized
  bool current_text = false;
  // Docker writes a layer that changes nothing as 1024 zero bytes (two end
  // blocks and no entry), which libarchive does not take for a tar.
  bool only_zeros = true;
  const auto counted = [&](const StreamRead& source) {
    return StreamRead([&, source](std::span<std::byte> out) -> std::expected<std::size_t, std::string> {
      auto n = source(out);
      if (!n) return n;
      layer->bytes += *n;
      if (only_zeros)
        only_zeros = std::all_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*n),
                                 [](std::byte b) { return b == std::byte{0}; });
      return n;
    });
  };
  const EntryObserver observe = [&](const EntryInfo& e) -> std::optional<std::string> {
    current.clear();
    current_text = false;
    if (is_root(e.path)) return std::nullopt;
    auto path = LayerMerge::normalize(e.path);
    if (!path) return where + ": entry " + quoted(e.path) + " " + path.error() + "; the layer is refused";
    Layer::Recorded rec{.path = *path, .kind = merge_kind(e.kind), .link = {}};
    if (e.kind == TarKind::hardlink) {
      auto target = LayerMerge::normalize(e.link);
      if (!target)
        return where + ": entry " + quoted(e.path) + " is a hard link to " + quoted(e.link) + ", which " +
               target.error() + ": a link out of the image; the layer is refused";
      rec.link = std::move(*target);
    } else if (e.kind == TarKind::symlink) {
      rec.link = std::string(e.link);
    }
    if (e.kind == TarKind::file && e.size > k_max_member_size)
      return where + ": entry " + quoted(e.path) + " declares " + std::to_string(e.size) + " bytes, over the " +
             std::to_string(k_max_member_size) + "-byte limit for one file; the layer is refused";
    if (m_paths.fetch_add(1) + 1 > LayerMerge::k_max_paths)
      return where + ": more than " + std::to_string(LayerMerge::k_max_paths) +
             " entries in the image's layers: no image this tool reads; refused";
    current = rec.path;
    current_text = e.kind == TarKind::file && e.size <= k_max_text && bom_text(current);
    layer->entries.push_back(std::move(rec));
    return std::nullopt;
  };
  const MemberFilter filter = [&](Bytes head) {
    if (current_text || runnable_code(head)) return MemberUse::read;
    return MemberUse::skip;
  };
  const MemberVisitor visit = [&](std::string_view, std::expected<PackageMember, Damage> member) {
    if (current.empty()) return;
    if (current_text && member && member->bytes) {
      const Bytes b = *member->bytes;
      layer->texts[current] = std::string(reinterpret_cast<const char*>(b.data()), b.size());
      return;
    }
    FileReport report;
    report.path = "/" + current;
    if (!member) {
      report.format = "other";
      report.damage = std::move(member.error());
    } else {
      report.size = member->size;
      report.sha256 = std::move(member->sha256);
      if (member->bytes) scan_bytes(report, *member->bytes, m_options);
      if (!report.device_code() && !report.runtime && !report.damage && !links_cuda_libraries(report)) return;
    }
    layer->reports.insert_or_assign(current, std::move(report));
  };
  // The layer's digest is checked as it streams: a member's own hash adds
  // nothing the report uses. Members are held in memory up to 1 GiB (an
  // image's libraries are read one at a time, and a spill to disk costs
  // more than the scan).
  PackageLimits limits;
  limits.hash = false;
  limits.in_memory = k_layer_member_in_memory;
  const StreamRead source = counted(read);
  const PackageWalk walk = walk_tar_stream(source, filter, visit, observe, limits);
  // What follows the tar's end blocks (its padding) is the layer's too: read
  // to the end, so the whole blob streams past its digest check.
  if (!walk.damage) {
    std::vector<std::byte> rest(1 << 16);
    for (;;) {
      auto n = source(rest);
      if (!n)
        return std::unexpected(ImageError{.message = where + " could not be read to its end: " + util::printable(n.error()),
                                          .refused = false});
      if (*n == 0) break;
    }
  }
  const bool empty_layer = only_zeros && layer->entries.empty() && layer->bytes >= 1024 && layer->bytes <= 10240;
  if (walk.damage && !empty_layer) {
    std::string message = walk.refused ? walk.damage->what
                                       : where + " is damaged at byte " + std::to_string(walk.damage->offset) + ": " +
                                             util::printable(walk.damage->what);
    return std::unexpected(ImageError{.message = std::move(message), .refused = walk.refused});
  }
  const std::lock_guard lock(m_mutex);
  m_layers[id] = std::move(layer);
  return {};
}

std::expected<ImageContent, ImageError> ImageScanner::finish(const std::vector<std::string>& order) {
  LayerMerge merge;
  std::vector<const Layer*> layers;
  for (const auto& id : order) {
    const auto it = m_layers.find(id);
    if (it == m_layers.end())
      return std::unexpected(ImageError{
          .message = "the image names layer " + util::printable(id) + ", which was not read", .refused = true});
    layers.push_back(it->second.get());
    merge.begin_layer();
    for (const auto& e : it->second->entries)
      if (auto ok = merge.entry(e.path, e.kind, e.link); !ok)
        return std::unexpected(ImageError{.message = "layer " + util::printable(id) + ": " + ok.error(), .refused = true});
  }
  merge.finish();
  ImageContent content;
  content.layers = order.size();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& layer = *layers[i];
    // A repeated layer's bytes streamed once.
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen = seen || layers[j] == layers[i];
    if (!seen) content.layer_bytes += layer.bytes;
    for (const auto& [path, report] : layer.reports) {
      if (merge.survives(path, i))
        content.files.push_back(report);
      else if (report.device_code() && !seen)
        content.hidden.push_back(report.path + " (layer " + std::to_string(i + 1) + ")");
    }
    for (const auto& [path, text] : layer.texts)
      if (merge.survives(path, i)) content.texts["/" + path] = text;
  }
  // A path deleted by a later occurrence of a repeated layer is hidden
  // twice over; keep one line each.
  std::sort(content.hidden.begin(), content.hidden.end());
  content.hidden.erase(std::unique(content.hidden.begin(), content.hidden.end()), content.hidden.end());
  for (const auto& e : merge.entries()) {
    content.paths.push_back("/" + e.path);
    if (e.kind != LayerMerge::Kind::symlink) continue;
    for (const auto& r : layers[e.layer]->entries)
      if (r.path == e.path && r.kind == LayerMerge::Kind::symlink) content.links["/" + e.path] = r.link;
  }
  std::sort(content.files.begin(), content.files.end(),
            [](const FileReport& a, const FileReport& b) { return a.path < b.path; });
  return content;
}

std::expected<ImageArchive, ImageError> scan_image_archive(const StreamRead& read, const InspectOptions& options) {
  ImageScanner scanner(options);
  std::map<std::string, std::string> json;  // small entries, by path
  std::string current;
  std::uint64_t current_size = 0;
  std::optional<ImageError> failed;
  const EntryObserver observe = [&](const EntryInfo& e) -> std::optional<std::string> {
    if (failed) return failed->message;
    auto path = LayerMerge::normalize(e.path);
    current = path ? *path : std::string();
    current_size = e.size;
    return std::nullopt;
  };
  const MemberFilter filter = [&](Bytes head) {
    if (current.empty() || failed) return MemberUse::skip;
    if (package_kind(head) && !starts_with(head, {'P', 'K'})) return MemberUse::stream;
    if (current_size <= k_max_json && starts_with(head, {'{'})) return MemberUse::read;
    if (current_size <= k_max_json && starts_with(head, {'['})) return MemberUse::read;
    return MemberUse::skip;
  };
  const MemberVisitor visit = [&](std::string_view, std::expected<PackageMember, Damage> member) {
    if (!member || failed) return;
    if (member->stream) {
      if (auto added = scanner.add_layer(current, *member->stream); !added) failed = std::move(added.error());
      return;
    }
    if (member->bytes)
      json[current] = std::string(reinterpret_cast<const char*>(member->bytes->data()), member->bytes->size());
  };
  PackageLimits limits;
  limits.max_member = std::numeric_limits<std::uint64_t>::max();  // a layer may be any size
  const PackageWalk walk = walk_tar_stream(read, filter, visit, observe, limits);
  if (failed) return std::unexpected(std::move(*failed));
  if (walk.damage)
    return std::unexpected(ImageError{.message = "the image archive is damaged at byte " +
                                                 std::to_string(walk.damage->offset) + ": " +
                                                 util::printable(walk.damage->what),
                                      .refused = walk.refused});

  const auto manifest_text = json.find("manifest.json");
  if (manifest_text == json.end())
    return std::unexpected(
        ImageError{.message = "the image archive has no manifest.json: not an image `docker save` wrote", .refused = true});
  std::vector<std::string> order;
  std::string config_path;
  try {
    const auto manifest = nlohmann::json::parse(manifest_text->second);
    if (!manifest.is_array() || manifest.empty()) throw std::runtime_error("manifest.json lists no image");
    const auto& image = manifest.front();
    config_path = image.at("Config").get<std::string>();
    for (const auto& l : image.at("Layers")) {
      auto p = LayerMerge::normalize(l.get<std::string>());
      if (!p) throw std::runtime_error("a layer path " + p.error());
      order.push_back(*p);
    }
  } catch (const std::exception& e) {
    return std::unexpected(
        ImageError{.message = "the image archive's manifest.json is malformed: " + util::printable(e.what()), .refused = true});
  }
  auto content = scanner.finish(order);
  if (!content) return std::unexpected(std::move(content.error()));
  ImageArchive archive{.content = std::move(*content), .config = {}};
  if (auto p = LayerMerge::normalize(config_path); p) {
    if (const auto it = json.find(*p); it != json.end()) archive.config = it->second;
  }
  return archive;
}

}  // namespace orc::inspect
