// Blobs: HEAD, the resumable verified download, and uploads.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <system_error>
#include <vector>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/fd.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/util/write.hpp"

namespace orc::registry {

using net::BodySink;
using net::FileSlice;
using net::Request;
using net::Response;
using util::Fd;

namespace {

constexpr std::string_view k_octet_stream = "application/octet-stream";

// A download that makes progress may break again; one that makes none gets
// the policy's attempts. This caps the first kind (a server that cuts every
// connection after a few bytes must not keep us forever).
constexpr int k_max_resumes = 100;

// "GET blob sha256:<hex> (301.0 MiB)": an operation on a blob, for a timeout's message.
std::string blob_operation(std::string_view method, const digest::Digest& digest, std::optional<std::uint64_t> size) {
  std::string out = std::string(method) + " blob " + digest.to_string();
  if (size) out += " (" + util::human_size(*size) + ")";
  return out;
}

std::unexpected<Error> io_error(const std::string& what, int error_number) {
  return std::unexpected(Error{ErrorKind::io, what + ": " + std::strerror(error_number)});
}

}  // namespace

// Where a download's bytes go: the partial file of fetch_blob, or the
// caller of stream_blob. restart() is called when the server sends the blob
// from byte 0 again (it ignored Range, or cannot continue our bytes).
class Client::BlobWriter {
 public:
  virtual ~BlobWriter() = default;
  virtual bool restart() = 0;
  virtual bool write(std::string_view bytes) = 0;
  virtual bool flush() { return true; }
  std::optional<Error> failure;
};

// One GET of a blob into a BlobWriter: a 206 continues at `have`, a 200
// starts over; never more than the descriptor's size.
class Client::DownloadSink final : public BodySink {
 public:
  DownloadSink(Client& client, BlobWriter& writer, std::uint64_t& have, std::optional<std::uint64_t> size)
      : m_client(client), m_writer(writer), m_have(have), m_size(size) {}

  bool start(const Response& head) override {
    const auto range = head.header("Content-Range");
    switch (resume_action(m_have, head.status, range)) {
      case ResumeAction::append:
        return true;
      case ResumeAction::restart:
        if (m_have > 0 && !m_writer.restart()) return false;
        m_have = 0;
        return true;
      case ResumeAction::fail:
        m_writer.failure = Error{ErrorKind::protocol, "asked for bytes from " + std::to_string(m_have) +
                                                          " and got Content-Range '" + range.value_or("") + "'"};
        return false;
    }
    return false;
  }

  bool chunk(std::string_view bytes) override {
    if (m_size && m_have + bytes.size() > *m_size) {
      m_writer.failure = Error{ErrorKind::digest_mismatch, "the registry sent more than the " +
                                                               std::to_string(*m_size) + " bytes the descriptor names"};
      return false;
    }
    m_have += bytes.size();
    m_client.moved(bytes.size(), 0);
    return m_writer.write(bytes);
  }

 private:
  Client& m_client;
  BlobWriter& m_writer;
  std::uint64_t& m_have;
  std::optional<std::uint64_t> m_size;
};

namespace {

// fetch_blob's writer: the partial file, hashed as it grows.
class PartialFile final : public Client::BlobWriter {
 public:
  PartialFile(int fd, digest::BackgroundSha256& hasher) : m_fd(fd), m_hasher(hasher) { m_buffer.reserve(k_write_size); }

  bool restart() override {
    m_buffer.clear();
    m_hasher.reset();
    if (::ftruncate(m_fd, 0) == 0) return true;
    failure = Error{ErrorKind::io, std::string("cannot truncate the partial file: ") + std::strerror(errno)};
    return false;
  }

  bool write(std::string_view bytes) override {
    m_buffer.insert(m_buffer.end(), bytes.begin(), bytes.end());
    m_hasher.update(bytes);
    return m_buffer.size() < k_write_size || flush();
  }

  // Writes what the buffer holds; the file then has every byte received.
  bool flush() override {
    if (!m_buffer.empty() && !util::write_all(m_fd, std::string_view(m_buffer.data(), m_buffer.size()))) {
      failure = Error{ErrorKind::io, std::string("cannot write the partial file: ") + std::strerror(errno)};
      return false;
    }
    m_buffer.clear();
    return true;
  }

 private:
  int m_fd;
  digest::BackgroundSha256& m_hasher;
  // curl hands over 16 KiB at a time; one write() per 16 KiB costs a 1 GiB
  // download more kernel time than the transfer itself.
  static constexpr std::size_t k_write_size = 2 << 20;
  std::vector<char> m_buffer;
};

// stream_blob's writer: the caller's function. What it was given before a
// restart is skipped when the server sends it again.
class Receiver final : public Client::BlobWriter {
 public:
  explicit Receiver(const std::function<bool(std::string_view)>& receive) : m_receive(receive) {}

  bool restart() override {
    m_seen = 0;
    return true;
  }

  bool write(std::string_view bytes) override {
    const std::uint64_t end = m_seen + bytes.size();
    if (end > m_given) {
      const std::size_t skip = m_seen < m_given ? static_cast<std::size_t>(m_given - m_seen) : 0;
      if (!m_receive(bytes.substr(skip))) {
        failure = Error{ErrorKind::io, "the receiver stopped the download"};
        return false;
      }
      m_given = end;
    }
    m_seen = end;
    return true;
  }

 private:
  const std::function<bool(std::string_view)>& m_receive;
  std::uint64_t m_seen = 0;   // of the current response, from byte 0
  std::uint64_t m_given = 0;  // to the caller, from byte 0
};

}  // namespace

std::expected<void, Error> Client::download(const digest::Digest& digest, std::optional<std::uint64_t> size,
                                            std::uint64_t& have, BlobWriter& writer) {
  const std::string url = api_url("blobs/" + digest.to_string());
  int failures = 0;
  for (int tries = 0; !(size && have == *size); ++tries) {
    Request request{.method = "GET", .url = url};
    if (have > 0) request.headers.emplace_back("Range", "bytes=" + std::to_string(have) + "-");
    const std::uint64_t before = have;
    DownloadSink sink(*this, writer, have, size);
    auto response = send_authenticated(request, &sink);
    writer.flush();
    if (writer.failure) {
      Error error = *writer.failure;
      error.message = "GET " + redact_url(url) + ": " + error.message;
      return std::unexpected(std::move(error));
    }
    if (response && response->ok() && (!size || have >= *size)) break;
    // A resume gets no fresh budget: the deadline is the whole download's.
    if (auto late = past_deadline()) return std::unexpected(std::move(*late));
    std::optional<std::chrono::milliseconds> retry_after;
    if (response && response->ok()) {
      // The connection ended cleanly but early: resume like a broken one.
    } else if (response && response->status == 416 && have > 0) {
      // Our bytes are not a prefix the server can continue: start over.
      if (!writer.restart()) return std::unexpected(*writer.failure);
      have = 0;
    } else if (response && !is_retryable_status(response->status)) {
      return std::unexpected(http_error(request, *response, "blob " + digest.to_string()));
    } else if (!response && !net::is_transient(response.error().kind)) {
      return std::unexpected(transport_error(request, response.error()));
    } else if (response) {
      if (const auto value = response->header("Retry-After"))
        retry_after = parse_retry_after(*value, std::chrono::system_clock::now());
    }
    failures = have > before ? 1 : failures + 1;
    const auto delay = tries < k_max_resumes ? retry_delay(m_options.retry, failures, retry_after) : std::nullopt;
    if (!delay) {
      if (response && !response->ok())
        return std::unexpected(http_error(request, *response, "blob " + digest.to_string()));
      if (!response) return std::unexpected(transport_error(request, response.error()));
      return std::unexpected(
          Error{ErrorKind::unreachable, "GET " + redact_url(url) + ": the transfer kept ending early"});
    }
    log("resuming " + digest.to_string() + " at byte " + std::to_string(have) + " in " +
        std::to_string(delay->count()) + " ms");
    wait(std::min(*delay, remaining()));
  }
  return {};
}

std::expected<std::optional<std::uint64_t>, Error> Client::blob_size(const digest::Digest& digest) {
  const Operation operation(*this, blob_operation("HEAD", digest, std::nullopt));
  Request request{.method = "HEAD", .url = api_url("blobs/" + digest.to_string())};
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (response->status == 404) return std::nullopt;
  if (!response->ok()) return std::unexpected(http_error(request, *response, "blob " + digest.to_string()));
  const auto length = response->header("Content-Length");
  std::uint64_t size = 0;
  try {
    size = length ? std::stoull(*length) : 0;
  } catch (const std::exception&) {
    return std::unexpected(Error{ErrorKind::protocol, "HEAD " + redact_url(request.url) + ": bad Content-Length"});
  }
  return size;
}

std::expected<void, Error> Client::fetch_blob(const digest::Digest& digest, std::optional<std::uint64_t> size,
                                              const std::filesystem::path& destination, Durability durability) {
  const Operation operation(*this, blob_operation("GET", digest, size), size.value_or(0));
  const std::filesystem::path partial = destination.string() + ".partial";
  digest::BackgroundSha256 hasher;
  std::uint64_t have = 0;
  std::error_code ec;
  if (std::filesystem::exists(partial, ec)) {
    // An earlier run's bytes: hash them so the download continues after them.
    auto prefix = digest::hash_file(partial, hasher);
    if (!prefix) return std::unexpected(Error{ErrorKind::io, prefix.error()});
    have = *prefix;
    if (size && have > *size) {
      std::filesystem::remove(partial, ec);
      hasher.reset();
      have = 0;
    } else if (have > 0) {
      log("resuming " + digest.to_string() + " from byte " + std::to_string(have) + " of an earlier download");
    }
  }
  Fd fd(::open(partial.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (fd.get() < 0) return io_error("cannot write " + partial.string(), errno);
  const auto give_up = [&](Error error, bool keep_partial) {
    fd.close();
    if (!keep_partial) std::filesystem::remove(partial, ec);
    return std::unexpected(std::move(error));
  };
  PartialFile writer(fd.get(), hasher);
  if (auto got = download(digest, size, have, writer); !got) {
    // The partial file stays for the next fetch to continue, unless its
    // bytes are wrong (too many) or the blob is gone.
    const auto kind = got.error().kind;
    return give_up(got.error(),
                   kind != ErrorKind::digest_mismatch && kind != ErrorKind::not_found && kind != ErrorKind::protocol);
  }
  if ((durability == Durability::fsync && ::fsync(fd.get()) != 0) || fd.close() != 0)
    return give_up(Error{ErrorKind::io, "cannot write " + partial.string()}, false);
  const digest::Digest got = hasher.digest();
  if (got != digest || (size && have != *size)) {
    return give_up(Error{ErrorKind::digest_mismatch, "GET " + redact_url(api_url("blobs/" + digest.to_string())) +
                                                         ": the " + std::to_string(have) + " bytes received hash to " +
                                                         got.to_string() + "; the partial download was removed"},
                   false);
  }
  std::filesystem::rename(partial, destination, ec);
  if (ec) return give_up(Error{ErrorKind::io, "cannot rename " + partial.string() + ": " + ec.message()}, false);
  return {};
}

std::expected<void, Error> Client::stream_blob(const digest::Digest& digest, std::uint64_t size,
                                               const std::function<bool(std::string_view)>& receive) {
  const Operation operation(*this, blob_operation("GET", digest, size), size);
  std::uint64_t have = 0;
  Receiver writer(receive);
  return download(digest, size, have, writer);
}

std::expected<std::string, Error> Client::start_upload() {
  Request request{.method = "POST", .url = api_url("blobs/uploads/")};
  request.headers.emplace_back("Content-Type", k_octet_stream);
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (response->status != 202) return std::unexpected(http_error(request, *response, "starting an upload"));
  const auto location = resolve_url(m_remote.origin, response->header("Location").value_or(""));
  if (!location)
    return std::unexpected(Error{ErrorKind::protocol, "POST " + redact_url(request.url) + ": no usable Location"});
  return *location;
}

namespace {

net::Body slice_of(const BlobSource& source, std::uint64_t offset, std::uint64_t size) {
  if (const auto* path = std::get_if<std::filesystem::path>(&source)) return FileSlice{*path, offset, size};
  return std::get<std::string>(source).substr(offset, size);
}

}  // namespace

std::expected<std::string, Error> Client::upload_chunks(std::string location, const BlobSource& source,
                                                        std::uint64_t size, std::uint64_t chunk_size) {
  for (std::uint64_t offset = 0; offset < size;) {
    const std::uint64_t n = std::min(chunk_size, size - offset);
    // distribution writes the range without "bytes=" and inclusive.
    const std::string range = std::to_string(offset) + "-" + std::to_string(offset + n - 1);
    Request request{.method = "PATCH", .url = location, .body = slice_of(source, offset, n)};
    request.headers.emplace_back("Content-Type", k_octet_stream);
    request.headers.emplace_back("Content-Range", range);
    auto response = exchange(request);
    if (!response) return std::unexpected(response.error());
    if (response->status != 202) return std::unexpected(http_error(request, *response, "uploading a chunk"));
    if (const auto got = response->header("Range"); got && *got != "0-" + std::to_string(offset + n - 1))
      return std::unexpected(Error{ErrorKind::protocol, "PATCH " + redact_url(location) + ": the registry holds " +
                                                            *got + " after bytes " + range});
    const auto next = resolve_url(m_remote.origin, response->header("Location").value_or(""));
    if (!next)
      return std::unexpected(Error{ErrorKind::protocol, "PATCH " + redact_url(location) + ": no usable Location"});
    location = *next;
    offset += n;
  }
  return location;
}

std::expected<PushedBlob, Error> Client::push_blob(const digest::Digest& digest, const BlobSource& source,
                                                   UploadOptions options) {
  std::uint64_t size = 0;
  if (const auto* path = std::get_if<std::filesystem::path>(&source)) {
    std::error_code ec;
    size = std::filesystem::file_size(*path, ec);
    if (ec) return std::unexpected(Error{ErrorKind::io, "cannot read " + path->string() + ": " + ec.message()});
  } else {
    size = std::get<std::string>(source).size();
  }
  // One deadline for the HEAD, the start and every byte of the upload.
  const Operation operation(*this, blob_operation("PUT", digest, size), size, Direction::upload);
  auto existing = blob_size(digest);
  if (!existing) return std::unexpected(existing.error());
  if (*existing) {
    log("blob " + digest.to_string() + " already in " + display_url() + "; not uploading");
    return PushedBlob{.uploaded = false};
  }
  auto location = start_upload();
  if (!location) return std::unexpected(location.error());
  Request put{.method = "PUT"};
  if (options.mode == UploadMode::chunked) {
    location = upload_chunks(std::move(*location), source, size, std::max<std::uint64_t>(options.chunk_size, 1));
    if (!location) return std::unexpected(location.error());
  } else {
    put.body = slice_of(source, 0, size);
  }
  put.url = *location + (location->find('?') == std::string::npos ? "?" : "&") +
            "digest=" + net::url_encode(digest.to_string());
  put.headers.emplace_back("Content-Type", k_octet_stream);
  auto response = exchange(put);
  if (!response) return std::unexpected(response.error());
  if (response->status != 201)
    return std::unexpected(http_error(put, *response, "finishing the upload of " + digest.to_string()));
  return PushedBlob{.uploaded = true};
}

}  // namespace orc::registry
