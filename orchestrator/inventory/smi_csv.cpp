// nvidia-smi's CSV as a cluster hands it over (issues 15, 29): one file per
// node, a file with a node column, or the query run on every node at once.
// What the parallel shells make of `nvidia-smi --query-gpu=name,compute_cap,
// driver_version --format=csv` (their real output: tests/unit/inventory/data):
//   - pdsh and clush prefix each line with "host: ", the lines of the nodes
//     interleaved, and --format=csv prints its header once per node;
//   - dshbak (pdsh's) and clush -b / clubak -b print each node's lines, or
//     the lines several nodes share, under a rule, the host list and a rule
//     ("----------------", "gpu[01-03]" or clush's "gpu[01-03] (3)");
//   - a line the node printed instead of CSV ("NVIDIA-SMI has failed ...")
//     and pdsh's own ("pdsh@login: gpu03: ssh exited with exit code 255")
//     are that node's problem, not the input's.
// A header again with no node name on the lines (pdsh -N, files joined with
// cat) would merge nodes into one: it is refused with what to do instead.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "orchestrator/inventory/hostlist.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/inventory/parse_common.hpp"
#include "orchestrator/inventory/reader.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inventory::detail {

namespace {

constexpr std::string_view k_query = "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv";
// What a problem quotes of a line a node printed instead of CSV.
constexpr std::size_t k_said_bytes = 200;

std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out;
  for (;;) {
    const auto comma = line.find(',');
    out.emplace_back(util::trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return out;
}

bool is_header(const std::vector<std::string>& fields) {
  return std::ranges::any_of(fields, [](const std::string& f) { return util::to_lower(f) == "name"; });
}

// dshbak's rule is 16 dashes, clush's 15.
bool is_rule(std::string_view line) {
  line = util::trim(line);
  return line.size() >= 4 && line.find_first_not_of('-') == std::string_view::npos;
}

// "gpu01: rest" as pdsh and clush print a node's line: a name without
// white space before the first ": ", ahead of any comma.
struct Prefixed {
  std::string_view host;
  std::string_view rest;
};
std::optional<Prefixed> split_prefix(std::string_view line) {
  const auto colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0 || colon > line.find(',') ||
      line.substr(0, colon).find_first_of(" \t") != std::string_view::npos)
    return std::nullopt;
  return Prefixed{.host = line.substr(0, colon), .rest = line.substr(colon + 2)};
}

// The columns of one query's output: its header's, or without a header the
// query's own order.
struct Layout {
  std::vector<std::string> fields{"name", "compute_cap", "driver_version"};  // lower case
  int name = 0, cc = 1, driver = 2, node = -1;
  int line = 0;  // the header's line; 0: none read
};

Layout layout_of(const std::vector<std::string>& header, int line) {
  Layout out{.fields = {}, .name = -1, .cc = -1, .driver = -1, .node = -1, .line = line};
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    const std::string f = util::to_lower(header[static_cast<std::size_t>(i)]);
    if (f == "name") out.name = i;
    if (f == "compute_cap") out.cc = i;
    if (f == "driver_version") out.driver = i;
    if (f == "node" || f == "host" || f == "hostname") out.node = i;
    out.fields.push_back(f);
  }
  return out;
}

class SmiReader {
 public:
  explicit SmiReader(InputReader& in) : m_in(in), m_input(in.input()) {}

  std::expected<Inventory, util::Diagnostic> read() {
    for (std::string_view line; m_in.line(line);)
      if (std::string problem = take(line); !problem.empty()) return std::unexpected(failed(std::move(problem)));
    if (m_in.error()) return std::unexpected(*m_in.error());
    if (m_block == Block::hosts || m_block == Block::rule) {
      m_failed_at = m_block_line;
      return std::unexpected(
          failed("the input ends inside a host list's header (a rule of dashes, the hosts, a "
                 "rule): dshbak or clush -b output cut short"));
    }
    if (std::string problem = end_block(); !problem.empty()) return std::unexpected(failed(std::move(problem)));
    for (const auto& [node, said] : m_said)
      if (said.more > 0)
        m_out.problems[said.problem].message +=
            " (and " + std::to_string(said.more) + (said.more == 1 ? " more line)" : " more lines)");
    if (m_out.nodes.empty())
      return std::unexpected(
          error_in(m_input, "no GPU in this nvidia-smi CSV" +
                                (m_out.problems.empty() ? std::string()
                                                        : " (" + util::printable(m_out.problems.front().node) + ": " +
                                                              util::printable(m_out.problems.front().message) + ")")));
    return std::move(m_out);
  }

 private:
  enum class Block { none, hosts, rule, body };

  // The error at the line it concerns: a host list's, or the one read.
  util::Diagnostic failed(std::string message) const {
    if (m_failed_at == 0 || m_in.error()) return error_at(m_in, std::move(message));
    return util::Diagnostic{.where = {.file = m_input.file, .line = m_failed_at, .col = 0},
                            .message = std::move(message)};
  }

  // One line; empty, or the error.
  std::string take(std::string_view line) {
    if (util::trim(line).empty() || util::trim(line).front() == '#') return {};
    if (is_rule(line)) {
      if (m_block == Block::hosts) return "a host list expected after the rule of dashes (dshbak, clush -b)";
      if (m_block == Block::rule) {
        m_block = Block::body;
        return {};
      }
      std::string problem = end_block();
      m_block = Block::hosts;
      m_block_line = m_in.line_no();
      return problem;
    }
    if (m_block == Block::hosts) return begin_block(line);
    if (m_block == Block::rule) return "a rule of dashes expected after the host list (dshbak, clush -b)";
    std::string_view host;
    if (m_block != Block::body)
      if (const auto prefixed = split_prefix(line)) {
        host = prefixed->host;
        line = prefixed->rest;
        if (util::trim(line).empty()) return {};  // a node's empty line
      }
    const std::vector<std::string> fields = csv_fields(line);
    if (is_header(fields)) return header(fields, host);
    if (fields.size() == 1 && m_layout.fields.size() > 1 && (!host.empty() || m_block == Block::body))
      return said(host, fields.front());
    return row(fields, host);
  }

  std::string header(const std::vector<std::string>& fields, std::string_view host) {
    Layout layout = layout_of(fields, m_in.line_no());
    if (m_layout.line == 0 && !m_rows) {
      m_layout = std::move(layout);
      return {};
    }
    if (layout.fields != m_layout.fields)
      return "a header unlike " +
             (m_layout.line == 0
                  ? "the columns of the lines before it (" + util::join(m_layout.fields, ", ") + ")"
                  : "line " + std::to_string(m_layout.line) + "'s (" + util::join(m_layout.fields, ", ") + ")") +
             ": one input holds the output of one query; give each query's output as a file of its own";
    if (m_layout.node < 0 && host.empty() && m_block != Block::body)
      return "the header again, and no node name on the lines: the output of several nodes without their names "
             "(pdsh -N, or files joined with cat) would read as one node; run pdsh without -N (its \"host: \" "
             "prefixes name the nodes), or give tiers import one file per node";
    return {};
  }

  std::string row(const std::vector<std::string>& fields, std::string_view host) {
    m_rows = true;
    const auto at = [&](int col) -> std::string {
      return col >= 0 && col < static_cast<int>(fields.size()) ? fields[static_cast<std::size_t>(col)] : "";
    };
    if (fields.size() != m_layout.fields.size())
      return "expected " + std::to_string(m_layout.fields.size()) + " comma-separated fields (" + std::string(k_query) +
             "), found " + std::to_string(fields.size());
    if (at(m_layout.name).empty()) return "expected " + std::string(k_query) + " output: this line has no GPU name";
    const std::string cc_text = at(m_layout.cc);
    if (!cc_text.empty() && cc_text.front() != '[' && !reported_cc(cc_text))
      return "compute_cap '" + util::printable(cc_text) + "' is not a compute capability";
    std::optional<util::Version> driver;
    if (const std::string d = at(m_layout.driver); !d.empty()) {
      auto parsed = util::Version::parse(d);
      if (!parsed) return "driver_version '" + util::printable(d) + "' is no version";
      driver = std::move(*parsed);
    }
    NodeGpu gpu = make_gpu(at(m_layout.name), reported_cc(cc_text), "nvidia-smi compute_cap", 1);
    if (m_block == Block::body) return add_to(m_shared, std::move(gpu), std::move(driver));
    const std::string where = m_layout.node >= 0 ? at(m_layout.node) : !host.empty() ? std::string(host) : m_input.node;
    if (where.empty()) return "no node column and no node name: add a 'node' column";
    NodeEdit edit(m_out, where, Source::nvidia_smi, m_input.file);
    if (std::string problem = add_to(edit.node(), std::move(gpu), std::move(driver)); !problem.empty()) return problem;
    return edit.done(m_input);
  }

  static std::string add_to(Node& n, NodeGpu gpu, std::optional<util::Version> driver) {
    if (std::string problem = add_gpu(n, std::move(gpu)); !problem.empty()) return problem;
    if (driver && (!n.driver || *driver < *n.driver)) n.driver = std::move(driver);
    return {};
  }

  // A line a node printed instead of CSV, or pdsh's or clush's own about a
  // node ("pdsh@login: gpu03: ssh exited ..."): the node's problem, the
  // first line kept and the others counted.
  std::string said(std::string_view host, std::string_view text) {
    std::string node = m_block == Block::body ? m_block_hosts : std::string(host);
    // A line may be 1 MiB: a problem keeps its start.
    if (text.size() > k_said_bytes) text = text.substr(0, k_said_bytes);
    std::string message = "printed '" + std::string(text) + "', no line of " + std::string(k_query);
    if (host.starts_with("pdsh@") || host == "clush")
      if (const auto about = split_prefix(text)) {
        node = std::string(about->host);
        message = std::string(host.starts_with("pdsh@") ? "pdsh" : "clush") + " says: " + std::string(about->rest);
      }
    if (text.find("is not a valid field to query") != std::string_view::npos)
      message +=
          " (its driver lacks the field: give `nvidia-smi --query-gpu=name,driver_version --format=csv` "
          "of that node as a file of its own)";
    const auto [it, fresh] = m_said.try_emplace(node, Said{.problem = m_out.problems.size(), .more = 0});
    if (!fresh) {
      ++it->second.more;
      return {};
    }
    const Problem& added = m_out.problems.emplace_back(
        Problem{.node = std::move(node), .file = m_input.file, .message = std::move(message) + ": not placed"});
    m_out.account(0, sizeof(Problem) + 64 + 2 * added.node.size() + added.file.size() + added.message.size());
    return over_budget(m_out, m_input);
  }

  std::string begin_block(std::string_view line) {
    std::string_view hosts = util::trim(line);
    // clush -b and clubak -b add the count: "gpu[01-03] (3)".
    std::optional<std::size_t> count;
    if (const auto open = hosts.rfind(" ("); open != std::string_view::npos && hosts.ends_with(')')) {
      const std::string_view digits = hosts.substr(open + 2, hosts.size() - open - 3);
      if (!digits.empty() && digits.size() < 10 && digits.find_first_not_of("0123456789") == std::string_view::npos) {
        count = std::stoull(std::string(digits));
        hosts = hosts.substr(0, open);
      }
    }
    auto list = Hostlist::parse(hosts);
    if (!list) return "host list '" + util::printable(hosts) + "': " + list.error();
    if (count && *count != list->size())
      return "host list '" + util::printable(hosts) + "' names " + std::to_string(list->size()) + " nodes, not the " +
             std::to_string(*count) + " its count says";
    m_hosts = std::move(*list);
    m_block_hosts = std::string(hosts);
    m_shared = Node{.name = m_block_hosts};
    m_block = Block::rule;
    m_block_line = m_in.line_no();
    return {};
  }

  // The lines of a host list's block, given to each of its nodes.
  std::string end_block() {
    if (m_block != Block::body || !m_hosts) return {};
    m_block = Block::none;
    std::string problem;
    if (!m_shared.gpus.empty() && (m_expanded += m_hosts->size()) > k_max_hostlist_total)
      problem = "the host lists of this input name more than " + std::to_string(k_max_hostlist_total) +
                " nodes in all; give tiers import the cluster a part at a time";
    else if (!m_shared.gpus.empty())
      m_hosts->for_each([&](const std::string& name) {
        NodeEdit edit(m_out, name, Source::nvidia_smi, m_input.file);
        for (const NodeGpu& g : m_shared.gpus)
          if (problem = add_gpu(edit.node(), g); !problem.empty()) return false;
        if (m_shared.driver && (!edit.node().driver || *m_shared.driver < *edit.node().driver))
          edit.node().driver = m_shared.driver;
        problem = edit.done(m_input);
        return problem.empty();
      });
    m_hosts.reset();
    if (!problem.empty()) m_failed_at = m_block_line;
    return problem;
  }

  InputReader& m_in;
  const InputSpec& m_input;
  Inventory m_out;
  Layout m_layout;
  bool m_rows = false;  // a row was read
  Block m_block = Block::none;
  int m_block_line = 0;  // of its last header line read
  int m_failed_at = 0;   // the line an error concerns when not the one read
  std::optional<Hostlist> m_hosts;
  std::string m_block_hosts;   // as written
  std::size_t m_expanded = 0;  // names all host lists gave lines to
  Node m_shared;               // the GPUs and driver of the block's nodes
  struct Said {
    std::size_t problem = 0;  // in m_out.problems
    std::size_t more = 0;
  };
  std::unordered_map<std::string, Said> m_said;  // by node
};

}  // namespace

std::expected<Inventory, util::Diagnostic> read_nvidia_smi_csv(InputReader& in) { return SmiReader(in).read(); }

}  // namespace orc::inventory::detail
