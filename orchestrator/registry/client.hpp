#pragma once
// A distribution-v2 / OCI registry client for one repository: the /v2/
// check, blobs (HEAD, resumable verified GET, monolithic and chunked upload),
// manifests, tag lists and referrers (with the tag-schema fallback for
// registries without the referrers API). Authentication (anonymous, Basic,
// Bearer token) and retries happen inside; every expected failure is an
// Error whose message is safe to print.
#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "orchestrator/net/http.hpp"
#include "orchestrator/registry/auth.hpp"
#include "orchestrator/registry/deadline.hpp"
#include "orchestrator/registry/error.hpp"
#include "orchestrator/registry/layout.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/registry/retry.hpp"

namespace orc::registry {

// libcurl over TCP and TLS with a registry's limits: a transfer that moves
// no byte for 30 s is broken, and a held response (manifest, tag list,
// error) over 4 MiB fails, a registry being untrusted. `ca_bundle` replaces
// the system's CAs; verification stays on either way.
std::unique_ptr<net::Transport> make_curl_transport(std::filesystem::path ca_bundle = {});

struct ClientOptions {
  // "http://127.0.0.1:5000/team/artifacts"; credentials in the URL are taken
  // out of it and used like `credentials`.
  std::string url;
  std::optional<Credentials> credentials;
  RetryPolicy retry;
  // The deadline of each public call, retries and resumes included.
  DeadlinePolicy deadlines;
  // Waits between retries; tests record instead of sleeping.
  std::function<void(std::chrono::milliseconds)> sleep;
  // The clock deadlines are measured on; empty: steady_clock. Tests step
  // their own.
  std::function<std::chrono::steady_clock::time_point()> clock;
  // One line per request and per retry decision, credentials redacted.
  std::function<void(std::string_view)> log;
};

enum class UploadMode { monolithic, chunked };

enum class Durability { fsync, caller_syncs };

struct UploadOptions {
  UploadMode mode = UploadMode::monolithic;
  std::uint64_t chunk_size = 16 << 20;  // PATCH size in chunked mode
};

// What a blob upload reads: a file, or bytes (configs, signatures).
using BlobSource = std::variant<std::filesystem::path, std::string>;

struct PushedBlob {
  bool uploaded = false;  // false: the registry had it, nothing was sent
};

struct FetchedManifest {
  std::string media_type;  // Content-Type without parameters
  digest::Digest digest;   // of the bytes, verified
  std::string body;
};

struct PutManifestResult {
  digest::Digest digest;
  // The registry said (OCI-Subject header) that it indexed the manifest's
  // subject: the referrers API exists and no fallback tag is needed.
  bool subject_indexed = false;
};

// One Client per thread: it remembers the Authorization that last worked,
// and the deadline of the call under way. Every public call is one
// operation of deadline.hpp: when its deadline passes, it fails with
// ErrorKind::timeout, saying what timed out, after how long and with how
// many bytes moved.
class Client {
 public:
  // Throws util::Failure (bad_input) for a malformed URL: configuration.
  Client(ClientOptions options, std::shared_ptr<net::Transport> transport);

  const std::string& repository() const { return m_remote.repository; }
  // The repository URL without credentials, for messages.
  std::string display_url() const;

  // GET /v2/: reachable, speaks the API, credentials accepted.
  std::expected<void, Error> ping();

  // HEAD of a blob: its size, or nullopt when the registry lacks it.
  std::expected<std::optional<std::uint64_t>, Error> blob_size(const digest::Digest& digest);

  // Streams a blob to `destination`, verifying the digest (and `size` when
  // given) while reading. Bytes land in `destination` + ".partial" first; a
  // broken transfer resumes with Range (a partial file left by an earlier
  // run is re-hashed and continued); only verified bytes are renamed into
  // place. A digest mismatch removes the partial file.
  // With Durability::caller_syncs the fsync before the rename is left to a
  // caller that syncs anyway (the store fsyncs what it renames into place);
  // a 1 GiB fsync costs about as much as the transfer itself.
  std::expected<void, Error> fetch_blob(const digest::Digest& digest, std::optional<std::uint64_t> size,
                                        const std::filesystem::path& destination,
                                        Durability durability = Durability::fsync);

  // Streams a blob of `size` bytes to `receive` as it arrives, with no file:
  // a broken transfer resumes in this process with Range, and bytes a server
  // sends again from 0 are skipped, so `receive` sees each byte once, in
  // order. The digest is not recomputed here: the caller checks what the
  // bytes carry (a pull hashes every file of a layer against the signed
  // manifest). `receive` returning false stops the transfer (ErrorKind::io).
  std::expected<void, Error> stream_blob(const digest::Digest& digest, std::uint64_t size,
                                         const std::function<bool(std::string_view)>& receive);

  // Uploads a blob unless the registry has it (HEAD first).
  std::expected<PushedBlob, Error> push_blob(const digest::Digest& digest, const BlobSource& source,
                                             UploadOptions options = {});

  // PUT a manifest by tag or digest with its media type as Content-Type.
  std::expected<PutManifestResult, Error> put_manifest(std::string_view reference, std::string_view media_type,
                                                       std::string_view body);
  // GET a manifest or index by tag or digest; the body's digest is checked
  // against the reference (by digest) or Docker-Content-Digest (by tag).
  std::expected<FetchedManifest, Error> get_manifest(std::string_view reference);
  // DELETE /v2/<name>/manifests/<digest>: the manifest and every tag naming
  // it (202 Accepted). A registry that does not allow deletes answers 405
  // (distribution without storage.delete.enabled): an error whose status
  // says so.
  std::expected<void, Error> delete_manifest(const digest::Digest& digest);

  // Every tag, following Link pagination; `page_size` 0 lets the registry
  // choose.
  std::expected<std::vector<std::string>, Error> list_tags(std::size_t page_size = 0);

  // One GET of the tag list (at most `n` tags, no further page): whether the
  // repository can be read with the credentials we have. nullopt when the
  // registry does not know the repository (404: nothing was pushed yet).
  std::expected<std::optional<std::vector<std::string>>, Error> first_tags(std::size_t n);

  // The manifests whose subject is `digest`, of `artifact_type` when not
  // empty: the referrers API, or the "sha256-<hex>" tag where it is missing.
  std::expected<std::vector<Descriptor>, Error> referrers(const digest::Digest& digest,
                                                          std::string_view artifact_type = {});

  // PUTs a manifest that has a subject, by its digest, and makes it findable
  // by referrers(): nothing more when the registry indexes subjects, else
  // adds it to the fallback tag's index.
  std::expected<digest::Digest, Error> put_referrer(const Manifest& parsed, std::string_view body);

 private:
  class DownloadSink;
  // The deadline of one public call, set up by the outermost one: a call
  // made inside another (referrers' fallback, push_blob's HEAD) runs under
  // the outer one's deadline.
  class Operation {
   public:
    Operation(Client& client, std::string what, std::uint64_t size = 0, Direction direction = Direction::download);
    ~Operation();
    Operation(const Operation&) = delete;
    Operation& operator=(const Operation&) = delete;

   private:
    Client& m_client;
    bool m_owner;
  };
  struct Deadline {
    TimedOut report;
    std::chrono::steady_clock::time_point at;
  };

 public:
  class BlobWriter;  // where a download's bytes go (client_blobs.cpp)

 private:
  // The GET loop of fetch_blob and stream_blob: resumes with Range from
  // `have`, retries per the policy.
  std::expected<void, Error> download(const digest::Digest& digest, std::optional<std::uint64_t> size,
                                      std::uint64_t& have, BlobWriter& writer);

  std::string api_url(std::string_view tail) const;
  // One exchange with the authentication dance (401 -> credentials -> once
  // more), no retries.
  std::expected<net::Response, net::TransportError> send_authenticated(net::Request request, net::BodySink* sink);
  // send_authenticated with retries on transient failures and 429/5xx.
  std::expected<net::Response, Error> exchange(net::Request request);
  // Answers a 401's challenge; false when nothing we have can answer it.
  bool authenticate(const net::Response& response);
  Error http_error(const net::Request& request, const net::Response& response, std::string_view what = {}) const;
  Error transport_error(const net::Request& request, const net::TransportError& error) const;
  void log(std::string_view line) const;
  void wait(std::chrono::milliseconds delay) const;
  std::chrono::steady_clock::time_point now() const;
  // What is left of the operation's time (the base budget outside one).
  std::chrono::milliseconds remaining() const;
  // The timeout error once the operation's deadline has passed.
  std::optional<Error> past_deadline() const;
  // Counts the bytes that came and went, for the message of a timeout (the
  // ones of the operation's direction).
  void moved(std::uint64_t received, std::uint64_t sent);

  std::expected<std::string, Error> start_upload();
  std::expected<std::string, Error> upload_chunks(std::string location, const BlobSource& source, std::uint64_t size,
                                                  std::uint64_t chunk_size);

  ClientOptions m_options;
  Remote m_remote;
  std::shared_ptr<net::Transport> m_transport;
  std::string m_authorization;         // the header value that last worked
  std::optional<Deadline> m_deadline;  // of the operation under way
};

}  // namespace orc::registry
