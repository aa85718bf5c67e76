// The Client's core: URLs, the authentication dance, retries, and turning
// HTTP answers into Errors a user can act on. Blobs are in client_blobs.cpp,
// manifests, tags and referrers in client_manifests.cpp.
#include <thread>

#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::registry {

using net::BodySink;
using net::Request;
using net::Response;
using net::TransportError;
using net::TransportErrorKind;

namespace {

// At most this many 401 answers per request: one for the first challenge,
// one more for a token of a wider scope (a push after a pull).
constexpr int k_max_auth_rounds = 2;

ErrorKind kind_of_status(int status) {
  switch (status) {
    case 401:
      return ErrorKind::unauthorized;
    case 403:
      return ErrorKind::denied;
    case 404:
      return ErrorKind::not_found;
    default:
      return status == 429 || status >= 500 ? ErrorKind::server : ErrorKind::protocol;
  }
}

}  // namespace

std::unique_ptr<net::Transport> make_curl_transport(std::filesystem::path ca_bundle) {
  return net::make_curl_transport(
      {.ca_bundle = std::move(ca_bundle), .stall_timeout = std::chrono::seconds(30), .max_body = 4 << 20});
}

Client::Client(ClientOptions options, std::shared_ptr<net::Transport> transport)
    : m_options(std::move(options)), m_transport(std::move(transport)) {
  auto remote = parse_remote(m_options.url);
  if (!remote) throw util::Failure(util::ExitCode::bad_input, remote.error().message);
  m_remote = std::move(*remote);
  if (m_remote.credentials && !m_options.credentials) m_options.credentials = m_remote.credentials;
  // The URL kept in options must not carry the password into any message.
  m_options.url = display_url();
}

std::string Client::display_url() const { return m_remote.origin + "/" + m_remote.repository; }

std::string Client::api_url(std::string_view tail) const {
  return m_remote.origin + "/v2/" + m_remote.repository + "/" + std::string(tail);
}

void Client::log(std::string_view line) const {
  if (m_options.log) m_options.log(line);
}

void Client::wait(std::chrono::milliseconds delay) const {
  if (m_options.sleep)
    m_options.sleep(delay);
  else
    std::this_thread::sleep_for(delay);
}

std::chrono::steady_clock::time_point Client::now() const {
  return m_options.clock ? m_options.clock() : std::chrono::steady_clock::now();
}

Client::Operation::Operation(Client& client, std::string what, std::uint64_t size, Direction direction)
    : m_client(client), m_owner(!client.m_deadline) {
  if (!m_owner) return;
  const auto budget = deadline_for(client.m_options.deadlines, size);
  client.m_deadline =
      Deadline{.report = {.what = std::move(what), .size = size, .direction = direction, .budget = budget},
               .at = client.now() + budget};
}

Client::Operation::~Operation() {
  if (m_owner) m_client.m_deadline.reset();
}

std::chrono::milliseconds Client::remaining() const {
  if (!m_deadline) return m_options.deadlines.base;
  return std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline->at - now());
}

std::optional<Error> Client::past_deadline() const {
  if (!m_deadline || remaining().count() > 0) return std::nullopt;
  return Error{ErrorKind::timeout, timed_out_message(m_deadline->report, m_options.deadlines, display_url())};
}

void Client::moved(std::uint64_t received, std::uint64_t sent) {
  if (m_deadline) m_deadline->report.moved += m_deadline->report.direction == Direction::download ? received : sent;
}

Error Client::http_error(const Request& request, const Response& response, std::string_view what) const {
  const auto errors = parse_registry_errors(response.body);
  std::string message = request.method + " " + redact_url(request.url) + ": ";
  if (!what.empty()) message += std::string(what) + ": ";
  message += "HTTP " + std::to_string(response.status);
  if (!errors.text.empty()) message += " (" + errors.text + ")";
  if (response.status == 401)
    message += m_options.credentials ? "; the registry refused the credentials" : "; no credentials were given";
  return Error{kind_of_status(response.status), std::move(message), response.status, errors.first_code};
}

Error Client::transport_error(const Request& request, const TransportError& error) const {
  const std::string where = request.method + " " + redact_url(request.url) + ": ";
  switch (error.kind) {
    case TransportErrorKind::body_source:
      return Error{ErrorKind::io, where + error.message};
    case TransportErrorKind::too_large:
      return Error{ErrorKind::protocol, where + error.message};
    case TransportErrorKind::tls:
      return Error{ErrorKind::unreachable, where + "TLS verification failed (" + error.message + ")"};
    default:
      return Error{ErrorKind::unreachable, where + "cannot reach the registry (" + error.message + ")"};
  }
}

bool Client::authenticate(const Response& response) {
  const auto header = response.header("WWW-Authenticate");
  if (!header) return false;
  const auto challenges = parse_challenges(*header);
  const auto& credentials = m_options.credentials;
  for (const auto& challenge : challenges) {
    if (challenge.scheme == "bearer") {
      const std::string url = token_url(challenge);
      if (url.empty()) continue;
      Request request{.method = "GET", .url = url, .timeout = remaining(), .max_body = 1 << 20};
      if (request.timeout.count() <= 0) return false;
      // The password goes only to a token service on this registry's origin
      // or over TLS; an http realm elsewhere gets an anonymous request.
      const bool safe_realm = url.starts_with("https://") || url.starts_with(m_remote.origin + "/");
      if (credentials && safe_realm) request.headers.emplace_back("Authorization", basic_authorization(*credentials));
      log("GET " + redact_url(url) + " (token)");
      const auto answer = m_transport->send(request);
      if (!answer || !answer->ok()) {
        log("token request failed: " + (answer ? "HTTP " + std::to_string(answer->status) : answer.error().message));
        return false;
      }
      auto token = parse_token_response(answer->body);
      if (!token) return false;
      const std::string value = "Bearer " + *token;
      if (value == m_authorization) return false;  // the same token was just refused
      m_authorization = value;
      return true;
    }
    if (challenge.scheme == "basic" && credentials) {
      const std::string value = basic_authorization(*credentials);
      if (value == m_authorization) return false;  // these credentials were just refused
      m_authorization = value;
      return true;
    }
  }
  return false;
}

std::expected<Response, TransportError> Client::send_authenticated(Request request, BodySink* sink) {
  const TransportError late{TransportErrorKind::timeout, "the operation's deadline passed"};
  for (int round = 0;; ++round) {
    Request sent = request;
    // Each request gets what is left of its operation's time.
    sent.timeout = remaining();
    if (sent.timeout.count() <= 0) return std::unexpected(late);
    if (!m_authorization.empty()) sent.headers.emplace_back("Authorization", m_authorization);
    auto response = m_transport->send(sent, sink);
    // A sink's bytes are counted as it takes them (DownloadSink).
    if (response)
      moved(sink ? 0 : response->body.size(), net::body_size(sent.body));
    else
      moved(sink ? 0 : response.error().received, response.error().sent);
    if (!response) {
      log(request.method + " " + redact_url(request.url) + " -> " + response.error().message);
      return response;
    }
    log(request.method + " " + redact_url(request.url) + " -> " + std::to_string(response->status) + "\n" +
        redact(sent.headers));
    if (response->status != 401 || round >= k_max_auth_rounds) return response;
    // A token service that ran the clock out is a timeout, not a refusal.
    if (!authenticate(*response)) return remaining().count() > 0 ? std::move(response) : std::unexpected(late);
  }
}

std::expected<Response, Error> Client::exchange(Request request) {
  for (int attempt = 1;; ++attempt) {
    auto response = send_authenticated(request, nullptr);
    if (response && !is_retryable_status(response->status)) return std::move(*response);
    if (auto late = past_deadline()) return std::unexpected(std::move(*late));
    std::optional<std::chrono::milliseconds> retry_after;
    if (!response) {
      if (!net::is_transient(response.error().kind)) return std::unexpected(transport_error(request, response.error()));
    } else if (const auto value = response->header("Retry-After")) {
      retry_after = parse_retry_after(*value, std::chrono::system_clock::now());
    }
    const auto delay = retry_delay(m_options.retry, attempt, retry_after);
    if (!delay) {
      if (!response) return std::unexpected(transport_error(request, response.error()));
      return std::move(*response);
    }
    log("retrying " + request.method + " " + redact_url(request.url) + " in " + std::to_string(delay->count()) +
        " ms (attempt " + std::to_string(attempt + 1) + " of " + std::to_string(m_options.retry.max_attempts) + ")");
    wait(std::min(*delay, remaining()));
  }
}

std::expected<void, Error> Client::ping() {
  const Operation operation(*this, "GET /v2/ (the API check)");
  Request request{.method = "GET", .url = m_remote.origin + "/v2/"};
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (!response->ok()) return std::unexpected(http_error(request, *response, "registry API check"));
  return {};
}

}  // namespace orc::registry
