#include "orchestrator/app/transfer/fetch.hpp"

#include <algorithm>
#include <cstdlib>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/set_record.hpp"
#include "orchestrator/cache/signed_files.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/library_needs.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;

namespace {

[[noreturn]] void fail(ExitCode code, std::string message) { throw util::Failure(code, std::move(message)); }

// The local set that answers the request, if the store has one.
// `tier` null: the tier each set's manifest records.
// `newer` is set to a verified set newer by time than the current one the
// tier names, which is not the one fetched.
std::optional<cache::IndexEntry> local_set(const cache::Store& store, const TransferRequest& request,
                                           const recipe::Tier* tier, const cache::TrustedKeys& trusted,
                                           std::optional<digest::Digest>& newer) {
  // --require-smoke by tier: the newest verified set that attests a pass.
  if (request.digest.empty() && request.require_smoke) {
    auto sets = store.index().list({.recipe = request.recipe, .tier = request.tier, .verified_only = true});
    if (!sets) site::fail_with(sets.error());
    for (auto& e : *sets) {  // newest first
      auto loaded = cache::load_artifact_set(store, e, trusted);
      if (!loaded) continue;
      const std::optional<recipe::Tier> recorded = tier ? std::nullopt : site::built_for_tier(loaded->manifest);
      if ((tier || recorded) && !site::smoke_problem(loaded->manifest, e.manifest, tier ? *tier : *recorded, trusted))
        return std::move(e);
    }
    return std::nullopt;
  }
  if (request.digest.empty()) {
    auto current = cache::current_set(store, request.recipe, request.tier);
    if (!current) site::fail_with(current.error());
    if (current->newer) newer = current->newer->manifest;
    return std::move(current->entry);
  }
  auto entry = store.index().resolve(digest_argument(request.digest));
  if (!entry && entry.error().kind == cache::ErrorKind::not_found) return std::nullopt;
  if (!entry) site::fail_with(entry.error());
  if (entry->recipe != request.recipe || entry->tier != request.tier)
    util::fail_input(entry->manifest.to_string() + " is " + entry->recipe + " for " + entry->tier + ", not " +
                     request.recipe + " for " + request.tier);
  return std::move(*entry);
}

struct Pulled {
  cache::IndexEntry entry;
  std::string from;         // the remote's URL
  bool downloaded = false;  // and DIR written from the same pass
};

// Pulls the set from the remote, filling `dir` on the way; only the remote
// can serve now, so its failures end the command (exit 3, or 1 for a
// refused set).
Pulled pull_remote(cache::Store& store, const recipe::Config* config, const recipe::Tier* tier,
                   const cache::TrustedKeys& trusted, const TransferRequest& request, const fs::path& dir) {
  const std::string what = request.recipe + " for " + request.tier +
                           (request.digest.empty() ? "" : " (" + request.digest + ")") +
                           (request.require_smoke ? " with a passing smoke attestation" : "");
  const site::RemoteChoice remote = require_remote(config, "the local store has no verified " + what);
  auto client = site::make_client(remote.url, request.deadlines);
  const TransferProgress progress(request.progress, request.terminal);
  auto set =
      find_requested_set(*client, request, tier, trusted, cache::temp_name(store.tmp_dir(), "fetch-smoke-manifest"));
  const PullOptions options{.trusted = &trusted,
                            .tier = tier,
                            .recorded_tier = tier == nullptr,
                            .insecure = request.insecure,
                            .require_smoke = request.require_smoke,
                            .dir = dir};
  auto report = set ? pull_set(store, *client, *set, options, progress) : std::unexpected(set.error());
  if (!report) {
    std::string message = report.error().message;
    if (report.error().code == ExitCode::outside_failure)
      message = "the local store has no verified " + what + " and the remote failed: " + message;
    fail(report.error().code, message);
  }
  return {std::move(report->entry), client->display_url(), report->downloaded};
}

// Checks files written (and hashed while written) against the signed
// manifest: before DIR is renamed into place.
std::expected<void, cache::Error> check_files(const cache::SignedFiles& signed_files,
                                              const std::vector<cache::UnpackedFile>& written) {
  const cache::SignedFiles::Check check = signed_files.check(written);
  std::vector<std::string> problems;
  for (const auto& m : check.mismatches)
    problems.push_back(m.written ? m.expected->path + " is sha256:" + m.written->sha256 +
                                       ", its manifest says sha256:" + m.expected->sha256
                                 : m.expected->path + " is missing (or not a file of its own)");
  if (problems.empty()) return {};
  return std::unexpected(cache::Error{cache::ErrorKind::corrupt, util::join(problems, "; ")});
}

[[noreturn]] void fail_writing(const cache::Error& error, const digest::Digest& manifest, const fs::path& dir) {
  if (error.kind == cache::ErrorKind::corrupt)
    fail(ExitCode::check_failed, manifest.to_string() + ": " + error.message + " (run 'orchestrate cache verify')");
  fail(error.kind == cache::ErrorKind::invalid ? ExitCode::check_failed : ExitCode::outside_failure,
       "unpacking " + manifest.to_string() + " into " + dir.string() + ": " + error.message);
}

// Writes DIR from a set the store already held: unpacked from its pack, or
// copied from its file blobs with the modes the index keeps (a pulled set),
// hashed while written either way and checked against the signed manifest
// before DIR is renamed into place: the bytes in DIR are the ones the
// signature covers, whatever happened to the store's copies since. DIR is
// the user's output, not the store, so it is not fsynced (like any
// program's output); the store's own copies are.
void write_dir(cache::Store& store, const cache::IndexEntry& entry, const cache::Manifest& manifest,
               const fs::path& dir) {
  const cache::SignedFiles signed_files(manifest);
  const auto check = [&](const std::vector<cache::UnpackedFile>& written) {
    return check_files(signed_files, written);
  };
  if (entry.pack && store.has_blob(*entry.pack)) {
    auto unpacked = cache::unpack(store.blob_path(*entry.pack), dir,
                                  {.sync = false,
                                   .hash = true,
                                   .max_bytes = std::max<std::uint64_t>(signed_files.total_size(), 1),
                                   .admit = [&](std::string_view name, std::uint64_t size,
                                                unsigned mode) { return signed_files.admit(name, size, mode); },
                                   .check = check});
    if (!unpacked) fail_writing(unpacked.error(), entry.manifest, dir);
    return;
  }
  // The signed mode wins over the index's (they agree unless the index was
  // changed); a manifest without modes gets 0755 or 0644 (landing_mode).
  std::vector<cache::PlacedFile> files;
  for (const auto& f : entry.files) {
    const cache::ManifestFile* signed_file = signed_files.find(f.path);
    files.push_back({.name = f.path,
                     .source = store.blob_path(f.sha256),
                     .mode = signed_file ? cache::landing_mode(*signed_file, f.mode) : f.mode & 0644u});
  }
  auto placed = cache::place_files(files, dir, {.check = check});
  if (!placed) fail_writing(placed.error(), entry.manifest, dir);
}

// DIR/.orchestrate/set.v1: the signed manifest beside the files, so that
// DIR says which set it is (inspect judges it against its own tier). The
// files are fetched either way: a record that cannot be written is a warning.
void record_set(const cache::Store& store, const cache::IndexEntry& entry, const fs::path& dir,
                std::vector<util::Diagnostic>& warnings) {
  auto bytes = store.read_blob(entry.manifest);
  std::optional<std::string> signature;
  if (bytes && entry.signature) {
    auto text = store.read_blob(*entry.signature);
    if (text) signature = std::move(*text);
  }
  auto written = bytes ? cache::write_set_record(dir, *bytes, signature) : std::unexpected(bytes.error());
  if (!written)
    warnings.push_back({.severity = util::Severity::warning,
                        .message = dir.string() + " does not record which set it holds (" + written.error().message +
                                   "): 'orchestrate inspect' judges it as plain files"});
}

// Removes DIR, written by a pull, when the command fails after it.
struct DirGuard {
  fs::path dir;
  bool existed = false;  // empty, before the command
  bool armed = false;
  ~DirGuard() {
    if (!armed) return;
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (existed) fs::create_directory(dir, ec);
  }
};

}  // namespace

FetchReport fetch(const TransferRequest& request, const fs::path& out_dir) {
  if (request.recipe.empty() || request.tier.empty()) util::fail_input("fetch needs RECIPE and --tier T");
  // A consuming node may have no configuration: then the remote is
  // ORCHESTRATE_REMOTE, the trusted keys those of the keys dir, and the set
  // is judged against the tier its signed manifest records.
  const auto config = site::load_config_file(request.config, request.config_named);
  const recipe::Tier* tier = config ? &find_tier(*config, request.tier) : nullptr;
  const cache::TrustedKeys trusted = site::trusted_keys(config ? &*config : nullptr);
  const fs::path dir = out_dir.empty() ? fs::path(request.recipe + "-" + request.tier) : out_dir;
  std::error_code ec;
  // The files land in a private tree renamed onto DIR at the end, which a
  // symlink cannot take: refused before anything is read, as bad input.
  if (fs::is_symlink(fs::symlink_status(dir, ec)))
    util::fail_input(dir.string() + " is a symlink; fetch unpacks into a new directory of its own: give the path " +
                     "it points to, or a new one (-o DIR)");
  if (fs::exists(fs::symlink_status(dir, ec)) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    util::fail_input(dir.string() + " exists and is not an empty directory; fetch unpacks into a new one (-o DIR)");
  // A set the store holds is fetched without writing the store: it may be read-only.
  auto opened = cache::Store::open(site::store_root(request.store_root), cache::StoreAccess::read);
  if (!opened) site::fail_with(opened.error());
  cache::Store& store = *opened;
  auto held = store.pin();
  if (!held) site::fail_with(held.error());

  FetchReport result{.recipe = request.recipe, .tier = request.tier, .dir = dir, .from = "store"};
  DirGuard guard{.dir = dir, .existed = fs::exists(dir, ec)};
  std::optional<digest::Digest> newer;
  auto entry = local_set(store, request, tier, trusted, newer);
  if (newer)
    result.warnings.push_back({.severity = util::Severity::warning,
                               .message = "a newer set by time, " + newer->to_string() +
                                          ", is not the current set of " + request.recipe + " for " + request.tier +
                                          " ('orchestrate promote " + request.recipe + " --tier " + request.tier +
                                          " --digest " + newer->to_string() + "' makes it so)"});
  bool written = false;  // DIR, by the pull
  if (!entry && store.read_only())
    fail(ExitCode::outside_failure,
         "the local store has no verified " + request.recipe + " for " + request.tier +
             ", and pulling it from the remote needs to write the store: " + store.read_only()->message);
  if (!entry) {
    // A pull that fails takes away a DIR it made; one that succeeds hands it over here.
    Pulled pulled = pull_remote(store, config ? &*config : nullptr, tier, trusted, request, dir);
    entry = std::move(pulled.entry);
    result.from = std::move(pulled.from);
    written = pulled.downloaded;
    guard.armed = written;
  }
  result.manifest = entry->manifest;

  auto loaded = cache::load_artifact_set(store, *entry, trusted);
  if (!loaded) site::fail_with(loaded.error());
  result.signature_ok = loaded->signature.status == cache::VerifyStatus::verified;
  result.signer = loaded->signature.key_id;
  if (request.insecure)
    result.warnings.push_back(insecure_diagnostic(entry->manifest, loaded->signature));
  else if (!result.signature_ok)
    fail(ExitCode::check_failed, "refusing " + entry->manifest.to_string() + ": " + loaded->signature.detail +
                                     " (--insecure skips the signature check)");
  std::string why;
  const std::optional<recipe::Tier> recorded = tier ? std::nullopt : site::built_for_tier(loaded->manifest, &why);
  if (!tier && !recorded)
    fail(ExitCode::check_failed, "refusing " + entry->manifest.to_string() + ": " + why +
                                     ", and no configuration here names the tier's GPUs (give the site's "
                                     "orchestrate.yaml with -f or ORCHESTRATE_CONFIG)");
  const recipe::Tier& judged = tier ? *tier : *recorded;
  result.tier_from_manifest = tier == nullptr;
  const site::ArchCoverage coverage = site::check_arch_coverage(loaded->manifest, judged);
  if (!coverage.ok)
    fail(ExitCode::check_failed,
         "refusing " + entry->manifest.to_string() + ": " + util::join(coverage.problems, "; "));
  result.archs_ok = true;
  result.jit = coverage.jit;
  for (const auto& u : coverage.unread) result.warnings.push_back({.severity = util::Severity::warning, .message = u});
  // Device code that runs on the tier starts only where the node provides these.
  for (const auto& n : site::set_needs(loaded->manifest))
    result.warnings.push_back({.severity = util::Severity::warning,
                               .message = "the set needs " + site::describe(n.need) + ", which it does not carry (" +
                                          util::join(n.files, ", ") + " links it): the nodes must provide it"});
  if (request.require_smoke) {
    if (auto problem = site::smoke_problem(loaded->manifest, entry->manifest, judged, trusted))
      fail(ExitCode::check_failed, "refusing " + *problem);
    result.smoke_ok = true;
  }

  if (!written) write_dir(store, *entry, loaded->manifest, dir);
  guard.armed = false;
  record_set(store, *entry, dir, result.warnings);
  result.digest_ok = true;
  for (const auto& f : loaded->manifest.files)
    result.files.push_back(
        {.path = f.path, .sha256 = f.sha256, .size = f.size, .sass = f.embedded_sass, .ptx = f.embedded_ptx});
  return result;
}

}  // namespace orc::app
