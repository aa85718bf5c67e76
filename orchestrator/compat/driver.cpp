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

std::optional<util::Version> driver_for_ptx_isa(const util::Version& isa) {
  for (const Toolkit& t : toolkit_table()) {
    if (!t.released || t.ptx_isa.empty() || t.min_driver.empty()) continue;
    if (!(t.ptx_isa < isa)) return t.min_driver;
  }
  return std::nullopt;
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
  for (const Toolkit& t : toolkit_table())
    if (t.released && !t.min_driver.empty() && (newest.empty() || newest < t.min_driver)) newest = t.min_driver;
  return !newest.empty() && !(driver < newest);
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
