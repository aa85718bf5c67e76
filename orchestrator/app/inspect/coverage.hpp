#pragma once
// `orchestrate inspect docker://REF | oci://... | DIR`: will this image run
// on my cluster? Per tier a GPU x library matrix (native, jit, none,
// partial, or "run-time" for a library that builds its own kernels at run
// time and has none for that GPU in the file), the CUDA components the image
// bundles (inspect/bom.hpp), the CUDA runtime its files need from the
// driver and the CUDA libraries its files link that it lacks. Exit 1 when a
// library gets `none` on a GPU of a tier asked for (not a run-time one, as
// inspect's files); a library the image lacks is said, not an exit code.
// A directory of fetched sets (fetched_sets.hpp), with no --gpu, --cc,
// --tier or --all-tiers, is judged per set: each set's files against its
// own tier, the files outside every set against every tier; a set with no
// tier to judge it by whose files nothing judges is exit 1 too.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/inspect/fetched_sets.hpp"
#include "orchestrator/app/inspect/image_scan.hpp"
#include "orchestrator/app/inspect/inspect.hpp"
#include "orchestrator/arch/arch_list.hpp"
#include "orchestrator/inspect/bom.hpp"
#include "orchestrator/inspect/needs.hpp"

namespace orc::app {

// What a cell comes down to, for the legend: code the GPU loads; PTX only
// (the JIT); the driver (the file has code the GPU could run with a newer
// driver: its PTX is too new for the driver's JIT, error 222, or its CUDA
// runtime, error 35); code missing for the GPU (none or partial: error 209);
// or neither (link, no kernels, run-time).
enum class Cause { runs, jit, driver, missing_code, other };
std::string_view cause_name(Cause c);  // "runs", "jit", "driver", "missing-code", "other"

struct CoverageCell {
  inspect::Outcome outcome = inspect::Outcome::none;
  Cause cause = Cause::other;
  bool runtime_kernels = false;  // the library builds or loads kernels itself
  std::string decided_by;        // "sm_90", "compute_80", empty for none
  std::string why;               // the verdict's sentence
  // "native", "jit", "none", "partial", "run-time" (none, but the library
  // builds its kernels at run time), "link", "no-kernels".
  std::string label() const;
};

struct CoverageRow {
  std::string path;                 // in the image: "/usr/lib/x86_64-linux-gnu/libcublas.so.12"
  arch::ArchList sass;              // "sm_80", "sm_90"
  arch::ArchList ptx;               // "compute_90"
  std::vector<CoverageCell> cells;  // one per GPU of the tier, in order
};

struct CoverageTier {
  std::string name;  // the tier, or "GPUs asked for" for --gpu/--cc
  // Per set: the index in ImageReport::sets of the set this table judges
  // (its files only); none for every file, or the files outside the sets.
  std::optional<std::size_t> set;
  std::optional<util::Version> driver;
  std::vector<TargetGpu> gpus;
  std::vector<CoverageRow> rows;
  std::size_t count(inspect::Outcome o, bool runtime = false) const;
};

struct RuntimeNeed {
  int major = 0;                            // the CUDA runtime's major
  std::vector<std::string> files;           // the files that need it
  std::string bundled;                      // the cudart the image bundles: "13.0.96 (file name)"
  std::optional<util::Version> min_driver;  // the oldest driver that runs it (minor-version compatibility)
};

struct ImageReport {
  ScannedImage image;
  // The fetched sets of a directory judged per set; empty otherwise.
  std::vector<FetchedSet> sets;
  std::filesystem::path config;  // the configuration read for the sets' tiers; empty when none
  std::vector<CoverageTier> tiers;
  std::vector<inspect::Component> bom;
  std::vector<RuntimeNeed> runtime;
  // CUDA libraries the image's files link that the image does not hold (by
  // file name or DT_SONAME, anywhere in it): those files cannot start.
  std::vector<inspect::SetNeed> missing;
  std::vector<std::string> warnings;
  std::vector<std::string> damaged;  // files the scan could read only in part
  util::ExitCode exit_code = util::ExitCode::ok;
};

// The tiers are --tier's; with no --gpu, --cc or --tier, every tier of the
// configuration when there is one (per set for a directory of fetched sets,
// unless --all-tiers). Throws as scan_image and resolve_targets.
ImageReport cover_image(const InspectRequest& request, const ImageSource& source);

}  // namespace orc::app
