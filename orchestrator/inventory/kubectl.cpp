// `kubectl get nodes -o json` read as a stream (issue 28): a SAX handler
// keeps each node's name and its GFD labels and nothing else, so a List of
// thousands of nodes, their images and managed fields, is never held as a
// JSON tree; each string or number token is bounded while it is read.
#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/inventory/parse_common.hpp"
#include "orchestrator/inventory/reader.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inventory {

namespace {

using detail::InputReader;
using util::Diagnostic;
using Json = nlohmann::json;

// The reader's bytes as nlohmann's input iterator. It also bounds tokens:
// a string, number or word longer than the line limit ends the input with
// an error, before nlohmann's lexer buffers it.
class JsonFeed {
 public:
  explicit JsonFeed(InputReader& in) : m_in(in) {}
  bool at_end() {
    if (m_next == k_unread) advance();
    return m_next < 0;
  }
  char current() {
    at_end();
    return static_cast<char>(m_next);
  }
  void advance() {
    m_next = m_in.get();
    if (m_next < 0) return;
    const char c = static_cast<char>(m_next);
    if (m_in_string) {
      if (m_escaped)
        m_escaped = false;
      else if (c == '\\')
        m_escaped = true;
      else if (c == '"')
        m_in_string = false;
    } else if (c == '"') {
      m_in_string = true;
      m_run = 0;
    } else if (std::string_view("{}[],: \t\r\n").find(c) != std::string_view::npos) {
      m_run = 0;
    }
    if (++m_run > m_in.input().limits.line_bytes) {
      m_in.fail("a JSON string or value longer than " + util::human_size(m_in.input().limits.line_bytes) +
                ": no name or label of `kubectl get nodes -o json` is");
      m_next = -1;
    }
  }

 private:
  static constexpr int k_unread = -2;
  InputReader& m_in;
  int m_next = k_unread;
  bool m_in_string = false;
  bool m_escaped = false;
  std::size_t m_run = 0;
};

struct FeedIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  JsonFeed* feed = nullptr;  // null: the end
  char operator*() const { return feed->current(); }
  FeedIterator& operator++() {
    feed->current();  // the byte handed out is consumed now, not before
    feed->advance();
    return *this;
  }
  FeedIterator operator++(int) {
    FeedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const FeedIterator& other) const { return done() == other.done(); }
  bool done() const { return !feed || feed->at_end(); }
};

// What the handler is inside: only the few places that hold what is read.
enum class Role : unsigned char { other, root, items, item, metadata, labels };

// Where each value of interest is, by the role of its container and its key:
//   {"kind": K, "items": [{"kind": K, "metadata": {"name": N, "labels": {...}}}, ...]}
//   or one Node: {"kind": "Node", "metadata": {...}}
class NodesHandler final : public nlohmann::json_sax<Json> {
 public:
  NodesHandler(Inventory& out, const InputSpec& input) : m_out(out), m_input(input) {}

  bool null() override { return scalar({}); }
  bool boolean(bool) override { return scalar({}); }
  bool number_integer(number_integer_t) override { return scalar({}); }
  bool number_unsigned(number_unsigned_t) override { return scalar({}); }
  bool number_float(number_float_t, const string_t&) override { return scalar({}); }
  bool string(string_t& value) override { return scalar(value, true); }
  bool binary(binary_t&) override { return scalar({}); }
  bool key(string_t& name) override {
    m_key = name;
    return true;
  }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    m_error = "not valid JSON (" + what + ")";
    return false;
  }

  // The problem that stopped the parse, if it was ours.
  const std::string& error() const { return m_error; }
  bool root_object() const { return m_root_object; }
  bool has_items() const { return m_has_items; }
  const std::string& root_kind() const { return m_root_kind; }
  bool slurm_nodes() const { return m_slurm_nodes; }
  const std::string& other_item_kind() const { return m_other_item_kind; }
  // A single Node document: its metadata, kept until the kind is known.
  bool finish_single() {
    if (m_root_kind != "Node") return true;
    return add(m_root_node);
  }

 private:
  struct Read {
    std::string name;
    std::string kind;
    std::map<std::string, std::string> labels;
  };

  Role parent() const { return m_roles.empty() ? Role::other : m_roles.back(); }

  bool open(bool object) {
    Role role = Role::other;
    const Role up = m_depth == m_roles.size() ? parent() : Role::other;
    if (m_depth == 0) {
      role = object ? Role::root : Role::other;
      m_root_object = object;
    } else if (up == Role::root && m_key == "items" && !object) {
      role = Role::items;
      m_has_items = true;
    } else if (up == Role::items && object) {
      role = Role::item;
      m_item = Read{};
    } else if ((up == Role::item || up == Role::root) && m_key == "metadata" && object) {
      role = Role::metadata;
    } else if (up == Role::metadata && m_key == "labels" && object) {
      role = Role::labels;
    }
    if (m_depth == 1 && up == Role::root && m_key == "nodes" && !object) m_slurm_nodes = true;
    // Only the shallow levels can hold what is read; deeper ones are counted.
    if (m_depth == m_roles.size() && m_roles.size() < k_tracked) m_roles.push_back(role);
    ++m_depth;
    m_key.clear();
    return true;
  }

  bool close() {
    --m_depth;
    if (m_depth < m_roles.size()) {
      const Role role = m_roles.back();
      m_roles.pop_back();
      if (role == Role::item) return add(m_item);
    }
    return true;
  }

  bool scalar(std::string_view value, bool is_string = false) {
    if (m_depth != m_roles.size()) return true;
    const Role up = parent();
    if (is_string && up == Role::root && m_key == "kind") m_root_kind = value;
    if (is_string && up == Role::item && m_key == "kind") m_item.kind = value;
    if (is_string && up == Role::metadata && m_key == "name") current_read().name = value;
    if (is_string && up == Role::labels &&
        std::ranges::find(k_gfd_labels, std::string_view(m_key)) != std::end(k_gfd_labels))
      current_read().labels[m_key] = value;
    return true;
  }

  // metadata sits at depth 2 in a single Node, at depth 4 in an item.
  Read& current_read() { return m_roles.size() >= 3 && m_roles[2] == Role::item ? m_item : m_root_node; }

  bool add(const Read& read);

  static constexpr std::size_t k_tracked = 6;
  Inventory& m_out;
  const InputSpec& m_input;
  std::vector<Role> m_roles;
  std::size_t m_depth = 0;
  std::string m_key;
  Read m_item;
  Read m_root_node;
  std::string m_root_kind;
  std::string m_other_item_kind;
  std::string m_error;
  bool m_root_object = false;
  bool m_has_items = false;
  bool m_slurm_nodes = false;
};

bool NodesHandler::add(const Read& read) {
  if (!read.kind.empty() && read.kind != "Node" && m_other_item_kind.empty()) m_other_item_kind = read.kind;
  const auto label = [&](const std::string& key) -> std::string {
    const auto it = read.labels.find(key);
    return it == read.labels.end() ? std::string() : it->second;
  };
  if (read.name.empty() || label("nvidia.com/gpu.product").empty()) return true;
  std::optional<arch::ComputeCapability> cc;
  if (!label("nvidia.com/gpu.compute.major").empty())
    cc = detail::reported_cc(label("nvidia.com/gpu.compute.major") + "." + label("nvidia.com/gpu.compute.minor"));
  unsigned count = 1;
  if (const std::string c = label("nvidia.com/gpu.count");
      !c.empty() && c.size() < 6 && std::ranges::all_of(c, ::isdigit))
    count = static_cast<unsigned>(std::stoul(c));
  detail::NodeEdit edit(m_out, read.name, Source::kubernetes, m_input.file);
  Node& n = edit.node();
  if (std::string problem =
          detail::add_gpu(n, detail::make_gpu(label("nvidia.com/gpu.product"), cc, "GFD labels", count));
      !problem.empty()) {
    m_error = std::move(problem);
    return false;
  }
  // GFD 0.15 and later: cuda.driver-version.full; before: major, minor, rev.
  const std::string full = label("nvidia.com/cuda.driver-version.full");
  const std::string major = label("nvidia.com/cuda.driver.major");
  if (!full.empty()) {
    if (auto d = util::Version::parse(full)) n.driver = *d;
  } else if (!major.empty()) {
    std::string text = major + "." + label("nvidia.com/cuda.driver.minor");
    if (!label("nvidia.com/cuda.driver.rev").empty()) text += "." + label("nvidia.com/cuda.driver.rev");
    if (auto d = util::Version::parse(text)) n.driver = *d;
  }
  for (const auto& [k, v] : read.labels) n.labels[k] = v;
  m_error = edit.done(m_input);
  return m_error.empty();
}

}  // namespace

std::expected<Inventory, Diagnostic> detail::read_kubectl_nodes(InputReader& in) {
  const InputSpec& input = in.input();
  Inventory out;
  NodesHandler handler(out, input);
  JsonFeed feed(in);
  const bool parsed = Json::sax_parse(FeedIterator{&feed}, FeedIterator{}, &handler);
  const auto fail = [&](std::string message) { return std::unexpected(detail::error_at(in, std::move(message))); };
  if (in.error()) return std::unexpected(*in.error());
  if (!parsed) return fail(handler.error().empty() ? "not valid JSON" : handler.error());
  if (!handler.root_object()) return fail("a JSON value that is not an object: not " + std::string(detail::k_formats));
  if (!handler.finish_single()) return fail(handler.error());
  if (handler.root_kind() != "Node" && !handler.has_items()) {
    if (handler.slurm_nodes())
      return fail(
          "this is Slurm's JSON (`scontrol show node --json` or `sinfo --json`), which tiers import does not "
          "read: give it `scontrol show node -o` output");
    return fail(
        "a JSON object with no 'items' list" +
        (handler.root_kind().empty() ? std::string() : " (kind '" + util::printable(handler.root_kind()) + "')") +
        ", not `kubectl get nodes -o json` output (a List of Node)");
  }
  if (!handler.other_item_kind().empty() && out.nodes.empty())
    return fail("a List of " + util::printable(handler.other_item_kind()) +
                ", not of Node: give tiers import `kubectl get nodes -o json`");
  return out;
}

}  // namespace orc::inventory
