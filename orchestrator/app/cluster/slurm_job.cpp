// The node's side of `--engine slurm` (`orchestrate job build|smoke`): the
// work in this job's own store, the push, and the set named in the job's
// comment for the submitter.
#include <ostream>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/app/cluster/slurm_comment.hpp"
#include "orchestrator/app/cluster/source_snapshot.hpp"
#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using util::ExitCode;

ExitCode fail(std::ostream& out, ExitCode code, const std::string& message) {
  out << "orchestrate: job: " << message << "\n" << std::flush;
  return code;
}

// Pushes `set` and writes "set=DIGEST" (and the build's cache key, which
// only the node knows: it hashes the node's image) into this job's comment.
ExitCode hand_back(const JobRunRequest& request, std::ostream& out, const std::string& set,
                   const std::string& key = {}) {
  const PushReport pushed = push(TransferRequest{.config = request.config,
                                                 .store_root = {},
                                                 .recipe = request.recipe,
                                                 .tier = request.tier,
                                                 .digest = set});
  if (pushed.exit_code != ExitCode::ok) return fail(out, pushed.exit_code, "pushing " + set + " failed");
  for (const auto& p : pushed.pushed) out << "orchestrate: job: pushed " << set << " as " << p.tag << "\n";
  const std::string id = util::env_value("SLURM_JOB_ID");
  if (id.empty()) {  // a Kubernetes Job: the set is in the registry, named here
    out << "orchestrate: job: set " << set << "\n" << std::flush;
    return ExitCode::ok;
  }
  const std::string comment = handed_back_comment(request.work, request.recipe, request.tier, {.key = key, .set = set});
  if (auto updated = engine::slurm::set_comment(id, comment); !updated)
    return fail(out, ExitCode::outside_failure, updated.error());
  out << "orchestrate: job: comment " << comment << "\n" << std::flush;
  return ExitCode::ok;
}

// A build Job's source snapshot, fetched and checked into a temporary
// directory for the build's lifetime (none when the Job names none).
struct SourceInPlace {
  std::filesystem::path dir;
  SourceInPlace(const JobRunRequest& request, std::ostream& out) {
    if (request.source.empty()) return;
    const auto snapshot = digest::Digest::parse(request.source);
    if (!snapshot) util::fail_input("--source " + request.source + ": " + snapshot.error());
    const auto config = site::load_config_file(request.config, true);
    const site::RemoteChoice remote = require_remote(&*config, "--source fetches from the remote");
    auto client = site::make_client(sources_url(remote.url));
    const auto where = util::temp_name(std::filesystem::temp_directory_path(), "orchestrate-source");
    const std::string revision = fetch_source(*client, *snapshot, site::trusted_keys(&*config), where);
    dir = where;
    out << "orchestrate: job: source snapshot " << request.source << " verified: " << revision << "\n" << std::flush;
  }
  ~SourceInPlace() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  SourceInPlace(const SourceInPlace&) = delete;
  SourceInPlace& operator=(const SourceInPlace&) = delete;
};

}  // namespace

util::ExitCode run_job(const JobRunRequest& request) {
  std::ostringstream ignored;
  std::ostream& out = request.out ? *request.out : ignored;
  if (request.work == SlurmWork::build) {
    BuildRequest build_request{.config = request.config, .tiers = {request.tier}, .recipes = {request.recipe}};
    if (!request.node_engine.empty()) build_request.engine = engine::parse_engine_kind(request.node_engine);
    const SourceInPlace source(request, out);
    if (!source.dir.empty()) build_request.source_dirs[request.recipe] = source.dir;
    const BuildReport report = build(build_request, out);
    if (report.builds.empty()) return fail(out, ExitCode::bad_input, "the plan holds no build of this pair");
    const BuildResult& result = report.builds.front();
    if (report.exit_code() != ExitCode::ok || !result.manifest)
      return fail(out, report.exit_code() == ExitCode::ok ? ExitCode::check_failed : report.exit_code(),
                  "the build failed: " + util::join(result.errors, "; "));
    return hand_back(request, out, result.manifest->to_string(), result.key);
  }
  // smoke: the set from the registry, verified, then run on this node's GPUs.
  const PullReport pulled = pull(TransferRequest{
      .config = request.config, .store_root = {}, .recipe = request.recipe, .tier = request.tier, .digest = request.set});
  if (pulled.exit_code != ExitCode::ok) return fail(out, pulled.exit_code, "pulling " + request.set + " failed");
  const SmokeOutput smoked = run_smoke(SmokeRequest{.tier = request.tier,
                                                    .config = request.config,
                                                    .fatbin = std::nullopt,
                                                    .artifacts = {},
                                                    .artifact_sets = {request.set},
                                                    .engine = std::nullopt,
                                                    .kernels_dir = {},
                                                    .store_root = {},
                                                    .driver_library = "libcuda.so.1"},
                                       out);
  const ExitCode code = smoked.result.exit_code();
  out << "orchestrate: job: smoke test on this node: exit " << static_cast<int>(code) << "\n";
  if (smoked.attestations.empty())
    return fail(out, code == ExitCode::ok ? ExitCode::outside_failure : code,
                !smoked.result.driver_error ? "the smoke run attested nothing"
                                            : "no GPU driver on this node: " + *smoked.result.driver_error);
  // "sha256:NEW attests sha256:OLD for tier T: pass"
  const std::string& line = smoked.attestations.front();
  out << "orchestrate: job: " << line << "\n";
  const ExitCode handed = hand_back(request, out, line.substr(0, line.find(' ')));
  return handed != ExitCode::ok ? handed : code;
}

}  // namespace orc::app
