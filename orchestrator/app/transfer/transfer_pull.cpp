// Pull: bringing a set of the remote (transfer_find.cpp found it) into the
// store with every check done before the index row is written (transfer.hpp).
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <span>
#include <thread>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/cache/signed_files.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/file_lock.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using util::ExitCode;

namespace {

// A signature document is ~250 bytes; anything near this is not one.
constexpr std::uint64_t k_max_signature_bytes = 64 << 10;
// Signatures of one set looked at before giving up on finding a trusted one.
constexpr std::size_t k_max_signatures = 8;

// The signature documents that refer to the artifact manifest, checked in
// turn until one verifies; the first one's outcome when none does.
std::expected<std::pair<cache::Verification, std::string>, TransferError> fetch_signature(
    registry::Client& client, const RemoteSet& set, const std::string& manifest_bytes,
    const cache::TrustedKeys& trusted, const fs::path& temp) {
  auto referrers = client.referrers(set.artifact_digest, registry::k_signature_artifact_type);
  if (!referrers) return std::unexpected(from_registry(referrers.error()));
  std::pair<cache::Verification, std::string> best{cache::verify_manifest(manifest_bytes, std::nullopt, trusted), ""};
  bool first = true;
  for (std::size_t i = 0; i < referrers->size() && i < k_max_signatures; ++i) {
    auto fetched = client.get_manifest((*referrers)[i].digest.to_string());
    if (!fetched) return std::unexpected(from_registry(fetched.error()));
    auto parsed = registry::parse_manifest(fetched->body);
    if (!parsed) continue;
    auto layer = registry::read_signature(*parsed, set.artifact_digest);
    if (!layer || layer->size > k_max_signature_bytes) continue;
    if (auto got = client.fetch_blob(layer->digest, layer->size, temp); !got)
      return std::unexpected(from_registry(got.error()));
    auto text = cache::read_file(temp);
    if (!text) return std::unexpected(from_cache(text.error()));
    auto verification = cache::verify_manifest(manifest_bytes, *text, trusted);
    const bool verified = verification.status == cache::VerifyStatus::verified;
    if (first || verified) best = {std::move(verification), std::move(*text)};
    first = false;
    if (verified) break;
  }
  return best;
}

// Whether the files a layer unpacked to are exactly the signed manifest's:
// the same names, and each one's bytes hashing to the digest it names.
std::expected<void, cache::Error> check_layer(const cache::SignedFiles& signed_files,
                                              const std::vector<cache::UnpackedFile>& files,
                                              const digest::Digest& set) {
  const cache::SignedFiles::Check check = signed_files.check(files);
  if (check.written != check.named)
    return std::unexpected(cache::invalid_error("it holds " + std::to_string(check.written) +
                                                " files; the signed manifest of " + set.to_string() + " names " +
                                                std::to_string(check.named)));
  if (check.mismatches.empty()) return {};
  const auto& [f, written] = check.mismatches.front();
  if (!written) return std::unexpected(cache::invalid_error("it lacks " + f->path + " (as a file of its own)"));
  return std::unexpected(cache::invalid_error(
      "digest mismatch: " + f->path + " is sha256:" + written->sha256 + " (" + std::to_string(written->size) +
      " bytes); the signed manifest says sha256:" + f->sha256 + " (" + std::to_string(f->size) + " bytes)"));
}

// Moves a file of tmp/ whose bytes hash to `hex` into the store as that blob:
// a rename, not a copy. The file must be synced already; a blob already
// stored is kept and the file dropped. A blob is 0644 like every other (the
// file's own mode, from the layer, is the index's to keep).
std::expected<void, TransferError> adopt(cache::Store& store, const fs::path& file, const std::string& hex) {
  std::error_code ec;
  if (store.has_blob(hex)) {
    fs::remove(file, ec);
    return {};
  }
  if (::chmod(file.c_str(), 0644) != 0)
    return transfer_failed(ExitCode::outside_failure, cache::errno_message("chmod", file));
  if (auto moved = cache::commit_no_replace(file, store.blob_path(hex)); !moved)
    return std::unexpected(from_cache(moved.error()));
  return {};
}

}  // namespace

namespace {

using Pulled = std::expected<PulledSet, TransferError>;

// Empty when the caller asked for no key or `key` is the one it asked for.
std::string key_problem(const std::string& key, const digest::Digest& set, const PullOptions& options) {
  if (options.key.empty() || key == options.key) return {};
  return "refusing " + set.to_string() + ": it was built for cache key " + key.substr(0, 16) + "..., not " +
         options.key.substr(0, 16) + "..., the key asked for (a set another build made)";
}

// A set already stored is not pulled again; its signature is checked as
// stored (fetch checks it again, with the archs, before it serves it).
std::optional<Pulled> stored_set(cache::Store& store, const digest::Digest& set, const cache::TrustedKeys& trusted,
                                 const PullOptions& options) {
  auto entry = store.index().resolve(digest::DigestPrefix(set));
  if (!entry) return std::nullopt;
  if (auto problem = key_problem(entry->key, set, options); !problem.empty())
    return transfer_failed(ExitCode::check_failed, problem);
  auto loaded = cache::load_artifact_set(store, *entry, trusted);
  if (!loaded) return std::nullopt;
  if (options.require_smoke && options.tier)
    if (auto problem = site::smoke_problem(loaded->manifest, set, *options.tier, trusted))
      return transfer_failed(ExitCode::check_failed, "refusing " + *problem);
  return PulledSet{.entry = std::move(*entry), .downloaded = false, .signature = std::move(loaded->signature)};
}

// The signed manifest of a set and what its signature said: small, and
// enough to refuse a set before its large layer is downloaded.
struct SignedHeader {
  std::string manifest_bytes;
  cache::Manifest manifest;
  cache::Verification verification;
  std::string signature_text;
  bool signed_ok = false;
};

// Where one pull keeps its temporaries: everything gets a gc-collectable
// name (*.tmp) in case this process dies, and is removed on every way out.
struct PullScratch {
  fs::path tmp;
  std::string base;  // "pull-<16 hex>"
  TempPaths temps;
  fs::path make(const std::string& what) {
    temps.paths.push_back(cache::temp_name(tmp, base + "-" + what));
    return temps.paths.back();
  }
};

// The manifest (the config blob) and the signature, checked: signature
// (unless --insecure), annotations, arch coverage and smoke for the tier.
std::expected<SignedHeader, TransferError> fetch_header(registry::Client& client, const RemoteSet& set,
                                                        const PullOptions& options, const cache::TrustedKeys& trusted,
                                                        PullScratch& scratch) {
  const std::string name = set.set_digest.to_string();
  if (set.manifest.config.size > cache::k_max_manifest_bytes)
    return transfer_failed(ExitCode::check_failed, "the manifest of " + name + " is larger than any manifest can be");
  const fs::path manifest_file = scratch.make("manifest");
  if (auto got = client.fetch_blob(set.manifest.config.digest, set.manifest.config.size, manifest_file); !got)
    return std::unexpected(from_registry(got.error()));
  auto manifest_bytes = cache::read_file(manifest_file);
  if (!manifest_bytes) return std::unexpected(from_cache(manifest_bytes.error()));
  auto manifest = cache::parse_manifest(*manifest_bytes);
  if (!manifest) return transfer_failed(ExitCode::check_failed, "manifest " + name + ": " + manifest.error().message);
  if (manifest->recipe != set.info.recipe || manifest->tier != set.info.tier)
    return transfer_failed(ExitCode::check_failed, "manifest " + name + " is for " + manifest->recipe + " / " +
                                                       manifest->tier + " but its OCI annotations say " +
                                                       set.info.recipe + " / " + set.info.tier);
  if (auto problem = key_problem(manifest->key, set.set_digest, options); !problem.empty())
    return transfer_failed(ExitCode::check_failed, problem);
  auto signature = fetch_signature(client, set, *manifest_bytes, trusted, scratch.make("signature"));
  if (!signature) return std::unexpected(signature.error());
  SignedHeader header{.manifest_bytes = std::move(*manifest_bytes),
                      .manifest = std::move(*manifest),
                      .verification = std::move(signature->first),
                      .signature_text = std::move(signature->second),
                      .signed_ok = false};
  header.signed_ok = header.verification.status == cache::VerifyStatus::verified;
  if (!header.signed_ok && !options.insecure)
    return transfer_failed(ExitCode::check_failed, "refusing " + name + ": " + header.verification.detail);
  std::optional<recipe::Tier> recorded;
  if (!options.tier && options.recorded_tier) {
    std::string why;
    recorded = site::built_for_tier(header.manifest, &why);
    if (!recorded)
      return transfer_failed(ExitCode::check_failed,
                             "refusing " + name + ": " + why +
                                 ", and no configuration here names the tier's GPUs (give the site's orchestrate.yaml "
                                 "with -f or ORCHESTRATE_CONFIG)");
  }
  if (const recipe::Tier* tier = options.tier ? options.tier : recorded ? &*recorded : nullptr) {
    const site::ArchCoverage coverage = site::check_arch_coverage(header.manifest, *tier);
    if (!coverage.ok)
      return transfer_failed(ExitCode::check_failed, "refusing " + name + ": " + util::join(coverage.problems, "; "));
    if (options.require_smoke)
      if (auto problem = site::smoke_problem(header.manifest, set.set_digest, *tier, trusted))
        return transfer_failed(ExitCode::check_failed, "refusing " + *problem);
  }
  return header;
}

// How the layer is unpacked: only the files the signed manifest names, at
// their sizes and modes (nothing else, links, devices, extra names, a mode
// the signature does not cover, is ever created), capped at the manifest's
// sizes, mirrored into fetch's DIR. A large file's signed chunks are checked
// on several threads and its blob named by the signed whole-file digest,
// only for a manifest a trusted key signed: with --insecure the name of a
// blob must come from its bytes (else such a manifest could name its bytes
// after another set's file and poison that blob).
cache::UnpackOptions layer_unpack_options(const SignedHeader& header, const cache::SignedFiles& signed_files,
                                          const PullOptions& options, const digest::Digest& set) {
  return {
      .sync = true,
      .hash = true,
      .mirror = options.dir,
      .max_bytes = std::max<std::uint64_t>(signed_files.total_size(), 1),
      .admit = [&signed_files](std::string_view name, std::uint64_t size,
                               unsigned mode) { return signed_files.admit(name, size, mode); },
      .signed_file = [&signed_files, ok = header.signed_ok](std::string_view name) -> const cache::ManifestFile* {
        return ok ? signed_files.find(name) : nullptr;
      },
      .check = [&signed_files,
                set](const std::vector<cache::UnpackedFile>& files) { return check_layer(signed_files, files, set); }};
}

// The layer, streamed: unpacked while it downloads (no copy of it is kept),
// each file hashed as it is written into `staging` (synced: it becomes the
// store's blobs) and, for fetch, into DIR as well (not synced: the user's
// output). Both trees are renamed into place only after every file matched
// the signed manifest, so the layer's own digest, which no signature covers,
// is not recomputed.
std::expected<std::vector<cache::UnpackedFile>, TransferError> stream_layer(
    registry::Client& client, const RemoteSet& set, const SignedHeader& header, const PullOptions& options,
    const fs::path& staging, const TransferProgress& progress) {
  const auto& layer = set.manifest.layers.front();
  const cache::SignedFiles signed_files(header.manifest);
  const cache::UnpackOptions unpack_options = layer_unpack_options(header, signed_files, options, set.set_digest);
  cache::ArchivePipe pipe;
  std::expected<std::vector<cache::UnpackedFile>, cache::Error> files = std::unexpected(cache::io_error("not run"));
  std::thread unpacker([&] {
    ::pthread_setname_np(::pthread_self(), "orc-unpack");
    try {
      files = cache::unpack_stream(pipe, staging, unpack_options);
    } catch (const std::exception& e) {
      files = std::unexpected(cache::io_error(std::string("unpacking: ") + e.what()));
    }
    // Done either way: the bytes after the archive's end are not needed (every
    // file was checked), and a refusal must stop the download.
    pipe.close();
  });
  // Joins the unpacker on every way out, exceptions included.
  struct Join {
    cache::ArchivePipe& pipe;
    std::thread& thread;
    ~Join() {
      if (!thread.joinable()) return;
      pipe.fail(cache::io_error("the download was abandoned"));
      thread.join();
    }
  } join{pipe, unpacker};
  std::atomic<std::uint64_t> received{0};
  std::expected<void, registry::Error> got;
  progress.download(
      "layer " + layer.digest.hex().substr(0, 12), layer.size, [&] { return received.load(); },
      [&] {
        got = client.stream_blob(layer.digest, layer.size, [&](std::string_view bytes) {
          received += bytes.size();
          try {
            return pipe.push(std::as_bytes(std::span(bytes.data(), bytes.size())));
          } catch (const std::exception&) {  // never through libcurl's C frames
            return false;
          }
        });
        if (got)
          pipe.finish();
        else
          pipe.fail(cache::io_error(got.error().message));
        unpacker.join();
        return files.has_value();
      });
  if (files) return std::move(*files);
  // The unpacker's own failure first: a refusal, or a local error that
  // stopped the download; the remote's only when it is what ended the unpack.
  const bool remote = !got && files.error().message == got.error().message;
  if (!remote && files.error().kind == cache::ErrorKind::invalid)
    return transfer_failed(ExitCode::check_failed,
                           "refusing the layer of " + set.set_digest.to_string() + ": " + files.error().message);
  if (remote) return std::unexpected(from_registry(got.error()));
  return std::unexpected(from_cache(files.error()));
}

// The staged files become blobs, then the manifest and signature, and last
// the index row. DIR is in place when this starts: a failure takes it away.
Pulled record_pulled(cache::Store& store, SignedHeader& header, std::vector<cache::UnpackedFile> files,
                     const fs::path& staging, const digest::Digest& set, const PullOptions& options) {
  struct Undo {
    fs::path dir;
    ~Undo() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } undo{options.dir};
  for (const auto& f : files)
    if (auto adopted = adopt(store, staging / f.name, f.sha256); !adopted) return std::unexpected(adopted.error());
  if (auto put = store.put_bytes(header.manifest_bytes); !put) return std::unexpected(from_cache(put.error()));
  cache::IndexEntry entry = cache::index_entry(header.manifest, set);
  for (auto& f : entry.files)
    if (auto from = std::ranges::find(files, f.path, &cache::UnpackedFile::name); from != files.end())
      f.mode = from->mode;
  if (!header.signature_text.empty()) {
    auto put = store.put_bytes(header.signature_text);
    if (!put) return std::unexpected(from_cache(put.error()));
    entry.signature = put->digest;
    entry.signer = header.verification.key_id;
  }
  // Verified means what `fetch` by tier may serve without asking again.
  entry.verified = header.signed_ok && (options.tier != nullptr || options.recorded_tier);
  auto id = store.record(entry);
  if (!id) return std::unexpected(from_cache(id.error()));
  entry.id = *id;
  undo.dir.clear();
  return PulledSet{
      .entry = std::move(entry), .downloaded = true, .signature = header.verification, .files = std::move(files)};
}

}  // namespace

std::expected<PulledSet, TransferError> pull_set(cache::Store& store, registry::Client& client, const RemoteSet& set,
                                                 const PullOptions& options, const TransferProgress& progress) {
  static const cache::TrustedKeys k_none;
  const cache::TrustedKeys& trusted = options.trusted ? *options.trusted : k_none;
  if (auto report = stored_set(store, set.set_digest, trusted, options)) return std::move(*report);
  // One pull per set at a time in this store: the others wait here, then
  // find the row the first one wrote (one download for N concurrent fetches).
  PullScratch scratch{
      .tmp = store.tmp_dir(), .base = "pull-" + set.set_digest.hex().substr(0, site::k_tag_digest_chars), .temps = {}};
  util::FileLock lock(store.root() / "locks.v1" / (scratch.base + ".lock"), progress.stream());
  if (auto report = stored_set(store, set.set_digest, trusted, options)) return std::move(*report);
  auto held = store.pin();
  if (!held) return std::unexpected(from_cache(held.error()));
  auto header = fetch_header(client, set, options, trusted, scratch);
  if (!header) return std::unexpected(header.error());
  const fs::path staging = scratch.make("files");  // a .tmp tree: gc's if we die
  auto files = stream_layer(client, set, *header, options, staging, progress);
  if (!files) return std::unexpected(files.error());
  return record_pulled(store, *header, std::move(*files), staging, set.set_digest, options);
}

}  // namespace orc::app
