// The proposal as the `tiers:` stanza of orchestrate.yaml. Names come from
// the cluster (node names, products, partitions, features, labels), so no
// scalar is written plain and no comment is written raw (issue 28): a value
// is a double-quoted scalar whose `"`, `\` and control characters are YAML
// escapes (\xNN, \uNNNN: the parser reads back the same text), and a
// comment is util::printable, so no newline, ESC or invalid UTF-8 reaches it.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inventory {

namespace {

void hex_escape(std::string& out, unsigned code, int digits) {
  static constexpr char k_hex[] = "0123456789abcdef";
  out += digits == 2 ? "\\x" : "\\u";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += k_hex[(code >> shift) & 0xf];
}

// A YAML double-quoted scalar of `text` (made valid UTF-8 first). Escaped:
// C0, DEL and C1 as \xNN, and the characters a YAML reader may take for a
// line break or a byte order mark (U+2028, U+2029, U+FEFF) as \uNNNN.
std::string quoted(std::string_view text) {
  const std::string s = util::utf8_escaped(text);
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == '"' || b == '\\') {
      out += '\\';
      out += s[i++];
    } else if (b < 0x20 || b == 0x7f) {
      hex_escape(out, b, 2);
      ++i;
    } else if (b == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      hex_escape(out, static_cast<unsigned char>(s[i + 1]), 2);  // U+0080..U+009F
      i += 2;
    } else if (s.compare(i, 3, "\xe2\x80\xa8") == 0 || s.compare(i, 3, "\xe2\x80\xa9") == 0) {
      hex_escape(out, s[i + 2] == '\xa8' ? 0x2028 : 0x2029, 4);
      i += 3;
    } else if (s.compare(i, 3, "\xef\xbb\xbf") == 0) {
      hex_escape(out, 0xfeff, 4);
      i += 3;
    } else {
      out += s[i++];
    }
  }
  return out + "\"";
}

// Words YAML 1.1 readers take for booleans and null.
constexpr std::string_view k_yaml_words[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};

// A tier's name as a mapping key: plain when it is a word a YAML reader
// cannot take for anything else ("h100", "a100-a30"), else quoted.
std::string key(const std::string& name) {
  const bool plain =
      !name.empty() && std::isalpha(static_cast<unsigned char>(name.front())) &&
      std::ranges::all_of(
          name,
          [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }) &&
      std::ranges::find(k_yaml_words, util::to_lower(name)) == std::end(k_yaml_words);
  return plain ? name : quoted(name);
}

std::string comment(std::string_view text) { return util::printable(text); }

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string render_tiers_yaml(const Proposal& proposal) {
  std::string out = "# orchestrate tiers import: " + plural(proposal.nodes, "GPU node") + ", " +
                    plural(proposal.tiers.size(), "tier") + "\n" +
                    (proposal.tiers.empty() ? "tiers: {}\n" : "tiers:\n");
  for (const auto& t : proposal.tiers) {
    std::string about = t.name + ": " + plural(t.nodes.size(), "node") + " (" + util::join(t.nodes, ", ") + "); " +
                        util::join(t.products, ", ");
    if (!t.drivers.empty())
      about += "; driver" + std::string(t.drivers.size() == 1 ? " " : "s ") + util::join(t.drivers, ", ");
    out += "  # " + comment(about) + "\n";
    std::vector<std::string> gpus;
    for (const auto& g : t.gpus)
      gpus.push_back(g.declared ? "{name: " + quoted(g.name) + ", cc: " + quoted(g.declared->dotted()) + "}"
                                : quoted(g.name));
    out += "  " + key(t.name) + ":\n    gpus: [" + util::join(gpus, ", ") + "]\n";
    if (t.driver) out += "    driver: " + quoted(t.driver->str()) + "\n";
    std::vector<std::string> slurm;
    if (!t.partition.empty()) slurm.push_back("partition: " + quoted(t.partition));
    if (!t.constraint.empty()) slurm.push_back("constraint: " + quoted(t.constraint));
    if (!t.gres.empty()) slurm.push_back("gres: " + quoted(t.gres));
    if (!slurm.empty()) out += "    slurm: {" + util::join(slurm, ", ") + "}\n";
    if (!t.selector.empty()) {
      std::vector<std::string> labels;
      for (const auto& [k, v] : t.selector) labels.push_back(quoted(k) + ": " + quoted(v));
      out += "    kubernetes: {selector: {" + util::join(labels, ", ") + "}}\n";
    }
    for (const auto& note : t.notes) out += "    # " + comment(note) + "\n";
  }
  if (!proposal.problems.empty()) {
    out += "# not placed, or reported differently by two sources:\n";
    for (const auto& p : proposal.problems) out += "#   " + comment(p.node + " (" + p.file + "): " + p.message) + "\n";
  }
  return out;
}

}  // namespace orc::inventory
