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

std::optional<FirstDriver> first_driver_branch(arch::ComputeCapability cc) {
  // OGKM: NVIDIA/open-gpu-kernel-modules, the README's supported-GPU table
  // (a line per board: name, PCI ID) and the UVM architecture backends in
  // kernel-open/nvidia-uvm, at the tag named; a CC with no UVM backend in a
  // tag has no CUDA in that driver, open or proprietary.
  struct Row {
    arch::ComputeCapability cc;
    FirstDriver first;
  };
  static constexpr Row k_rows[] = {
      {{7, 5},
       {410, "410.57",
        "NVIDIA 410.57 README, supported chips: GeForce RTX 2080 Ti (1E04); 396.54 lists no Turing board"}},
      {{8, 0},
       {450, "450.36.06",
        "CUDA 11.0's driver table (450.36.06); NVIDIA data center release notes 450.51.05 list the A100 VBIOS"}},
      {{8, 6}, {455, "455.23.04", "CUDA 11.1's driver table (>= 455.23); R455 added the RTX 3080 and 3090"}},
      {{8, 9}, {520, "520.56.06", "OGKM 520.56.06: uvm_ada.c and GPU_ARCHITECTURE_ADA appear; no 515.x tag has them"}},
      {{9, 0},
       {520, "520.56.06",
        "OGKM 520.56.06: '| NVIDIA H100 PCIe | 2331 10DE 1626 |' and uvm_hopper.c, in no 515.x tag; GPU Operator "
        "22.9.0: 'Support for Hopper (H100) GPU with CUDA 11.8 / R520 Data Center drivers'"}},
      {{10, 0}, {570, "570.86.15", "OGKM 570.86.15: '| NVIDIA B200 | 2901 10DE 1999 |'"}},
      // Blackwell Ultra and GB10: the UVM backends (GB110, GB20B) are in
      // 575.51.02, the README's board lines only from R580; the floor is the
      // branch that has the code, so no working pair is refused.
      {{10, 3},
       {575, "575.51.02", "OGKM 575.51.02: GPU_IMPLEMENTATION_GB110 in nvidia-uvm; B300 lines from 580.82.07"}},
      {{12, 0}, {570, "570.86.16", "OGKM 570.86.16: '| NVIDIA GeForce RTX 5090 | 2B85 |'"}},
      {{12, 1},
       {575, "575.51.02", "OGKM 575.51.02: GPU_IMPLEMENTATION_GB20B in nvidia-uvm; GB10 line from 580.119.02"}},
  };
  for (const Row& r : k_rows)
    if (r.cc == cc.base()) return r.first;
  return std::nullopt;
}

}  // namespace orc::compat
