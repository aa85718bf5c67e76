#include "orchestrator/compat/toolkits.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <string>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::compat {

namespace {

// One toolkit as written in the table below. Lists are space-separated CCs in
// nvcc's digit notation ("90a", "100f"); versions are dotted; `unconfirmed`
// names the fields the reference marks UNCONFIRMED, inferred or disputed.
// `removed` is not written: it is derived from the previous released row, so
// it cannot drift from `archs`.
struct Row {
  std::string_view version;
  bool released;
  std::string_view archs;
  std::string_view deprecated;
  std::string_view default_arch;
  std::string_view min_driver;
  int max_gcc;
  int max_clang;
  std::string_view ptx_isa;
  std::string_view unconfirmed;
  std::string_view source;
};

constexpr bool k_shipped = true;
constexpr bool k_never_shipped = false;

// cuda-compat.md 2.1 (archs, deprecated, default), 2.2 (min_driver: the
// Linux x86_64 value of the x.y GA release), 3 (compilers: the GA release's
// host_config.h, so the value holds for every update of that minor).
//
// sm_72: clang says nvcc 9.1 added it, CMake and Spack say 9.0. We take 9.1
// and mark 9.0/9.1 "archs" unconfirmed: claiming a target nvcc rejects breaks
// a build, while missing one only makes the resolver pick a newer toolkit.
//
// 9.1 min_driver: NVIDIA's current table says 390.46, the runfile and an older
// copy of the table say 387.26; we keep NVIDIA's (the stricter) and mark it.
//
// 10.1, 11.4: compilers are those of the GA (10.1.105: clang 7; 11.4.0: gcc
// 10, clang 11 per Spack's conflicts), not of later updates (clang 8; gcc 11,
// clang 12). The 11.4 clang value departs from the reference's table cell (12),
// hence the mark.
//
// 12.3 max_gcc: Spack says 12, PyTorch says 13; we take 12 (the stricter).
// 12.8/12.9 max_gcc: Spack, an nvcc 12.9 error text and one PyTorch revision
// say 14, an older PyTorch revision says 13; we take 14, marked.
//
// 13.3/13.4 name only a driver branch (R610, R615); 13.4 compilers are assumed
// equal to 13.1-13.3. 13.5's driver is not known at all (min_driver empty).
//
// ptx_isa: NVIDIA's PTX ISA release history ([NV-PTX-RH], docs.nvidia.com/
// cuda/parallel-thread-execution/#release-notes-ptx-release-history, as
// NVIDIA's cuda-python transcribes it in cuda/bindings/utils/_ptx_utils.py):
// 7.0..7.8 = 11.0..11.8, 8.0..8.5 = 12.0..12.5, 8.6 = 12.7 (never shipped),
// 8.7 = 12.8, 8.8 = 12.9, 9.0 = 13.0, 9.1 = 13.1. 12.6 still emits 8.5
// (openxla/xla#16504). Seen first-hand: 11.8 7.8, 12.4 8.4, 13.0 9.0. 9.3 for
// 13.3 follows the pattern of 13.0-13.4 and is marked.
constexpr std::array k_rows = {
    Row{"8.0", k_shipped, "20 21 30 32 35 37 50 52 53 60 61 62", "20 21", "20", "367.48", 5, 3, "", "",
        "[SRC-cmake-all] 60-62 at 8.0; nvcc 8.0 deprecation warning [3P]; RN table (8.0.44)"},
    Row{"9.0", k_shipped, "30 32 35 37 50 52 53 60 61 62 70", "", "30", "384.81", 6, 3, "", "archs deprecated",
        "[SRC-clang] (Fermi max 8.0, sm_72 min 9.1); [SRC-pytorch-cppext] default; [SRC-spack]"},
    Row{"9.1", k_shipped, "30 32 35 37 50 52 53 60 61 62 70 72", "", "30", "390.46", 6, 4, "", "archs min_driver",
        "[SRC-clang] SM_72 min 9.1 (CMake/Spack: 9.0); RN table vs runfile 387.26"},
    Row{"9.2", k_shipped, "30 32 35 37 50 52 53 60 61 62 70 72", "", "30", "396.26", 7, 5, "", "",
        "[SRC-clang]; [SRC-spack]; RN table"},
    Row{"10.0", k_shipped, "30 32 35 37 50 52 53 60 61 62 70 72 75", "", "30", "410.48", 7, 6, "", "deprecated",
        "[SRC-clang] SM_75 min 10.0; [SRC-spack]; RN table"},
    Row{"10.1", k_shipped, "30 32 35 37 50 52 53 60 61 62 70 72 75", "", "30", "418.39", 8, 7, "", "deprecated",
        "[SRC-clang]; [SRC-spack] (10.1.105 clang 7); RN table"},
    Row{"10.2", k_shipped, "30 32 35 37 50 52 53 60 61 62 70 72 75", "", "30", "440.33", 8, 8, "", "deprecated",
        "nvcc 10.2 --help [3P cmake#23293]; [SRC-clang] last for sm_30/32; [SRC-spack]"},
    Row{"11.0", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80", "35 37 50", "52", "450.51.05", 9, 9, "7.0",
        "deprecated default_arch", "cuFFT 11.0 notes; deprecations and default inferred from [FH-deb-11.2]"},
    Row{"11.1", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86", "35 37 50", "52", "455.23", 10, 10, "7.1", "",
        "[SRC-clang] SM_86 min 11.1; [SRC-pytorch-cppext]"},
    Row{"11.2", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86", "35 37 50", "52", "460.27.03", 10, 11, "7.2", "",
        "[FH-deb-11.2] nvcc 11.2.152 --list-gpu-arch; [SRC-pytorch-cppext]"},
    Row{"11.3", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86", "35 37 50", "52", "465.19.01", 10, 11, "7.3",
        "archs deprecated default_arch", "inferred from [FH-deb-11.2] and [FH-deb-11.8]"},
    Row{"11.4", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86 87", "35 37 50", "52", "470.42.01", 10, 11, "7.4",
        "max_clang", "[SRC-clang] SM_87 min 11.4; [SRC-spack] 11.4.0 compilers"},
    Row{"11.5", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86 87", "35 37 50", "52", "495.29.05", 11, 12, "7.5",
        "max_gcc", "[SRC-spack] gcc < 11.2 vs [SRC-pytorch-cppext] gcc 11"},
    Row{"11.6", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86 87", "35 37", "52", "510.39.01", 11, 13, "7.6", "",
        "sm_50 undeprecated in 11.6 [3P cmake!8031]; [SRC-pytorch-cppext]"},
    Row{"11.7", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86 87", "35 37", "52", "515.43.04", 11, 13, "7.7", "",
        "[SRC-pytorch-cppext]; [SRC-spack]"},
    Row{"11.8", k_shipped, "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90", "35 37", "52", "520.61.05", 11, 14, "7.8",
        "", "[FH-deb-11.8] nvcc 11.8.89 --list-gpu-arch, host_config.h"},
    Row{"12.0", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "525.60.13", 12, 14, "8.0",
        "default_arch", "cuFFT 12.0 notes; [SRC-cmake-all]; [SRC-clang] SM_90a min 12.0"},
    Row{"12.1", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "530.30.02", 12, 15, "8.1",
        "archs deprecated default_arch", "inferred from 12.0 and [FH-deb-12.4]; [SRC-spack]"},
    Row{"12.2", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "535.54.03", 12, 16, "8.2",
        "archs deprecated default_arch", "inferred from 12.0 and [FH-deb-12.4]; [SRC-spack]"},
    Row{"12.3", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "545.23.06", 12, 16, "8.3",
        "archs deprecated default_arch max_gcc", "inferred from 12.0 and [FH-deb-12.4]; [SRC-spack] vs PyTorch gcc"},
    Row{"12.4", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "550.54.14", 13, 17, "8.4", "",
        "[FH-deb-12.4] nvcc 12.4.131 --list-gpu-arch, host_config.h"},
    Row{"12.5", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "555.42.02", 13, 17, "8.5", "",
        "[FH-deb-12.5] nvcc 12.5.40 --list-gpu-arch; Debian Depends"},
    Row{"12.6", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a", "", "52", "560.28.03", 13, 18, "8.5",
        "deprecated max_gcc", "[SRC-spack]; gcc 13.3 rejection claim [3P]"},
    // Absent from NVIDIA's toolkit/driver table; kept so "12.7" in a recipe is
    // recognised and refused with a reason rather than called unknown.
    Row{"12.7", k_never_shipped, "", "", "", "", 0, 0, "", "", "never released [NV-RN-13.2U2]"},
    Row{"12.8", k_shipped, "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a 100 100a 101 101a 120 120a",
        "50 52 53 60 61 62 70 72", "52", "570.26", 14, 19, "8.7", "max_gcc",
        "[SRC-cmake-all]; '< 75' warning [3P yaksa#260]; RN table (570.26)"},
    Row{"12.9", k_shipped,
        "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a 100 100a 100f 101 101a 101f 103 103a 103f "
        "120 120a 120f 121 121a 121f",
        "50 52 53 60 61 62 70 72", "52", "575.51.03", 14, 19, "8.8", "default_arch max_gcc",
        "[NV-blog] family targets; [SRC-cmake-all]; default from [3P papi#610]"},
    Row{"13.0", k_shipped,
        "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f 120 120a 120f 121 121a 121f", "", "75",
        "580.65.06", 15, 20, "9.0", "", "[FH-13.0] nvcc V13.0.88 --list-gpu-arch, host_config.h; RN 13.x"},
    Row{"13.1", k_shipped,
        "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f 120 120a 120f 121 121a 121f", "", "75",
        "590.44.01", 15, 21, "9.1", "archs deprecated removed default_arch",
        "assumed as 13.0 (no first-hand nvcc); [SRC-spack] compilers; RN table"},
    Row{"13.2", k_shipped,
        "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f 120 120a 120f 121 121a 121f", "", "75",
        "595.45.04", 15, 21, "9.2", "archs deprecated removed default_arch",
        "assumed as 13.0 (no first-hand nvcc); [SRC-spack] compilers; [NV-RN-13.2U2]"},
    Row{"13.3", k_shipped,
        "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f 120 120a 120f 121 121a 121f", "", "75",
        "610.43.02", 15, 21, "9.3", "archs deprecated removed default_arch min_driver",
        "assumed as 13.0 (no first-hand nvcc); driver: redistrib_13.3.0.json's cuda_compat 610.43.02 and the runfile "
        "cuda_13.3.0_610.43.02_linux.run, branch R610 [NV-RN-13.4U1]; PTX ISA 9.3: the PTX ISA release history "
        "(\"PTX ISA 9.3 | CUDA 13.3, driver r610\") and CCCL's __cccl_ptx_isa"},
    Row{"13.4", k_shipped,
        "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 107 107a 107f 110 110a 110f "
        "120 120a 120f 121 121a 121f",
        "", "75", "615.0", 15, 21, "9.4", "archs deprecated removed default_arch min_driver max_gcc max_clang",
        "[NV-RN-13.4U1] Rubin 10.7, branch R615; [3P] pytorch#190654, llvm#211677"},
    // Released 2026-11-04 (redistrib_13.5.0.json, nvcc 13.5.37). No stored
    // source names its driver branch, targets or host compilers: the minimum
    // driver stays unknown (a tier with a `driver:` then gets 13.5 only under
    // minor-version compatibility), the rest is 13.4's, all marked.
    Row{"13.5", k_shipped,
        "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 107 107a 107f 110 110a 110f "
        "120 120a 120f 121 121a 121f",
        "", "75", "", 15, 21, "9.5", "archs deprecated removed default_arch min_driver max_gcc max_clang ptx_isa",
        "redistrib_13.5.0.json (release_date 2026-11-04, nvcc 13.5.37); PTX ISA 9.5 [3P] apache/tvm-tirx#241; "
        "the rest assumed as 13.4"},
};

constexpr std::array<std::string_view, 8> k_fields = {"archs",      "deprecated", "removed",   "default_arch",
                                                      "min_driver", "max_gcc",    "max_clang", "ptx_isa"};

// The table is compiled in, so a literal that does not parse is a bug in this
// file: fail loudly (the first test that reads the table fails) instead of
// dropping the entry.
[[noreturn]] void bad_row(std::string_view version, const std::string& what) {
  throw util::Failure(util::ExitCode::check_failed, "toolkit table, row " + std::string(version) + ": " + what);
}

arch::ComputeCapability parse_cc(const Row& row, std::string_view text) {
  auto cc = arch::ComputeCapability::parse(text);
  if (!cc) bad_row(row.version, cc.error());
  return *cc;
}

// Ascending and unique, so accepts() can binary-search and the list reads
// like nvcc's --list-gpu-arch.
std::vector<arch::ComputeCapability> parse_ccs(const Row& row, std::string_view text) {
  std::vector<arch::ComputeCapability> out;
  for (std::string_view word : util::split_words(text)) {
    const auto cc = parse_cc(row, word);
    if (!out.empty() && !(out.back() < cc)) bad_row(row.version, "'" + std::string(word) + "' out of order");
    out.push_back(cc);
  }
  return out;
}

util::Version parse_version(const Row& row, std::string_view text) {
  if (text.empty()) return {};
  auto v = util::Version::parse(text);
  if (!v) bad_row(row.version, v.error());
  return *v;
}

bool contains(const std::vector<arch::ComputeCapability>& sorted, arch::ComputeCapability cc) {
  return std::ranges::binary_search(sorted, cc);
}

Toolkit build(const Row& row, const Toolkit* previous_released) {
  Toolkit t;
  t.version = parse_version(row, row.version);
  t.released = row.released;
  t.archs = parse_ccs(row, row.archs);
  t.deprecated = parse_ccs(row, row.deprecated);
  for (const auto& cc : t.deprecated)
    if (!contains(t.archs, cc)) bad_row(row.version, "deprecated " + cc.sm() + " is not in archs");
  if (!row.default_arch.empty()) {
    t.default_arch = parse_cc(row, row.default_arch);
    if (!contains(t.archs, t.default_arch)) bad_row(row.version, "default arch is not in archs");
  }
  if (t.released && previous_released) {
    for (const auto& cc : previous_released->archs)
      if (!contains(t.archs, cc)) t.removed.push_back(cc);
  }
  t.min_driver = parse_version(row, row.min_driver);
  t.max_gcc = row.max_gcc;
  t.max_clang = row.max_clang;
  t.ptx_isa = parse_version(row, row.ptx_isa);
  for (std::string_view field : util::split_words(row.unconfirmed)) {
    if (std::ranges::find(k_fields, field) == k_fields.end())
      bad_row(row.version, "unknown field '" + std::string(field) + "' in unconfirmed");
    t.unconfirmed.push_back(field);
  }
  t.source = row.source;
  if (t.released && (t.archs.empty() || t.max_gcc == 0))
    bad_row(row.version, "a released toolkit needs archs and a gcc");
  // An unknown driver must say so: an empty value is never read as "none needed".
  if (t.released && t.min_driver.empty() && !t.is_unconfirmed("min_driver"))
    bad_row(row.version, "a released toolkit needs a driver, or 'min_driver' marked unconfirmed");
  return t;
}

// Room for rows learned from probes (ToolkitTable::learn), so that appending
// one never moves the rows plans already point to.
constexpr std::size_t k_learned_rows = 16;

}  // namespace

bool Toolkit::accepts(arch::ComputeCapability cc) const { return contains(archs, cc); }

bool Toolkit::is_deprecated(arch::ComputeCapability cc) const { return contains(deprecated, cc); }

bool Toolkit::is_unconfirmed(std::string_view field) const {
  return std::ranges::find(unconfirmed, field) != unconfirmed.end();
}

bool Toolkit::driver_meets_minimum(const util::Version& driver) const {
  return !min_driver.empty() && !(driver < min_driver);
}

ToolkitTable::ToolkitTable(Sourced) : m_sources(std::make_shared<std::deque<std::string>>()) {
  m_rows.reserve(k_rows.size() + k_learned_rows);
  const Toolkit* previous_released = nullptr;
  for (const Row& row : k_rows) {
    Toolkit t = build(row, previous_released);
    if (!m_rows.empty() && !(m_rows.back().version < t.version)) bad_row(row.version, "versions out of order");
    m_rows.push_back(std::move(t));
    // reserve() above keeps this pointer valid while the table grows.
    if (m_rows.back().released) previous_released = &m_rows.back();
  }
}

ToolkitTable::ToolkitTable(const ToolkitTable& other) : m_sources(other.m_sources) {
  m_rows.reserve(k_rows.size() + k_learned_rows);
  m_rows.assign(other.m_rows.begin(), other.m_rows.end());
}

ToolkitTable& ToolkitTable::operator=(const ToolkitTable& other) {
  if (this != &other) *this = ToolkitTable(other);
  return *this;
}

ToolkitTable::~ToolkitTable() = default;

const ToolkitTable& ToolkitTable::known() {
  static const ToolkitTable table{Sourced{}};
  return table;
}

const Toolkit* ToolkitTable::learn(const util::Version& release, const std::vector<arch::ComputeCapability>& sass,
                                   std::string source) {
  const util::Version version = release.truncated(2);
  std::vector<arch::ComputeCapability> seen;
  for (const auto& cc : sass)
    if (std::ranges::find(seen, cc.base()) == seen.end()) seen.push_back(cc.base());
  std::ranges::sort(seen);
  if (seen.empty()) return nullptr;
  const auto observed = [&](arch::ComputeCapability cc) { return std::ranges::binary_search(seen, cc.base()); };
  const auto known_row = std::ranges::find(m_rows, version, &Toolkit::version);
  if (known_row != m_rows.end()) {
    Toolkit& row = *known_row;
    std::vector<arch::ComputeCapability> archs = seen;
    for (const auto& cc : row.archs)
      if (cc != cc.base() && observed(cc)) archs.push_back(cc);
    std::ranges::sort(archs);
    row.archs = std::move(archs);
    std::erase_if(row.deprecated, [&](arch::ComputeCapability cc) { return !observed(cc); });
    if (!observed(row.default_arch)) row.default_arch = seen.front();
    std::erase(row.unconfirmed, std::string_view("archs"));
    row.source = m_sources->emplace_back(std::string(row.source) + "; archs: " + source);
    return &row;
  }
  if (m_rows.size() == m_rows.capacity() || !(m_rows.back().version < version)) return nullptr;
  const Toolkit* previous = nullptr;
  for (const Toolkit& t : m_rows)
    if (t.released) previous = &t;
  Toolkit t = *previous;
  t.version = version;
  t.archs = seen;
  t.deprecated.clear();
  t.removed.clear();
  for (const auto& cc : previous->archs)
    if (!observed(cc) && cc == cc.base()) t.removed.push_back(cc);
  if (!observed(t.default_arch)) t.default_arch = seen.front();
  t.min_driver = {};
  t.ptx_isa = {};
  t.released = true;
  t.unconfirmed = {"deprecated", "removed", "default_arch", "min_driver", "max_gcc", "max_clang", "ptx_isa"};
  t.source = m_sources->emplace_back("learned: " + source);
  m_rows.push_back(std::move(t));
  return &m_rows.back();
}

const Toolkit* ToolkitTable::find(const util::Version& version) const {
  const util::Version wanted = version.truncated(2);
  for (const Toolkit& t : m_rows)
    if (t.version == wanted) return &t;
  return nullptr;
}

ToolkitWindow ToolkitTable::window(arch::ComputeCapability cc) const {
  ToolkitWindow window;
  for (const Toolkit& t : m_rows) {
    if (!t.released || !t.accepts(cc)) continue;
    if (!window.first) window.first = &t;
    window.last = &t;
  }
  return window;
}

std::span<const Toolkit> toolkit_table() { return ToolkitTable::known().rows(); }

const Toolkit* find_toolkit(const util::Version& version) { return ToolkitTable::known().find(version); }

ToolkitWindow toolkit_window(arch::ComputeCapability cc) { return ToolkitTable::known().window(cc); }

}  // namespace orc::compat
