#pragma once
// The CUDA toolkit table, 8.0 to 13.x (cuda-compat.md sections 2 and 3): what
// each nvcc accepts, deprecates and removed, its default arch, the oldest
// driver it needs and the newest host compilers it takes. Facts the reference
// marks UNCONFIRMED stay marked here, per field.
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::compat {

struct Toolkit {
  util::Version version;                            // 13.0
  std::vector<arch::ComputeCapability> archs;       // every sm_ target nvcc accepts, a/f included, ascending
  std::vector<arch::ComputeCapability> deprecated;  // accepted with nvcc's deprecation warning
  std::vector<arch::ComputeCapability> removed;     // accepted by the previous release, rejected by this one
  arch::ComputeCapability default_arch;             // what a bare `nvcc x.cu` embeds
  util::Version min_driver;                         // Linux x86_64, GA release; empty = not known (13.5)
  int max_gcc = 0;                                  // newest GCC major host_config.h accepts
  int max_clang = 0;                                // newest clang major
  util::Version ptx_isa;                            // PTX ISA version nvcc emits (empty = unknown)
  bool released = true;                             // false for 12.7, which never shipped
  // Names of fields whose values the reference marks UNCONFIRMED ("archs",
  // "deprecated", "default_arch", "max_gcc", ...).
  std::vector<std::string_view> unconfirmed;
  std::string_view source;  // where the row comes from

  bool accepts(arch::ComputeCapability cc) const;  // can nvcc compile SASS/PTX for cc
  bool is_deprecated(arch::ComputeCapability cc) const;
  bool is_unconfirmed(std::string_view field) const;
  // Whether `driver` meets min_driver; false when min_driver is not known.
  bool driver_meets_minimum(const util::Version& driver) const;
};

// The toolkits that compile SASS for `cc`: first and last, or nullptr pair
// when none does.
struct ToolkitWindow {
  const Toolkit* first = nullptr;
  const Toolkit* last = nullptr;
};

// Rows ascending by version (unreleased rows included, flagged). known() is
// the sourced table, built once and never changed; a process that learns
// from probes (the watcher) learns into its own copy and hands that copy to
// the resolver (ResolveRequest::table), so what a plan reads is an input,
// never what ran earlier in the process.
class ToolkitTable {
 public:
  static const ToolkitTable& known();

  // A copy keeps room for learned rows, so learning never moves a row a
  // plan points to. Rows a copy learns are its own.
  ToolkitTable(const ToolkitTable& other);
  ToolkitTable& operator=(const ToolkitTable& other);
  ToolkitTable(ToolkitTable&&) noexcept = default;
  ToolkitTable& operator=(ToolkitTable&&) noexcept = default;
  ~ToolkitTable();

  std::span<const Toolkit> rows() const { return m_rows; }
  const Toolkit* find(const util::Version& version) const;  // by major.minor
  ToolkitWindow window(arch::ComputeCapability cc) const;

  // What a probe of a toolkit image saw (`nvcc --list-gpu-code`: base
  // targets, no a/f variants; watch/probe.hpp) becomes this table's word: a
  // known row takes the observed archs (keeping the variants of the targets
  // nvcc listed, and no longer marking archs unconfirmed); a release newer
  // than every row becomes a row of its own, its other fields taken from the
  // newest released row and marked unconfirmed, its minimum driver unknown.
  // `source` says where it came from. nullptr when it cannot be learned (a
  // release older than the newest row that the table lacks, or more learned
  // rows than the table keeps room for).
  const Toolkit* learn(const util::Version& release, const std::vector<arch::ComputeCapability>& sass,
                       std::string source);

 private:
  struct Sourced {};
  explicit ToolkitTable(Sourced);
  std::vector<Toolkit> m_rows;
  // The source texts of learned rows (rows hold views), shared with copies
  // whose rows name them.
  std::shared_ptr<std::deque<std::string>> m_sources;
};

// The sourced table's rows, row and window (ToolkitTable::known()).
std::span<const Toolkit> toolkit_table();
const Toolkit* find_toolkit(const util::Version& version);  // by major.minor
ToolkitWindow toolkit_window(arch::ComputeCapability cc);

}  // namespace orc::compat
