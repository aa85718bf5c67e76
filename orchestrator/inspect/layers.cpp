#include "orchestrator/inspect/layers.hpp"

#include <algorithm>
#include <limits>

namespace orc::inspect {

namespace {

constexpr std::string_view k_whiteout = ".wh.";
constexpr std::string_view k_opaque = ".wh..wh..opq";

constexpr std::uint8_t k_present = 1;
constexpr std::uint8_t k_directory = 2;

}  // namespace

std::expected<std::string, std::string> LayerMerge::normalize(std::string_view name) {
  std::string out;
  std::size_t at = 0;
  while (at <= name.size()) {
    const auto slash = name.find('/', at);
    const std::string_view part =
        name.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
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

std::optional<LayerMerge::Named> LayerMerge::classify(std::string_view normalized) {
  const auto slash = normalized.rfind('/');
  const std::string_view dir = slash == std::string_view::npos ? std::string_view() : normalized.substr(0, slash);
  const std::string_view base = slash == std::string_view::npos ? normalized : normalized.substr(slash + 1);
  if (base == k_opaque) return Named{.op = Op::opaque, .path = std::string(dir)};
  if (base.starts_with(k_whiteout)) {
    if (base.size() == k_whiteout.size()) return std::nullopt;
    std::string target(dir);
    if (!target.empty()) target += '/';
    target += base.substr(k_whiteout.size());
    return Named{.op = Op::whiteout, .path = std::move(target)};
  }
  return Named{.op = Op::add, .path = std::string(normalized)};
}

LayerMerge::LayerMerge() : m_own(std::make_unique<PathTree>()), m_tree(m_own.get()) {}
LayerMerge::LayerMerge(const PathTree& tree) : m_tree(&tree) {}

std::expected<std::uint32_t, std::string> LayerMerge::tick() {
  if (m_clock == std::numeric_limits<std::uint32_t>::max() - 1)
    return std::unexpected("more than " + std::to_string(m_clock) +
                           " changes in the image's layers: no image this tool reads");
  return ++m_clock;
}

std::expected<void, std::string> LayerMerge::add(const Change& c, std::uint32_t layer) {
  auto now = tick();
  if (!now) return std::unexpected(now.error());
  // A path under a lower non-directory: that entry goes (the file becomes a
  // directory). Nothing under it can be newer than the entry, so deleting
  // it with its tree hides nothing else.
  if (c.node != PathTree::k_root)
    for (PathTree::Id up = m_tree->parent(c.node); up != PathTree::k_root; up = m_tree->parent(up)) {
      Node& a = m_state[up];
      if (a.written != 0 && a.kind != Kind::directory) {
        a.erased = *now;
        a.written = 0;
      }
    }
  Node& n = m_state[c.node];
  if (c.kind != Kind::directory) n.emptied = *now;
  auto written = tick();
  if (!written) return std::unexpected(written.error());
  n.written = *written;
  n.kind = c.kind;
  n.layer = static_cast<std::uint32_t>(layer);
  n.link = c.link;
  return {};
}

std::expected<void, std::string> LayerMerge::apply_at(std::span<const Change> layer, std::size_t index) {
  m_state.resize(m_tree->size());
  m_settled.clear();
  // The lower layers' deletions first: the layer's own entries stay.
  for (const Change& c : layer) {
    if (c.op == Op::add) continue;
    auto now = tick();
    if (!now) return std::unexpected(now.error());
    (c.op == Op::whiteout ? m_state[c.node].erased : m_state[c.node].emptied) = *now;
  }
  for (const Change& c : layer)
    if (c.op == Op::add)
      if (auto added = add(c, index); !added) return added;
  return {};
}

std::expected<void, std::string> LayerMerge::apply(std::span<const Change> layer) {
  ++m_layer;
  return apply_at(layer, m_layer - 1);
}

void LayerMerge::begin_layer() {
  if (m_open) (void)apply_at(m_pending, m_layer - 1);
  m_pending.clear();
  m_open = true;
  ++m_layer;
}

void LayerMerge::finish() {
  if (m_open) (void)apply_at(m_pending, m_layer - 1);
  m_pending.clear();
  m_open = false;
  m_state.resize(m_tree->size());
  // One pass down (parents have smaller ids): the latest deletion above
  // each node; one pass up: the directories that what survived implies.
  const std::size_t n = m_tree->size();
  std::vector<std::uint32_t> above(n, 0);
  m_settled.assign(n, 0);
  for (PathTree::Id id = 1; id < n; ++id) {
    const PathTree::Id p = m_tree->parent(id);
    above[id] = std::max({above[p], m_state[p].erased, m_state[p].emptied});
    const Node& s = m_state[id];
    if (s.written != 0 && s.written > std::max(above[id], s.erased)) {
      m_settled[id] = k_present;
      if (s.kind == Kind::directory) m_settled[id] |= k_directory;
    }
  }
  for (PathTree::Id id = static_cast<PathTree::Id>(n); id-- > 1;)
    if (m_settled[id] != 0) m_settled[m_tree->parent(id)] |= k_directory;
}

std::expected<void, std::string> LayerMerge::entry(std::string_view name, Kind kind, std::string_view link) {
  if (!m_open) begin_layer();
  // The root itself ("./", "/") is in every layer: nothing to record.
  if (name.find_first_not_of("./") == std::string_view::npos) return {};
  auto path = normalize(name);
  if (!path) return std::unexpected("entry '" + std::string(name) + "' " + path.error());
  const std::string* target = nullptr;
  if (kind == Kind::hardlink) {
    auto normalized = normalize(link);
    if (!normalized)
      return std::unexpected("entry '" + std::string(name) + "' links to '" + std::string(link) + "', which " +
                             normalized.error() + ": a link out of the image");
    target = &m_links.emplace_back(std::move(*normalized));
  }
  const auto named = classify(*path);
  if (!named) return {};
  const auto node = m_own->intern(named->path, k_max_paths + 1, std::numeric_limits<std::uint64_t>::max());
  if (!node) return std::unexpected("more than " + std::to_string(k_max_paths) + " paths: no image this tool reads");
  m_pending.push_back(Change{.node = *node, .op = named->op, .kind = kind, .link = target});
  return {};
}

bool LayerMerge::present(PathTree::Id node) const {
  return node < m_settled.size() && (m_settled[node] & k_present) != 0;
}

bool LayerMerge::is_directory(PathTree::Id node) const {
  return node == PathTree::k_root || (node < m_settled.size() && (m_settled[node] & k_directory) != 0);
}

LayerMerge::File LayerMerge::file(PathTree::Id node) const {
  const Node& s = m_state[node];
  return File{.path = m_tree->path(node), .layer = s.layer, .kind = s.kind, .link = s.link ? *s.link : std::string()};
}

std::vector<LayerMerge::File> LayerMerge::files() const {
  std::vector<File> out;
  for (PathTree::Id id = 1; id < m_settled.size(); ++id)
    if (present(id) && (m_state[id].kind == Kind::file || m_state[id].kind == Kind::hardlink)) out.push_back(file(id));
  std::sort(out.begin(), out.end(), [](const File& a, const File& b) { return a.path < b.path; });
  return out;
}

std::vector<LayerMerge::File> LayerMerge::entries() const {
  std::vector<File> out;
  for (PathTree::Id id = 1; id < m_settled.size(); ++id)
    if (present(id) && m_state[id].kind != Kind::directory) out.push_back(file(id));
  std::sort(out.begin(), out.end(), [](const File& a, const File& b) { return a.path < b.path; });
  return out;
}

bool LayerMerge::survives(PathTree::Id node, std::size_t layer) const {
  return present(node) && m_state[node].layer == layer;
}

bool LayerMerge::survives(std::string_view path, std::size_t layer) const {
  const auto node = m_tree->find(path);
  return node && survives(*node, layer);
}

}  // namespace orc::inspect
