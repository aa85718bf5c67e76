#include "orchestrator/inspect/layers.hpp"

namespace orc::inspect {

namespace {

constexpr std::string_view k_whiteout = ".wh.";
constexpr std::string_view k_opaque = ".wh..wh..opq";

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

std::expected<std::string, std::string> LayerMerge::normalize(std::string_view name) {
  std::string out;
  std::size_t at = 0;
  while (at <= name.size()) {
    const auto slash = name.find('/', at);
    const std::string_view part = name.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
    if (part == "..") return std::unexpected("has a '..' component");
    if (!part.empty() && part != ".") {
      if (!out.empty()) out += '/';
      out += part;
    }
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  if (out.empty()) return std::unexpected("names the root or nothing");
  return out;
}

void LayerMerge::begin_layer() {
  if (m_open) apply();
  m_open = true;
  ++m_layer;
}

void LayerMerge::finish() {
  if (m_open) apply();
  m_open = false;
}

std::expected<void, std::string> LayerMerge::entry(std::string_view name, Kind kind, std::string_view link) {
  if (!m_open) begin_layer();
  // The root itself ("./", "/") is in every layer: nothing to record.
  if (name.find_first_not_of("./") == std::string_view::npos) return {};
  auto path = normalize(name);
  if (!path) return std::unexpected("entry '" + std::string(name) + "' " + path.error());
  const std::string dir = parent_of(*path);
  const std::string base = path->substr(dir.empty() ? 0 : dir.size() + 1);
  if (base == k_opaque) {
    m_opaque.insert(dir);
    return {};
  }
  if (base.starts_with(k_whiteout)) {
    const std::string target = (dir.empty() ? "" : dir + "/") + base.substr(k_whiteout.size());
    m_whiteouts.insert(target);
    return {};
  }
  Node node{.layer = m_layer - 1, .kind = kind, .link = {}};
  if (kind == Kind::hardlink) {
    auto target = normalize(link);
    if (!target) return std::unexpected("entry '" + std::string(name) + "' links to '" + std::string(link) + "', which " +
                                        target.error() + ": a link out of the image");
    node.link = std::move(*target);
  }
  if (m_state.size() + m_added.size() >= k_max_paths)
    return std::unexpected("more than " + std::to_string(k_max_paths) + " paths: no image this tool reads");
  m_added.insert_or_assign(std::move(*path), std::move(node));
  return {};
}

void LayerMerge::erase_tree(const std::string& dir) {
  const std::string prefix = dir + "/";
  for (auto it = m_state.lower_bound(prefix); it != m_state.end() && it->first.starts_with(prefix);)
    it = m_state.erase(it);
}

void LayerMerge::apply() {
  // The lower layers' deletions first: the layer's own entries stay.
  for (const auto& w : m_whiteouts) {
    m_state.erase(w);
    erase_tree(w);
  }
  for (const auto& d : m_opaque) erase_tree(d);
  for (auto& [path, node] : m_added) {
    // A path under a lower non-directory: that file becomes a directory.
    for (std::string up = parent_of(path); !up.empty(); up = parent_of(up)) {
      const auto it = m_state.find(up);
      if (it != m_state.end() && it->second.kind != Kind::directory) m_state.erase(it);
    }
    if (node.kind != Kind::directory) erase_tree(path);
    m_state.insert_or_assign(path, std::move(node));
  }
  m_added.clear();
  m_whiteouts.clear();
  m_opaque.clear();
}

std::vector<LayerMerge::File> LayerMerge::files() const {
  std::vector<File> out;
  for (const auto& [path, node] : m_state)
    if (node.kind == Kind::file || node.kind == Kind::hardlink)
      out.push_back({.path = path, .layer = node.layer, .kind = node.kind, .link = node.link});
  return out;
}

std::vector<LayerMerge::File> LayerMerge::entries() const {
  std::vector<File> out;
  for (const auto& [path, node] : m_state)
    if (node.kind != Kind::directory) out.push_back({.path = path, .layer = node.layer, .kind = node.kind, .link = node.link});
  return out;
}

bool LayerMerge::survives(std::string_view path, std::size_t layer) const {
  const auto it = m_state.find(path);
  return it != m_state.end() && it->second.layer == layer;
}

}  // namespace orc::inspect
