#include "orchestrator/arch/requirement.hpp"

#include <algorithm>

namespace orc::arch {

namespace {

constexpr int k_max_major = 15;

// Every device CC in order: 1.0 ... 15.9.
std::vector<ComputeCapability> devices() {
  std::vector<ComputeCapability> out;
  for (int major = 1; major <= k_max_major; ++major)
    for (int minor = 0; minor <= 9; ++minor) out.emplace_back(major, minor);
  return out;
}

bool runs(const Targets& t, ComputeCapability device) {
  return std::ranges::any_of(t.sass, [&](const ComputeCapability& s) { return s.sass_runs_on(device); }) ||
         std::ranges::any_of(t.ptx, [&](const ComputeCapability& p) { return p.ptx_runs_on(device); });
}

// The driver version `t` needs on `device`: none where SASS runs; else that
// of the newest PTX that runs there (the one the driver JIT-compiles).
std::optional<util::Version> needs(const Targets& t, ComputeCapability device) {
  if (t.ptx_cuda.size() != t.ptx.size()) return std::nullopt;
  if (std::ranges::any_of(t.sass, [&](const ComputeCapability& s) { return s.sass_runs_on(device); }))
    return std::nullopt;
  std::optional<std::size_t> chosen;
  for (std::size_t i = 0; i < t.ptx.size(); ++i)
    if (t.ptx[i].ptx_runs_on(device) && (!chosen || t.ptx[*chosen] < t.ptx[i])) chosen = i;
  return chosen ? t.ptx_cuda[*chosen] : std::nullopt;
}

std::optional<util::Version> most_needed(std::span<const Targets> binaries, ComputeCapability device) {
  std::optional<util::Version> most;
  for (const auto& t : binaries)
    if (auto n = needs(t, device); n && (!most || *most < *n)) most = n;
  return most;
}

}  // namespace

std::vector<CcInterval> runnable_on(std::span<const Targets> binaries) {
  std::vector<CcInterval> out;
  if (binaries.empty()) return out;
  const std::vector<ComputeCapability> all = devices();
  std::optional<ComputeCapability> open;
  std::optional<util::Version> open_needs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool ok = std::ranges::all_of(binaries, [&](const Targets& t) { return runs(t, all[i]); });
    const auto need = ok ? most_needed(binaries, all[i]) : std::nullopt;
    if (open && (!ok || need != open_needs)) {
      out.push_back({*open, all[i], open_needs});
      open.reset();
    }
    if (ok && !open) {
      open = all[i];
      open_needs = need;
    }
  }
  // Open-ended only when a device past the lattice would run it too (PTX,
  // which a newer device JIT-compiles), with the same driver.
  if (open) {
    const ComputeCapability beyond(k_max_major + 1, 0);
    const bool unbounded = std::ranges::all_of(binaries, [&](const Targets& t) { return runs(t, beyond); }) &&
                           most_needed(binaries, beyond) == open_needs;
    out.push_back({*open, unbounded ? std::nullopt : std::optional<ComputeCapability>(beyond), open_needs});
  }
  return out;
}

bool allows(std::span<const CcInterval> intervals, ComputeCapability cc) {
  return std::ranges::any_of(intervals,
                             [&](const CcInterval& i) { return !(cc < i.low) && (!i.high || cc < *i.high); });
}

std::string require_arch(std::span<const CcInterval> intervals) {
  std::string out;
  for (const auto& i : intervals) {
    if (!out.empty()) out += ' ';
    const bool one_wide =
        i.high && ((i.high->major() == i.low.major() && i.high->minor() == i.low.minor() + 1) ||
                   (i.low.minor() == 9 && i.high->major() == i.low.major() + 1 && i.high->minor() == 0));
    if (!i.high)
      out += "arch>=" + i.low.dotted();
    else if (one_wide)
      out += "arch=" + i.low.dotted();
    else
      out += "arch>=" + i.low.dotted() + ",arch<" + i.high->dotted();
    if (i.cuda) out += ",cuda>=" + i.cuda->str();
  }
  return out;
}

}  // namespace orc::arch
