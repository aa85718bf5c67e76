#pragma once
// The nvcc front: what `orchestrate build` puts first on every build step's
// PATH (and in CUDACXX) as `nvcc`, `__nvcc_device_query` and `nvidia-smi`.
// It reads each nvcc call's arch options, judges them against the plan,
// and runs the real nvcc as asked (verify, when they match), refuses the
// call with the project line that set them (verify), or runs it with the
// plan's archs instead (enforce). Every call, and every GPU probe, is one
// JSON line in the build's call log, which the build report reads.
//
// The build writes front.conf beside the front's bin/ directory:
//   real_nvcc=/usr/local/cuda/bin/nvcc
//   plan=sm_80 sm_89 sm_90 compute_90
//   default_arch=sm_75
//   policy=verify
//   tier=tier-new
//   recipe=saxpy-cmake
//   recipe_where=recipes/orchestrate.yaml:27
//   source=/src
//   log=/orc/front/calls.jsonl
#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"
#include "orchestrator/front/nvcc_args.hpp"
#include "orchestrator/front/origin.hpp"

namespace orc::front {

enum class Policy { verify, enforce };
std::string_view policy_name(Policy p);
std::optional<Policy> parse_policy(std::string_view text);

struct FrontConfig {
  std::filesystem::path real_nvcc;
  arch::ArchSet plan;
  arch::ComputeCapability default_arch;
  Policy policy = Policy::verify;
  std::string tier;
  std::string recipe;
  std::string recipe_where;  // "recipes/orchestrate.yaml:27"
  std::filesystem::path source;
  std::filesystem::path log;
};
std::string render_config(const FrontConfig& c);
std::expected<FrontConfig, std::string> parse_config(std::string_view text);

// What the front did with one call.
enum class Outcome {
  as_planned,  // the archs asked were the plan's: run as asked
  refused,     // verify: they were not; nvcc was not run
  enforced,    // enforce: run with the plan's archs instead of the project's
  not_judged,  // builds no device code for the plan (a query, a host file, a CMake probe)
  probe,       // a GPU probe (__nvcc_device_query, nvidia-smi)
};
std::string_view outcome_name(Outcome o);

// One line of the call log.
struct CallRecord {
  std::string tool = "nvcc";
  CallKind kind = CallKind::query;
  ArchChoice choice = ArchChoice::listed;
  Targets asked;
  std::optional<Targets> compiled;  // what nvcc was given (the plan's when enforced)
  std::vector<std::string> sources;
  std::string output;
  std::string cwd;
  std::vector<std::string> arch_flags;
  std::optional<Origin> origin;
  Outcome outcome = Outcome::not_judged;
  std::string note;              // why not judged; a probe's result
  std::optional<int> exit_code;  // enforced calls and probes
  std::string printed;           // a probe's standard output, at most 256 bytes
};
std::string to_json_line(const CallRecord& r);  // one line, '\n' included
// Reads a call log: at most `max_records` lines; a line that is not a
// record is skipped (a build step may have been killed mid-write).
std::vector<CallRecord> read_call_log(std::string_view text, std::size_t max_records = 100000);

// What to do with one nvcc call.
struct Decision {
  enum class Action { run_as_asked, run_rewritten, refuse } action = Action::run_as_asked;
  std::vector<std::string> argv;     // for run_rewritten: nvcc's arguments (argv[0] excluded)
  std::vector<std::string> message;  // for refuse: the lines to print, "orchestrate: ..." each
  CallRecord record;
};

struct CallContext {
  std::filesystem::path cwd;
  // What nvcc --dryrun says the call embeds (for -arch=native/all/all-major).
  std::optional<Targets> dryrun;
  // GPU probes the project ran before this call (from the call log).
  std::vector<CallRecord> probes;
};

// Whether a call is one of CMake's own compiler checks (CMakeFiles/...):
// those are run as asked and never judged.
bool cmake_probe(const NvccCall& call, const std::filesystem::path& cwd);

// `args` are the expanded arguments (NVCC_PREPEND_FLAGS, the command line
// with its options files, NVCC_APPEND_FLAGS) that `call` was read from.
Decision decide(const FrontConfig& config, std::span<const std::string> args, const NvccCall& call,
                const CallContext& context);

// The `-gencode=...` options of the plan (as flags::nvcc_gencode makes them).
std::vector<std::string> plan_gencode(const arch::ArchSet& plan);

}  // namespace orc::front
