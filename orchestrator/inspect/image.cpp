#include "orchestrator/inspect/image.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "orchestrator/inspect/bom.hpp"
#include "orchestrator/inspect/fatbin.hpp"
#include "orchestrator/inspect/layers.hpp"
#include "orchestrator/inspect/needs.hpp"
#include "orchestrator/inspect/root_walk.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::inspect {

namespace {

// An image archive's JSON files (manifest.json, index.json, configs) are
// small; a larger non-layer entry is skipped. They are kept until
// manifest.json (written last) names the config: at most this in all.
constexpr std::uint64_t k_max_json = 8ull << 20;
constexpr std::uint64_t k_max_archive_json = 32ull << 20;
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

// A name as an error shows it: quoted, escaped, and a long one cut, with
// its length said (a hostile layer's names run to 60 KB each).
std::string shown(std::string_view name) {
  constexpr std::size_t k_shown = 160;
  if (name.size() <= k_shown) return "'" + util::printable(name) + "'";
  return "'" + util::printable(name.substr(0, k_shown)) + "...' (" + std::to_string(name.size()) + " bytes)";
}

std::string too_many_kept(const std::string& where, std::string_view path) {
  return where + ": entry " + shown(path) + ": the paths of the files the scan keeps pass " +
         std::to_string(ImageScanner::k_max_kept_bytes) + " bytes: no image this tool reads; refused";
}

// What a kept report costs besides its path: the report itself, roughly.
constexpr std::uint64_t k_report_cost = 512;

}  // namespace

struct ImageScanner::Layer {
  std::vector<LayerMerge::Change> changes;  // in the layer's order
  std::deque<std::string> links;            // the targets `changes` point at
  std::map<PathTree::Id, FileReport> reports;
  std::map<PathTree::Id, BomEvidence> evidence;
  std::uint64_t bytes = 0;
};

ImageScanner::ImageScanner(InspectOptions options) : m_options(options) {}
ImageScanner::~ImageScanner() = default;

std::optional<std::string> ImageScanner::record(Layer& layer, const std::string& where, const EntryInfo& e,
                                                Current& current) {
  auto path = LayerMerge::normalize(e.path);
  if (!path) return where + ": entry " + shown(e.path) + " " + path.error() + "; the layer is refused";
  std::string link;
  if (e.kind == TarKind::hardlink) {
    auto target = LayerMerge::normalize(e.link);
    if (!target)
      return where + ": entry " + shown(e.path) + " is a hard link to " + shown(e.link) + ", which " + target.error() +
             ": a link out of the image; the layer is refused";
    link = std::move(*target);
  } else if (e.kind == TarKind::symlink) {
    link = std::string(e.link);
  }
  if (e.kind == TarKind::file && e.size > k_max_member_size)
    return where + ": entry " + shown(e.path) + " declares " + std::to_string(e.size) + " bytes, over the " +
           std::to_string(k_max_member_size) + "-byte limit for one file; the layer is refused";
  if (m_entries.fetch_add(1) + 1 > LayerMerge::k_max_entries)
    return where + ": more than " + std::to_string(LayerMerge::k_max_entries) +
           " entries in the image's layers: no image this tool reads; refused";
  const auto named = LayerMerge::classify(*path);
  if (!named) return std::nullopt;
  PathTree::Id node;
  {
    const std::lock_guard lock(m_mutex);
    const std::uint64_t links = m_link_bytes + link.size();
    const auto interned = m_tree.intern(named->path, LayerMerge::k_max_paths + 1,
                                        links > k_max_name_bytes ? 0 : k_max_name_bytes - links);
    if (!interned && interned.error() == PathTree::Full::nodes)
      return where + ": entry " + shown(e.path) + ": more than " + std::to_string(LayerMerge::k_max_paths) +
             " paths in the image's layers: no image this tool reads; refused";
    if (!interned)
      return where + ": entry " + shown(e.path) + ": the names of the image's entries pass " +
             std::to_string(k_max_name_bytes) + " bytes: no image this tool reads; refused";
    m_link_bytes = links;
    node = *interned;
  }
  const std::string* target = link.empty() ? nullptr : &layer.links.emplace_back(std::move(link));
  layer.changes.push_back(
      LayerMerge::Change{.node = node, .op = named->op, .kind = merge_kind(e.kind), .link = target});
  if (named->op == LayerMerge::Op::add && e.kind == TarKind::file) {
    current.node = node;
    current.text = bom_text(*path);
    current.path = "/" + std::move(*path);
  }
  return std::nullopt;
}

bool ImageScanner::keep(std::uint64_t bytes) { return m_kept.fetch_add(bytes) + bytes <= k_max_kept_bytes; }

std::expected<void, ImageError> ImageScanner::add_layer(const std::string& id, const StreamRead& read) {
  if (m_started.fetch_add(1) + 1 > k_max_layers)
    return std::unexpected(ImageError{
        .message = "more than " + std::to_string(k_max_layers) + " layers: no image this tool reads; refused",
        .refused = true});
  auto layer = std::make_unique<Layer>();
  const std::string where = "layer " + util::printable(id);
  Current current;  // the entry being read
  // What a visit refused (the paths kept passing their cap): the walk stops
  // at the next entry.
  std::optional<std::string> refusal;
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
    current = Current{};
    if (refusal) return refusal;
    if (is_root(e.path)) return std::nullopt;
    return record(*layer, where, e, current);
  };
  const MemberFilter filter = [&](Bytes head) {
    if (current.text) return MemberUse::stream;
    if (runnable_code(head)) return MemberUse::read;
    return MemberUse::skip;
  };
  const MemberVisitor visit = [&](std::string_view, std::expected<PackageMember, Damage> member) {
    if (!current.node || refusal) return;
    if (current.text) {
      if (!member || !member->stream) return;
      BomEvidence evidence =
          m_texts.read(current.path.substr(1), member->size, *member->stream, shown(current.path) + " in " + where);
      if (evidence.empty()) return;
      if (!keep(current.path.size())) {
        refusal = too_many_kept(where, current.path);
        return;
      }
      layer->evidence.insert_or_assign(*current.node, std::move(evidence));
      return;
    }
    FileReport report;
    report.path = current.path;
    if (!member) {
      report.format = "other";
      report.damage = std::move(member.error());
    } else {
      report.size = member->size;
      report.sha256 = std::move(member->sha256);
      if (member->bytes) scan_bytes(report, *member->bytes, m_options);
      if (!report.device_code() && !report.runtime && !report.damage && !links_cuda_libraries(report)) return;
    }
    if (!keep(report.path.size() + k_report_cost)) {
      refusal = too_many_kept(where, current.path);
      return;
    }
    layer->reports.insert_or_assign(*current.node, std::move(report));
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
  if (refusal && !walk.damage) return std::unexpected(ImageError{.message = *refusal, .refused = true});
  // What follows the tar's end blocks (its padding) is the layer's too: read
  // to the end, so the whole blob streams past its digest check.
  if (!walk.damage) {
    std::vector<std::byte> rest(1 << 16);
    for (;;) {
      auto n = source(rest);
      if (!n)
        return std::unexpected(ImageError{
            .message = where + " could not be read to its end: " + util::printable(n.error()), .refused = false});
      if (*n == 0) break;
    }
  }
  const bool empty_layer = only_zeros && layer->changes.empty() && layer->bytes >= 1024 && layer->bytes <= 10240;
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
  LayerMerge merge(m_tree);
  std::vector<Layer*> layers;
  std::uint64_t applied = 0;
  for (const auto& id : order) {
    const auto it = m_layers.find(id);
    if (it == m_layers.end())
      return std::unexpected(ImageError{
          .message = "the image names layer " + util::printable(id) + ", which was not read", .refused = true});
    layers.push_back(it->second.get());
    // A layer listed again is applied again: bounded over the whole order.
    applied += it->second->changes.size();
    if (applied > LayerMerge::k_max_entries)
      return std::unexpected(ImageError{.message = "the image's layers, as its manifest lists them, apply more than " +
                                                   std::to_string(LayerMerge::k_max_entries) +
                                                   " entries: no image this tool reads; refused",
                                        .refused = true});
    if (auto ok = merge.apply(it->second->changes); !ok)
      return std::unexpected(
          ImageError{.message = "layer " + util::printable(id) + ": " + ok.error(), .refused = true});
  }
  merge.finish();
  ImageContent content;
  content.layers = order.size();
  std::set<const Layer*> seen;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Layer& layer = *layers[i];
    // A repeated layer's bytes streamed once.
    const bool again = !seen.insert(&layer).second;
    if (!again) content.layer_bytes += layer.bytes;
    for (auto& [node, report] : layer.reports) {
      if (merge.survives(node, i))
        content.files.push_back(std::move(report));
      else if (report.device_code() && !again)
        content.hidden.push_back(report.path + " (layer " + std::to_string(i + 1) + ")");
    }
    for (auto& [node, evidence] : layer.evidence)
      if (merge.survives(node, i)) content.evidence["/" + m_tree.path(node)] = std::move(evidence);
  }
  // A path deleted by a later occurrence of a repeated layer is hidden
  // twice over; keep one line each.
  std::sort(content.hidden.begin(), content.hidden.end());
  content.hidden.erase(std::unique(content.hidden.begin(), content.hidden.end()), content.hidden.end());
  const RootLookup lookup = [&](std::string_view path) {
    const auto node = m_tree.find(path);
    if (!node || (!merge.present(*node) && !merge.is_directory(*node))) return RootEntry{};
    if (merge.is_directory(*node)) return RootEntry{.type = RootEntry::Type::directory, .target = {}};
    switch (merge.kind(*node)) {
      case LayerMerge::Kind::file:
      case LayerMerge::Kind::hardlink:
        return RootEntry{.type = RootEntry::Type::file, .target = {}};
      case LayerMerge::Kind::symlink:
        return RootEntry{.type = RootEntry::Type::symlink, .target = *merge.link(*node)};
      default:
        return RootEntry{};
    }
  };
  for (PathTree::Id node = 1; node < m_tree.size(); ++node) {
    if (!merge.present(node) || merge.is_directory(node) || merge.kind(node) == LayerMerge::Kind::other) continue;
    // The name decides: only the paths whose names are read are built.
    const std::string_view parent = m_tree.name(m_tree.parent(node));
    if (!parent.ends_with(".dist-info") && !bom_path(m_tree.name(node))) continue;
    std::string path = "/" + m_tree.path(node);
    if (!keep(path.size() + (merge.link(node) ? merge.link(node)->size() : 0)))
      return std::unexpected(ImageError{
          .message = too_many_kept("layer " + std::to_string(merge.layer(node) + 1), path), .refused = true});
    if (merge.kind(node) == LayerMerge::Kind::symlink) {
      const std::string& target = *merge.link(node);
      content.links[path] = target;
      if (!resolve_in_root(path, lookup)) content.dangling[path] = target;
    }
    content.paths.push_back(std::move(path));
  }
  std::sort(content.paths.begin(), content.paths.end());
  std::sort(content.files.begin(), content.files.end(),
            [](const FileReport& a, const FileReport& b) { return a.path < b.path; });
  content.unread = m_texts.unread();
  return content;
}

std::expected<ImageArchive, ImageError> scan_image_archive(const StreamRead& read, const InspectOptions& options) {
  ImageScanner scanner(options);
  std::map<std::string, std::string> json;  // small entries, by path
  std::uint64_t json_bytes = 0;
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
    if (!member->bytes) return;
    json_bytes += member->bytes->size();
    if (json_bytes > k_max_archive_json) {
      failed = ImageError{.message = "the image archive holds more than " + std::to_string(k_max_archive_json) +
                                     " bytes of JSON files (at " + shown(current) +
                                     "): not an image `docker save` wrote; refused",
                          .refused = true};
      return;
    }
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
    return std::unexpected(ImageError{
        .message = "the image archive has no manifest.json: not an image `docker save` wrote", .refused = true});
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
    return std::unexpected(ImageError{
        .message = "the image archive's manifest.json is malformed: " + util::printable(e.what()), .refused = true});
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
