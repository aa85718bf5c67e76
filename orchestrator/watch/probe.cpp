#include "orchestrator/watch/probe.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::watch {

namespace {

constexpr int k_probes_schema = 1;

std::vector<arch::ComputeCapability> bases(const std::vector<arch::ComputeCapability>& ccs) {
  std::vector<arch::ComputeCapability> out;
  for (const auto& cc : ccs)
    if (std::ranges::find(out, cc.base()) == out.end()) out.push_back(cc.base());
  std::ranges::sort(out);
  return out;
}

}  // namespace

std::expected<std::vector<arch::ComputeCapability>, std::string> parse_gpu_code_list(std::string_view output) {
  std::vector<arch::ComputeCapability> out;
  for (std::string_view line : util::split_any(output, "\n")) {
    line = util::trim(line);
    if (line.empty()) continue;
    if (!line.starts_with("sm_")) return std::unexpected("not an sm_XX line: '" + util::printable(line) + "'");
    auto cc = arch::ComputeCapability::parse(line);
    if (!cc) return std::unexpected("'" + util::printable(line) + "': " + cc.error());
    if (std::ranges::find(out, *cc) == out.end()) out.push_back(*cc);
  }
  if (out.empty()) return std::unexpected("nvcc listed no GPU code at all");
  std::ranges::sort(out);
  return out;
}

std::vector<std::string> table_differences(const compat::Toolkit& row, const Probe& probe) {
  std::vector<std::string> out;
  const auto table = bases(row.archs);
  const auto seen = bases(probe.sass);
  const std::string release = "CUDA " + row.version.str();
  for (const auto& cc : table)
    if (std::ranges::find(seen, cc) == seen.end())
      out.push_back("the tables say " + release + " compiles for " + cc.sm() + "; its nvcc (" + probe.nvcc.str() +
                    ") does not list it");
  for (const auto& cc : seen)
    if (std::ranges::find(table, cc) == table.end())
      out.push_back("its nvcc (" + probe.nvcc.str() + ") lists " + cc.sm() + ", which the tables' row of " + release +
                    " lacks");
  return out;
}

std::vector<Probe> read_probes(const std::filesystem::path& file) {
  auto text = util::read_file(file);
  if (!text) return {};
  const auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || json.value("schema", 0) != k_probes_schema) return {};
  const auto probes = json.find("probes");
  if (probes == json.end() || !probes->is_array()) return {};
  std::vector<Probe> out;
  for (const auto& p : *probes) {
    if (!p.is_object()) continue;
    Probe probe{.image = p.value("image", ""), .digest = p.value("digest", ""), .probed_at = p.value("probed_at", "")};
    auto nvcc = util::Version::parse(p.value("nvcc", ""));
    const auto sass = p.find("sass");
    if (!nvcc || probe.digest.empty() || sass == p.end() || !sass->is_array()) continue;
    probe.nvcc = *nvcc;
    bool ok = true;
    for (const auto& s : *sass) {
      auto cc = s.is_string() ? arch::ComputeCapability::parse(s.get<std::string>())
                              : std::expected<arch::ComputeCapability, std::string>(std::unexpected("not a string"));
      if (!cc) {
        ok = false;
        break;
      }
      probe.sass.push_back(*cc);
    }
    if (ok) out.push_back(std::move(probe));
  }
  return out;
}

std::expected<void, std::string> record_probe(const std::filesystem::path& file, const Probe& probe) {
  std::vector<Probe> probes = read_probes(file);
  std::erase_if(probes, [&](const Probe& p) { return p.digest == probe.digest; });
  probes.push_back(probe);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& p : probes) {
    nlohmann::ordered_json sass = nlohmann::ordered_json::array();
    for (const auto& cc : p.sass) sass.push_back(cc.sm());
    list.push_back({{"image", p.image},
                    {"digest", p.digest},
                    {"nvcc", p.nvcc.str()},
                    {"sass", std::move(sass)},
                    {"probed_at", p.probed_at}});
  }
  const nlohmann::ordered_json doc{{"schema", k_probes_schema}, {"probes", std::move(list)}};
  auto written = util::write_file_atomic(file, doc.dump(2) + "\n");
  if (!written) return std::unexpected(written.error().message);
  return {};
}

const Probe* find_probe(const std::vector<Probe>& probes, std::string_view digest) {
  for (const auto& p : probes)
    if (!digest.empty() && p.digest == digest) return &p;
  return nullptr;
}

}  // namespace orc::watch
