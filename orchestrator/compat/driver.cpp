#include "orchestrator/compat/driver.hpp"

#include <array>
#include <utility>

#include "orchestrator/compat/toolkits.hpp"

namespace orc::compat {

namespace {

// [NV-MVC] Table 1: the family minimum for minor-version compatibility. The
// 11.x floor is above 11.0's GA driver (450.51.05): MVC needs 450.80.02.
constexpr std::array<std::pair<int, std::string_view>, 3> k_runtime_floor = {
    {{11, "450.80.02"}, {12, "525.60.13"}, {13, "580.65.06"}}};

}  // namespace

namespace {

// The first released toolkit that emits PTX of `isa`, with a known driver.
const Toolkit* first_toolkit_for_ptx_isa(const util::Version& isa) {
  for (const Toolkit& t : toolkit_table()) {
    if (!t.released || t.ptx_isa.empty() || t.min_driver.empty()) continue;
    if (!(t.ptx_isa < isa)) return &t;
  }
  return nullptr;
}

}  // namespace

std::optional<util::Version> driver_for_ptx_isa(const util::Version& isa) {
  const Toolkit* t = first_toolkit_for_ptx_isa(isa);
  return t ? std::optional(t->min_driver) : std::nullopt;
}

std::optional<util::Version> cuda_for_ptx_isa(const util::Version& isa) {
  const Toolkit* t = isa.empty() ? nullptr : first_toolkit_for_ptx_isa(isa);
  return t ? std::optional(t->version) : std::nullopt;
}

util::Version ptx_isa_for_driver(const util::Version& driver) {
  util::Version best;
  for (const Toolkit& t : toolkit_table()) {
    if (!t.released || t.ptx_isa.empty() || t.min_driver.empty()) continue;
    if (!(driver < t.min_driver) && (best.empty() || best < t.ptx_isa)) best = t.ptx_isa;
  }
  return best;
}

bool driver_newer_than_table(const util::Version& driver) {
  util::Version newest;
  bool unknown_after = false;  // a released toolkit past `newest` whose minimum is not known (13.5)
  for (const Toolkit& t : toolkit_table()) {
    if (!t.released) continue;
    if (t.min_driver.empty()) {
      unknown_after = true;
    } else if (newest.empty() || newest < t.min_driver) {
      newest = t.min_driver;
      unknown_after = false;
    }
  }
  if (newest.empty()) return false;
  // Every CUDA minor so far came with a new driver branch (13.1 R590, 13.2
  // R595, 13.3 R610, 13.4 R615): a driver of the newest known toolkit's
  // branch is no newer than a later toolkit whose minimum is not known, so
  // that toolkit's PTX is too new for it, not a matter the tables cannot judge.
  if (unknown_after) return driver.major() > newest.major();
  return !(driver < newest);
}

std::optional<util::Version> driver_for_runtime(int major) {
  for (const auto& [m, floor] : k_runtime_floor)
    if (m == major) return *util::Version::parse(floor);
  return std::nullopt;
}

std::optional<int> last_driver_branch(arch::ComputeCapability cc) {
  struct Dropped {
    arch::ComputeCapability cc;
    int last_branch;
  };
  static constexpr Dropped k_dropped[] = {
      {{3, 0}, 470}, {{3, 2}, 470}, {{3, 5}, 470}, {{3, 7}, 470}, {{5, 0}, 580},
      {{5, 2}, 580}, {{5, 3}, 580}, {{6, 0}, 580}, {{6, 1}, 580}, {{7, 0}, 580},
  };
  for (const Dropped& d : k_dropped)
    if (d.cc == cc.base()) return d.last_branch;
  return std::nullopt;
}

}  // namespace orc::compat
