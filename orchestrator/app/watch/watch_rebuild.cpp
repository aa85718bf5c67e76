// The rebuild half of a watch cycle: each stale pair that an image offer
// serves is, under its lock in the store, judged again, its image pulled
// through the engine, built with app::build in that image (the trigger
// recorded in the manifest), smoke-tested when a GPU of the tier is here,
// and pushed when a remote is configured.
#include <algorithm>
#include <ostream>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/smoke/runner.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/file_lock.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::detail {

namespace {

namespace fs = std::filesystem;
using util::ExitCode;

// Engine output (a pull's progress lines) to the cycle's progress stream.
class ProgressLog final : public engine::LogSink {
 public:
  explicit ProgressLog(std::ostream* out) : m_out(out) {}
  void on_output(engine::OutputStream, std::string_view bytes) override {
    if (m_out) *m_out << "watch: " << bytes << std::flush;
  }

 private:
  std::ostream* m_out;
};

void fail(WatchOutcome& outcome, ExitCode code, std::string detail) {
  outcome.action = WatchAction::failed;
  outcome.exit_code = code;
  outcome.detail = std::move(detail);
}

// "sha256:..." of the pulled manifest: the engine's RepoDigests entry of the
// image's repository.
std::string pulled_digest(const engine::ImageInfo& info, std::string_view reference) {
  std::string_view repository = reference.substr(0, reference.find('@'));
  if (const auto colon = repository.rfind(':');
      colon != std::string_view::npos && repository.find('/', colon) == std::string_view::npos)
    repository = repository.substr(0, colon);
  for (const auto& d : info.digests)
    if (d.starts_with(std::string(repository) + "@")) return d.substr(repository.size() + 1);
  return {};
}

fs::path lock_path(const cache::Store& store, const WatchPair& pair) {
  return store.root() / "watch.v1" / "locks" / (pair.recipe + "--" + pair.tier + ".lock");
}

// Smoke-tests the new set on this machine's GPUs when one of them is of the
// tier; the attested set then replaces it as the pair's outcome.
void smoke_here(const WatchRequest& request, const recipe::Config& config, WatchPair& pair) {
  auto driver = smoke::Driver::open();
  if (!driver) {
    pair.outcome.smoke = "not run: " + driver.error();
    return;
  }
  const recipe::Tier* tier = config.find_tier(pair.tier);
  std::vector<std::string> here;
  bool member = false;
  for (const auto& g : driver->gpus()) {
    here.push_back(g.name + " (" + g.cc.dotted() + ")");
    if (tier && std::ranges::any_of(tier->gpus, [&](const auto& t) { return t.cc.base() == g.cc.base(); }))
      member = true;
  }
  if (!member) {
    pair.outcome.smoke = "not run: no GPU of tier " + pair.tier + " on this machine (" + util::join(here, ", ") + ")";
    return;
  }
  const SmokeRequest smoke{.tier = pair.tier,
                           .config = request.config,
                           .fatbin = std::nullopt,
                           .artifacts = {},
                           .artifact_sets = {pair.outcome.set->hex()},
                           .engine = request.engine,
                           .kernels_dir = {},
                           .store_root = request.store_root,
                           .driver_library = "libcuda.so.1"};
  std::ostringstream ignored;
  const SmokeOutput out = run_smoke(smoke, request.progress ? *request.progress : ignored);
  const ExitCode code = out.result.exit_code();
  pair.outcome.smoke = code == ExitCode::ok ? "pass" : "fail (exit " + std::to_string(static_cast<int>(code)) + ")";
  // "sha256:NEW attests sha256:OLD for tier T: pass": NEW is the set now.
  if (!out.attestations.empty()) {
    const std::string& line = out.attestations.front();
    if (auto attested = digest::Digest::parse(line.substr(0, line.find(' ')))) pair.outcome.set = *attested;
  }
  if (code != ExitCode::ok) pair.outcome.exit_code = std::max(pair.outcome.exit_code, ExitCode::check_failed);
}

// Pushes the new set where a remote is configured.
void push_remote(const WatchRequest& request, const recipe::Config& config, WatchPair& pair) {
  const auto remote = site::choose_remote(util::env_value("ORCHESTRATE_REMOTE").c_str(), &config);
  if (!remote) return;
  try {
    const PushReport pushed = push(TransferRequest{.config = request.config,
                                                   .store_root = request.store_root,
                                                   .recipe = pair.recipe,
                                                   .tier = pair.tier,
                                                   .digest = pair.outcome.set->hex()});
    if (pushed.exit_code == ExitCode::ok && !pushed.pushed.empty()) pair.outcome.pushed = pushed.pushed.front().tag;
    if (pushed.exit_code != ExitCode::ok) {
      pair.outcome.push_error =
          "pushing to " + pushed.remote + " failed (exit " + std::to_string(static_cast<int>(pushed.exit_code)) + ")";
      pair.outcome.exit_code = std::max(pair.outcome.exit_code, pushed.exit_code);
    }
  } catch (const util::Failure& failure) {
    pair.outcome.push_error = failure.diagnostics().empty() ? "push failed" : failure.diagnostics().front().message;
    pair.outcome.exit_code = std::max(pair.outcome.exit_code, failure.code());
  }
}

// Builds the pair in the decision's image; the rebuild's manifest says why.
void build_pair(const WatchRequest& request, const engine::Discovery& discovery, WatchPair& pair,
                const std::string& digest) {
  const watch::Offer& take = *pair.decision.take;
  BuildRequest build_request{.config = request.config,
                             .tiers = {pair.tier},
                             .recipes = {pair.recipe},
                             .engine = discovery.kind,
                             .jobs = 0,
                             .explain = false,
                             .store_root = request.store_root,
                             .terminal = request.terminal,
                             .keep_failed = false,
                             .image = ImageOverride{.reference = take.image, .digest = digest, .toolkit = take.toolkit},
                             .trigger = cache::RebuildTrigger{.reason = pair.decision.reason,
                                                              .from_set = pair.current_set,
                                                              .from_toolkit = pair.toolkit,
                                                              .from_image = pair.image,
                                                              .from_image_digest = {},
                                                              .to_toolkit = take.toolkit.str(),
                                                              .to_image = take.image,
                                                              .to_image_digest = digest},
                             .cancel = request.cancel};
  std::ostringstream ignored;
  BuildReport built;
  try {
    built = build(build_request, request.progress ? *request.progress : ignored);
  } catch (const util::Failure& failure) {
    std::string why;
    for (const auto& d : failure.diagnostics()) why += (why.empty() ? "" : "; ") + d.message;
    return fail(pair.outcome, failure.code(), why);
  }
  if (built.builds.empty()) return fail(pair.outcome, ExitCode::bad_input, "the plan holds no build of this pair");
  const BuildResult& result = built.builds.front();
  if (request.cancel && request.cancel->requested()) {
    pair.outcome.action = WatchAction::cancelled;
    pair.outcome.detail = "stopped by a signal; nothing of it was stored, the next cycle builds it again";
    return;
  }
  if (result.status == BuildStatus::failed || !result.manifest)
    return fail(pair.outcome, result.exit_code == ExitCode::ok ? ExitCode::check_failed : result.exit_code,
                util::join(result.errors, "; "));
  pair.outcome.action = WatchAction::rebuilt;
  pair.outcome.set = *result.manifest;
  if (result.status == BuildStatus::cached) pair.outcome.detail = "the store had this build already (a cache hit)";
}

void rebuild_pair(const WatchRequest& request, const recipe::Config& config, cache::Store& store,
                  std::vector<watch::Offer> offers, std::vector<watch::Probe>& probes,
                  const engine::Discovery& discovery, WatchPair& pair) {
  const util::FileLock lock(lock_path(store, pair), util::FileLock::NoWait{});
  if (!lock.held()) {
    const std::string pid = lock.holder();
    pair.outcome.action = WatchAction::locked;
    pair.outcome.detail = "another watcher" + (pid.empty() ? std::string() : " (pid " + pid + ")") + " is rebuilding " +
                          pair.recipe + "/" + pair.tier + "; skipped";
    return;
  }
  const recipe::Recipe* r = config.find_recipe(pair.recipe);
  const auto built = newest_set(store, pair.recipe, pair.tier);
  if (!r || !built) return fail(pair.outcome, ExitCode::outside_failure, "the pair's set left the store");
  // Another watcher may have rebuilt it between the poll and the lock.
  if (built->manifest != *pair.current_set) {
    judge(pair, *built, config, *r, offers, probes);
    if (!pair.decision.stale) {
      pair.outcome.action = WatchAction::overtaken;
      pair.outcome.detail = "rebuilt meanwhile by another watcher (" + built->manifest.to_string() + ")";
      return;
    }
  }
  auto engine = engine::DockerEngine::connect(discovery.socket, request.cancel);
  if (!engine)
    return fail(pair.outcome, ExitCode::outside_failure,
                "cannot reach the " + std::string(engine::to_string(discovery.kind)) + " engine at " +
                    discovery.socket.string() + ": " + engine.error().message);
  // Pull and probe the image taken; the probe may disqualify it (another
  // release's nvcc, a GPU of the tier missing), and the decision is made
  // again with what it said, which may take another offer.
  std::optional<watch::Probe> probe;
  for (int attempt = 0; attempt < 4 && !probe; ++attempt) {
    const watch::Offer take = *pair.decision.take;
    if (request.progress) *request.progress << "watch: pulling " << take.image << "\n";
    ProgressLog log(request.progress);
    auto pulled = engine->pull_image(take.image, &log);
    if (!pulled) return fail(pair.outcome, ExitCode::outside_failure, pulled.error().message);
    std::string digest = pulled_digest(*pulled, take.image);
    if (digest.empty()) digest = take.digest;
    // The tag may have moved since the poll: what was pulled is judged.
    for (auto& o : offers)
      if (o.image == take.image) o.digest = digest;
    auto probed = probe_image(request, *engine, take.image, digest, probes);
    if (!probed) return fail(pair.outcome, ExitCode::outside_failure, probed.error());
    pair.outcome.image_digest = digest;
    pair.outcome.probe = describe(*probed);
    judge(pair, *built, config, *r, offers, probes);
    if (!pair.decision.stale) {
      std::string why;
      for (const auto& d : pair.decision.declined)
        if (d.starts_with("CUDA " + take.toolkit.str() + " (")) why = d;
      return fail(pair.outcome, ExitCode::check_failed,
                  "the image " + take.image + " did not pass its probe" + (why.empty() ? "" : ": " + why));
    }
    if (pair.decision.take->image == take.image) probe = *probed;
  }
  if (!probe) return fail(pair.outcome, ExitCode::check_failed, "each image taken failed its probe");
  // The plan compiles for what the image's nvcc lists, not for the row.
  const util::Version release = probe->nvcc;
  if (const compat::Toolkit* row = compat::find_toolkit(release))
    pair.outcome.table_differences = watch::table_differences(*row, *probe);
  compat::learn_toolkit(
      release, probe->sass,
      "nvcc --list-gpu-code in " + probe->image + "@" + probe->digest + " (" + probe->probed_at + ")");
  build_pair(request, discovery, pair, pair.outcome.image_digest);
  if (pair.outcome.action != WatchAction::rebuilt) return;
  smoke_here(request, config, pair);
  push_remote(request, config, pair);
}

}  // namespace

void rebuild_stale(const WatchRequest& request, const recipe::Config& config, cache::Store& store,
                   const std::vector<watch::Offer>& offers, std::vector<watch::Probe>& probes, WatchReport& report) {
  std::optional<engine::Discovery> discovery;
  std::string no_engine;
  for (WatchPair& pair : report.pairs) {
    if (!pair.decision.stale || !pair.decision.take) continue;
    if (request.cancel && request.cancel->requested()) {
      pair.outcome.action = WatchAction::cancelled;
      pair.outcome.detail = "not started: the watcher was stopped";
      continue;
    }
    if (pair.decision.take->image.empty()) {
      fail(pair.outcome, ExitCode::bad_input, "no image offers " + pair.decision.take->toolkit.str());
      continue;
    }
    if (!discovery && no_engine.empty()) {
      auto found = engine::discover_engine(request.engine);
      if (!found)
        no_engine = found.error().message;
      else if (found->kind == engine::EngineKind::host)
        no_engine = "a rebuild runs in the image the feed offers, which needs a container engine (docker or podman): " +
                    found->reason;
      else
        discovery = *found;
    }
    if (!discovery) {
      fail(pair.outcome, ExitCode::outside_failure, no_engine);
      continue;
    }
    rebuild_pair(request, config, store, offers, probes, *discovery, pair);
  }
}

}  // namespace orc::app::detail
