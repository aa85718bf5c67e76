#pragma once
// `orchestrate inspect FILE...`: what device code binaries embed, and where
// it will run.
//
// Three modes:
//   report   (default) a table per file, or --json
//   verdict  report plus, per GPU given by --gpu/--cc/--tier, whether each
//            file runs natively, by JIT, or not at all
//   list     --list-elf/--list-ptx: cuobjdump 13.0's listing byte for byte,
//            its exit codes included (255 for "no device code")
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/cuda_libraries.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/listing.hpp"
#include "orchestrator/inspect/verdict.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

enum class InspectMode { report, list };

// Which tiers a directory of fetched sets is judged against (app/inspect/
// fetched_sets.hpp): each set its own tier, or every file every tier.
enum class SetTiers { own, every };

struct InspectRequest {
  std::vector<std::filesystem::path> paths;
  InspectMode mode = InspectMode::report;
  inspect::ListOptions list;       // list mode
  std::vector<std::string> gpus;   // --gpu: product names
  std::vector<std::string> ccs;    // --cc: "9.0", "86"
  std::vector<std::string> tiers;  // --tier: names in `config`
  std::filesystem::path config;    // orchestrate.yaml, read only for --tier
  std::string driver;              // --driver: judge PTX and the runtime against it (overrides a tier's)
  // --all-tiers: SetTiers::every (an image or a directory only).
  SetTiers set_tiers = SetTiers::own;
  bool json = false;
  bool exact = false;
  unsigned threads = 0;  // 0 = hardware concurrency
};

// A GPU a verdict is given for, as the user named it.
struct TargetGpu {
  std::string label;  // "H200 (9.0)", "CC 8.6", "tier-new: A100 (8.0)": text only
  arch::ComputeCapability cc;
  std::optional<util::Version> driver;  // --driver, else the tier's `driver:`
  std::string tier;                     // the --tier it came from; empty for --gpu and --cc
  std::string name;                     // the product name; empty for a bare compute capability
};

struct FileVerdict {
  TargetGpu gpu;
  inspect::Verdict verdict;
  bool runtime_kernels = false;  // the file builds or loads kernels itself: `none` is not proof
};

// The GPUs of --gpu, --cc and --tier, in that order; throws as inspect() does.
std::vector<TargetGpu> resolve_targets(const InspectRequest& request);

// The GPUs of one tier, judged with its driver: (or `driver`, --driver's).
std::vector<TargetGpu> tier_targets(const recipe::Tier& tier, const std::optional<util::Version>& driver = {});

// Verdicts for every file or member that holds device code itself (a leaf:
// an ELF, cubin or fatbin, not the archive around it), in report order.
struct LeafVerdicts {
  const inspect::FileReport* file = nullptr;
  std::vector<FileVerdict> verdicts;
};
std::vector<LeafVerdicts> judge_all(const std::vector<inspect::FileReport>& reports,
                                    const std::vector<TargetGpu>& targets);

// What inspect found: the files' reports (each leaf's verdicts point into
// them, so a report is moved, never copied), the warnings, the problems
// (unreadable files, damage) as diagnostics, and the exit code. List mode
// carries cuobjdump's stdout, stderr and exit code untouched instead.
struct InspectReport {
  InspectReport() = default;
  InspectReport(const InspectReport&) = delete;
  InspectReport& operator=(const InspectReport&) = delete;
  InspectReport(InspectReport&&) = default;
  InspectReport& operator=(InspectReport&&) = default;

  InspectMode mode = InspectMode::report;
  inspect::ListResult listing;  // list mode only
  std::vector<inspect::FileReport> files;
  std::vector<LeafVerdicts> verdicts;  // empty without --gpu/--cc/--tier
  // Per file (as `files`): the CUDA libraries it links (members included)
  // that none of the files given carries: what a node must provide.
  std::vector<std::vector<inspect::LinkedLibrary>> needs;
  std::vector<std::string> warnings;  // raw text: names as the files gave them
  std::vector<util::Diagnostic> problems;
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Throws util::Failure (bad_input) for an unknown GPU (with did-you-mean), a
// malformed --cc, an unknown tier or invalid configuration. A file that
// cannot be read (or changes while it is) is a problem of its own and exit
// code 2; every other file is reported in full.
InspectReport inspect(const InspectRequest& request);

// The table's sizes ("541.6 MiB"), shared with the registry's messages.
using util::human_size;

}  // namespace orc::app
