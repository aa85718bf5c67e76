// The nvcc front in a build (front/front.hpp): staged into the scratch tree
// before the steps, its call log read after them.
#include "orchestrator/app/build/build_front.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <span>

#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::detail {

namespace {

namespace fs = std::filesystem;

// The call log is read up to this; a build's nvcc calls take a few hundred
// bytes each, so this holds some 100,000 of them.
constexpr std::uint64_t k_max_log = 64ull << 20;

constexpr std::array<std::string_view, 2> k_probe_names = {"__nvcc_device_query", "nvidia-smi"};

// The front's directory stands where a toolkit root would: CMake takes the
// root from the compiler's location when nvcc -v names no TOP (Debian's
// toolkits) and looks for nvvm/libdevice, include and the tools beside it.
// So it links to the real toolkit's parts. A container's toolkit cannot be
// listed from here: these are the parts toolkits have (a link to a part
// one lacks dangles, as the part would be missing).
constexpr std::array<std::string_view, 10> k_toolkit_parts = {
    "include", "lib64", "lib", "nvvm", "targets", "extras", "share", "nvml", "compute-sanitizer", "usr"};
constexpr std::array<std::string_view, 11> k_toolkit_tools = {
    "bin2c",    "cuobjdump", "nvdisasm", "nvlink",       "fatbinary",        "ptxas",
    "cudafe++", "nvprune",   "cu++filt", "nvcc.profile", "compute-sanitizer"};

// Names in `dir` (a toolkit on this machine), or `fallback` when it cannot
// be listed (a container's).
std::vector<std::string> names_in(const fs::path& dir, std::span<const std::string_view> fallback, bool listable) {
  std::vector<std::string> out;
  std::error_code ec;
  if (listable)
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  if (!listable || ec) out.assign(fallback.begin(), fallback.end());
  return out;
}

std::expected<void, std::string> link_toolkit(const fs::path& front, const fs::path& cuda_home, bool listable) {
  std::error_code ec;
  for (const auto& part : names_in(cuda_home, k_toolkit_parts, listable)) {
    if (part == "bin" || part == "front.conf" || part == "calls.jsonl") continue;
    fs::create_symlink(cuda_home / part, front / part, ec);
    if (ec) return std::unexpected("linking " + (front / part).string() + ": " + ec.message());
  }
  for (const auto& tool : names_in(cuda_home / "bin", k_toolkit_tools, listable)) {
    if (tool == "nvcc" || std::ranges::find(k_probe_names, tool) != k_probe_names.end()) continue;
    fs::create_symlink(cuda_home / "bin" / tool, front / "bin" / tool, ec);
    if (ec) return std::unexpected("linking " + (front / "bin" / tool).string() + ": " + ec.message());
  }
  return {};
}

}  // namespace

fs::path front_program() {
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / k_front_program_name;
  if (!ec && fs::is_regular_file(beside, ec)) return beside;
#ifdef ORC_FRONT_PROGRAM
  if (fs::is_regular_file(ORC_FRONT_PROGRAM, ec)) return ORC_FRONT_PROGRAM;
#endif
  return beside;
}

std::expected<void, std::string> stage_front(const BuildJob& job, const fs::path& scratch, engine::EngineKind kind,
                                             const fs::path& program) {
  std::error_code ec;
  if (!fs::is_regular_file(program, ec))
    return std::unexpected("the nvcc front " + program.string() + " is missing; it is installed beside orchestrate");
  const fs::path dir = scratch / "front";
  const fs::path bin = dir / "bin";
  fs::create_directories(bin, ec);
  fs::create_directories(scratch / "home", ec);
  if (ec) return std::unexpected("creating " + bin.string() + ": " + ec.message());
  // A copy, not a link: a container sees only what is mounted.
  fs::copy_file(program, bin / "nvcc", fs::copy_options::overwrite_existing, ec);
  if (ec) return std::unexpected("copying the nvcc front into " + bin.string() + ": " + ec.message());
  for (std::string_view probe : k_probe_names) {
    fs::remove(bin / probe, ec);
    fs::create_symlink("nvcc", bin / probe, ec);
    if (ec) return std::unexpected("linking " + (bin / probe).string() + ": " + ec.message());
  }
  const bool host = kind == engine::EngineKind::host;
  // A toolkit in /usr (Debian's packages) shares its bin with the system:
  // only the toolkit's own parts are linked there.
  const bool listable = host && fs::path(job.image.cuda_home) != "/usr";
  if (auto ok = link_toolkit(dir, job.image.cuda_home, listable); !ok) return ok;
  const recipe::Recipe& r = *job.plan.recipe;
  front::FrontConfig config{
      .real_nvcc = fs::path(job.image.cuda_home) / "bin" / "nvcc",
      .plan = job.plan.archs,
      .default_arch = job.plan.toolkit->default_arch,
      .policy = r.nvcc == recipe::NvccPolicy::enforce ? front::Policy::enforce : front::Policy::verify,
      .tier = job.plan.tier->name,
      .recipe = r.name,
      .recipe_where = r.file.string() + ":" + std::to_string(r.where.line),
      .source = host ? scratch / "src" : fs::path(k_src_dir),
      .log = host ? dir / "calls.jsonl" : fs::path(k_front_dir) / "calls.jsonl"};
  if (auto ok = util::write_file_atomic(dir / "front.conf", front::render_config(config)); !ok)
    return std::unexpected("writing the nvcc front's configuration: " + ok.error().message);
  if (auto ok = util::write_file_atomic(dir / "calls.jsonl", ""); !ok)
    return std::unexpected("writing the nvcc front's call log: " + ok.error().message);
  return {};
}

NvccReport read_front(const fs::path& scratch, recipe::NvccPolicy policy) {
  NvccReport report;
  report.policy = policy == recipe::NvccPolicy::enforce ? front::Policy::enforce : front::Policy::verify;
  auto text = util::read_file(scratch / "front" / "calls.jsonl", k_max_log);
  if (text) report.calls = front::read_call_log(*text);
  return report;
}

const front::CallRecord* first_refusal(const NvccReport& report) {
  const auto it = std::ranges::find(report.calls, front::Outcome::refused, &front::CallRecord::outcome);
  return it == report.calls.end() ? nullptr : &*it;
}

bool judged_any(const NvccReport& report) {
  return std::ranges::any_of(report.calls, [](const front::CallRecord& c) {
    return c.outcome == front::Outcome::as_planned || c.outcome == front::Outcome::enforced ||
           c.outcome == front::Outcome::refused;
  });
}

}  // namespace orc::app::detail

namespace orc::app {

std::vector<std::string> nvcc_summary(const NvccReport& report) {
  std::vector<std::string> out;
  std::map<front::Outcome, std::size_t> counts;
  for (const auto& c : report.calls) ++counts[c.outcome];
  const std::size_t judged =
      counts[front::Outcome::as_planned] + counts[front::Outcome::enforced] + counts[front::Outcome::refused];
  std::string line = "nvcc (" + std::string(front::policy_name(report.policy)) + "): " + std::to_string(judged) +
                     " call" + (judged == 1 ? "" : "s") + " judged";
  if (judged) {
    std::vector<std::string> parts;
    for (auto o : {front::Outcome::as_planned, front::Outcome::enforced, front::Outcome::refused})
      if (counts[o]) parts.push_back(std::to_string(counts[o]) + " " + std::string(front::outcome_name(o)));
    line += " (" + util::join(parts, ", ") + ")";
  }
  if (counts[front::Outcome::not_judged])
    line += ", " + std::to_string(counts[front::Outcome::not_judged]) + " without device code for the plan";
  out.push_back(line);
  // What enforcing replaced, once per distinct request and origin.
  std::vector<std::string> said;
  for (const auto& c : report.calls) {
    if (c.outcome != front::Outcome::enforced) continue;
    std::string text = "enforced: asked " + front::describe(c.asked);
    if (c.origin) text += " (" + c.origin->str() + ")";
    if (c.compiled) text += "; compiled " + front::describe(*c.compiled);
    if (std::ranges::find(said, text) == said.end()) said.push_back(text);
  }
  for (auto& s : said) out.push_back(std::move(s));
  // Each probe tool once: what it said here.
  std::vector<std::string> tools;
  for (const auto& c : report.calls) {
    if (c.outcome != front::Outcome::probe || std::ranges::find(tools, c.tool) != tools.end()) continue;
    tools.push_back(c.tool);
    std::string text = "the project probed the build machine's GPU: " + c.tool;
    if (c.origin) text += " (" + c.origin->file + ":" + std::to_string(c.origin->line) + ")";
    text += " " + c.note + "; the archs nvcc compiled come from the plan, not from it";
    out.push_back(std::move(text));
  }
  if (report.bypassed)
    out.push_back(
        "no nvcc call went through the front although the artifacts hold device code: the project runs nvcc by a "
        "path of its own; only the binaries were checked");
  return out;
}

}  // namespace orc::app
