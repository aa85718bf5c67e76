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

}  // namespace

std::vector<CcInterval> runnable_on(std::span<const Targets> binaries) {
  std::vector<CcInterval> out;
  if (binaries.empty()) return out;
  const std::vector<ComputeCapability> all = devices();
  std::optional<ComputeCapability> open;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool ok = std::ranges::all_of(binaries, [&](const Targets& t) { return runs(t, all[i]); });
    if (ok && !open) open = all[i];
    if (!ok && open) {
      out.push_back({*open, all[i]});
      open.reset();
    }
  }
  // Open-ended only when a device past the lattice would run it too (PTX,
  // which a newer device JIT-compiles).
  if (open) {
    const ComputeCapability beyond(k_max_major + 1, 0);
    const bool unbounded = std::ranges::all_of(binaries, [&](const Targets& t) { return runs(t, beyond); });
    out.push_back({*open, unbounded ? std::nullopt : std::optional<ComputeCapability>(beyond)});
  }
  return out;
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
  }
  return out;
}

}  // namespace orc::arch
