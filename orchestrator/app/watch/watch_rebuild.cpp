// The rebuild half of a watch cycle: each stale pair that an image offer
// serves is, under its lock in the store, judged again, its image pulled
// through the engine, built with app::build in that image (the trigger
// recorded in the manifest), smoke-tested when a GPU of the tier is here,
// and pushed when a remote is configured. A pair stale by a Debian offer
// has its offline image made again first (images build), then is built in it.
#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/site/image_state.hpp"
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

// An offline image made again in this cycle, or why that failed.
struct MadeImage {
  site::ImageRecord record;
  std::string error;
  ExitCode code = ExitCode::ok;
};

void fail(WatchOutcome& outcome, ExitCode code, std::string detail) {
  outcome.action = WatchAction::failed;
  outcome.exit_code = code;
  outcome.detail = std::move(detail);
}

// "sha256:..." of the pulled manifest: the engine's RepoDigests entry of the
// image's repository.
std::string pulled_digest(const engine::ImageInfo& info, std::string_view reference) {
  const auto parsed = digest::ImageReference::parse(reference);
  if (!parsed) return {};
  const std::string prefix = parsed->repository() + "@";
  for (const auto& d : info.digests)
    if (d.starts_with(prefix)) return d.substr(prefix.size());
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

// Builds the pair in the decision's image (`image`: a pulled registry
// image; nullopt: the plan's own, for an offline image made here); the
// rebuild's manifest says why.
void build_pair(const WatchRequest& request, const engine::Discovery& discovery, WatchPair& pair,
                std::optional<ImageOverride> image, const std::string& digest,
                const compat::ToolkitTable* toolkits = nullptr) {
  const watch::Offer& take = *pair.decision.take;
  const std::string to_toolkit = take.toolkit.size() >= 2 ? take.toolkit.str() : pair.toolkit;
  BuildRequest build_request{.config = request.config,
                             .tiers = {pair.tier},
                             .recipes = {pair.recipe},
                             .engine = discovery.kind,
                             .jobs = 0,
                             .explain = false,
                             .store_root = request.store_root,
                             .terminal = request.terminal,
                             .keep_failed = false,
                             .image = std::move(image),
                             .trigger = cache::RebuildTrigger{.reason = pair.decision.reason,
                                                              .from_set = pair.current_set,
                                                              .from_toolkit = pair.toolkit,
                                                              .from_image = pair.image,
                                                              .from_image_digest = {},
                                                              .to_toolkit = to_toolkit,
                                                              .to_image = take.image,
                                                              .to_image_digest = digest},
                             .cancel = request.cancel};
  build_request.toolkits = toolkits;
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
    pair.outcome.detail = "the build was stopped; nothing of it was stored, the next cycle builds it again";
    return;
  }
  if (result.status == BuildStatus::failed || !result.manifest)
    return fail(pair.outcome, result.exit_code == ExitCode::ok ? ExitCode::check_failed : result.exit_code,
                util::join(result.errors, "; "));
  pair.outcome.action = WatchAction::rebuilt;
  pair.outcome.set = *result.manifest;
  if (result.status == BuildStatus::cached) pair.outcome.detail = "the store had this build already (a cache hit)";
}

// False (the outcome says who holds it) when another watcher holds the pair's lock.
bool locked_out(const util::FileLock& lock, WatchPair& pair) {
  if (lock.held()) return false;
  const std::string pid = lock.holder();
  pair.outcome.action = WatchAction::locked;
  pair.outcome.detail = "another watcher" + (pid.empty() ? std::string() : " (pid " + pid + ")") + " is rebuilding " +
                        pair.recipe + "/" + pair.tier + "; skipped";
  return true;
}

// Under the pair's lock: its newest set read again (another watcher may
// have rebuilt it between the poll and the lock) and judged again when it
// changed; nullopt, the outcome filled, when there is nothing to do.
std::optional<Built> recheck(const recipe::Config& config, cache::Store& store, const std::vector<watch::Offer>& offers,
                             const std::vector<watch::Probe>& probes, WatchPair& pair) {
  const recipe::Recipe* r = config.find_recipe(pair.recipe);
  auto built = newest_set(store, pair.recipe, pair.tier);
  if (!r || !built) {
    fail(pair.outcome, ExitCode::outside_failure, "the pair's set left the store");
    return std::nullopt;
  }
  if (built->manifest != *pair.current_set) {
    judge(pair, *built, config, *r, offers, probes);
    if (!pair.decision.stale) {
      pair.outcome.action = WatchAction::overtaken;
      pair.outcome.detail = "rebuilt meanwhile by another watcher (" + built->manifest.to_string() + ")";
      return std::nullopt;
    }
  }
  return built;
}

void rebuild_pair(const WatchRequest& request, const recipe::Config& config, cache::Store& store,
                  std::vector<watch::Offer> offers, std::vector<watch::Probe>& probes,
                  const engine::Discovery& discovery, WatchPair& pair) {
  const util::FileLock lock(lock_path(store, pair), util::FileLock::NoWait{});
  if (locked_out(lock, pair)) return;
  const auto built = recheck(config, store, offers, probes, pair);
  if (!built) return;
  const recipe::Recipe* r = config.find_recipe(pair.recipe);
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
      const std::string* why = pair.decision.declined_for(take.toolkit);
      return fail(pair.outcome, ExitCode::check_failed,
                  "the image " + take.image + " did not pass its probe" + (why ? ": " + *why : ""));
    }
    if (pair.decision.take->image == take.image) probe = *probed;
  }
  if (!probe) return fail(pair.outcome, ExitCode::check_failed, "each image taken failed its probe");
  // The plan compiles for what the image's nvcc lists, not for the row: the
  // pair's plan reads a copy of the table that learned it.
  const util::Version release = probe->nvcc;
  if (const compat::Toolkit* row = compat::find_toolkit(release))
    pair.outcome.table_differences = watch::table_differences(*row, *probe);
  compat::ToolkitTable toolkits = compat::ToolkitTable::known();
  toolkits.learn(release, probe->sass,
                 "nvcc --list-gpu-code in " + probe->image + "@" + probe->digest + " (" + probe->probed_at + ")");
  const watch::Offer& take = *pair.decision.take;
  build_pair(request, discovery, pair,
             ImageOverride{.reference = take.image, .digest = pair.outcome.image_digest, .toolkit = take.toolkit},
             pair.outcome.image_digest, &toolkits);
  if (pair.outcome.action != WatchAction::rebuilt) return;
  smoke_here(request, config, pair);
  push_remote(request, config, pair);
}

// "name=version" entries of `wanted` that `have` holds at another version (or not at all).
std::vector<std::string> unlike(const std::vector<std::string>& wanted, const std::vector<std::string>& have) {
  std::vector<std::string> out;
  for (const std::string& w : wanted) {
    const std::string name = w.substr(0, w.find('='));
    const auto it = std::ranges::find_if(have, [&](const std::string& h) { return h.starts_with(name + "="); });
    if (it == have.end() || *it != w) out.push_back(w + " (the image has " + (it == have.end() ? "none" : *it) + ")");
  }
  return out;
}

// A Debian offer: the offline image is made again from the archive when the
// decision says so (once per cycle however many pairs it serves) and its new
// record checked against the index read; then the pair is built by its plan,
// which takes that image as any build does.
void rebuild_offline(const WatchRequest& request, const recipe::Config& config, cache::Store& store,
                     const std::vector<watch::Offer>& offers, std::vector<watch::Probe>& probes,
                     const engine::Discovery& discovery, WatchPair& pair, std::map<std::string, MadeImage>& made) {
  const util::FileLock lock(lock_path(store, pair), util::FileLock::NoWait{});
  if (locked_out(lock, pair)) return;
  if (!recheck(config, store, offers, probes, pair)) return;
  const watch::Offer& take = *pair.decision.take;
  const compat::OfflineImage* image = compat::find_offline_image(take.image);
  if (!image) return fail(pair.outcome, ExitCode::bad_input, take.image + " is not in the image catalog");
  std::string image_id;
  if (pair.decision.make_image) {
    auto [it, first] = made.try_emplace(take.image);
    MadeImage& m = it->second;
    if (first) {
      if (request.progress)
        *request.progress << "watch: making " << take.image << " again (" << take.detail << ", "
                          << util::join(take.packages, " ") << ")\n";
      try {
        std::ostringstream ignored;
        m.record = build_image(ImageBuildRequest{.name = std::string(image->name),
                                                 .engine_socket = discovery.socket,
                                                 .cache_dir = std::nullopt,
                                                 .state_file = std::nullopt,
                                                 .images_dir = {},
                                                 .mirror = {},
                                                 .rebuild = true},
                               request.progress ? *request.progress : ignored)
                       .record;
      } catch (const util::Failure& failure) {
        m.code = failure.code();
        for (const auto& d : failure.diagnostics()) m.error += (m.error.empty() ? "" : "; ") + d.message;
        m.error = "making " + take.image + " again failed: " + m.error;
      }
      if (m.error.empty())
        if (const auto behind = unlike(take.packages, m.record.packages); !behind.empty()) {
          m.code = ExitCode::outside_failure;
          m.error = take.image + " was made again, but the mirror it is made from does not yet have what " + take.feed +
                    " lists: " + util::join(behind, ", ") + "; the next cycle tries again";
        }
    }
    if (!m.record.id.empty())
      pair.outcome.image_made = take.image + " (" + m.record.id + "): " + util::join(m.record.packages, " ");
    if (!m.error.empty()) return fail(pair.outcome, m.code, m.error);
    image_id = m.record.id;
  } else if (const auto record = site::find_built_image(take.image)) {
    image_id = record->id;
  }
  pair.outcome.image_digest = image_id;
  build_pair(request, discovery, pair, std::nullopt, image_id);
  if (pair.outcome.action != WatchAction::rebuilt) return;
  smoke_here(request, config, pair);
  push_remote(request, config, pair);
}

}  // namespace

void rebuild_stale(const WatchRequest& request, const recipe::Config& config, cache::Store& store,
                   const std::vector<watch::Offer>& offers, std::vector<watch::Probe>& probes, WatchReport& report) {
  std::optional<engine::Discovery> discovery;
  std::string no_engine;
  std::map<std::string, MadeImage> made;  // offline images made again this cycle, by reference
  for (WatchPair& pair : report.pairs) {
    if (!pair.decision.stale || !pair.decision.take) continue;
    if (request.cancel && request.cancel->requested()) {
      pair.outcome.action = WatchAction::cancelled;
      pair.outcome.detail = "not started";
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
    if (pair.decision.take->debian)
      rebuild_offline(request, config, store, offers, probes, *discovery, pair, made);
    else
      rebuild_pair(request, config, store, offers, probes, *discovery, pair);
  }
}

}  // namespace orc::app::detail
