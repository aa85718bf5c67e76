// Manifests, tag lists and referrers.
#include <nlohmann/json.hpp>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::registry {

using net::Request;

namespace {

// Bounds on a tag listing: a registry that pages forever must not hold us.
constexpr int k_max_tag_pages = 10'000;
constexpr std::size_t k_max_tags = 1'000'000;

std::string accept_manifests() {
  return std::string(k_oci_manifest) + ", " + std::string(k_oci_index) + ", " + std::string(k_docker_manifest) + ", " +
         std::string(k_docker_manifest_list);
}

bool is_reference(std::string_view reference) {
  return digest::is_valid_tag(reference) || digest::Digest::parse(reference).has_value();
}

std::unexpected<Error> invalid(std::string message) {
  return std::unexpected(Error{ErrorKind::invalid, std::move(message)});
}

// The tags of one page of a tag listing, added to `tags`.
std::expected<void, Error> read_tag_page(std::string_view body, const std::string& url,
                                         std::vector<std::string>& tags) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  const auto bad = [&](const std::string& why) {
    return std::unexpected(Error{ErrorKind::protocol, "GET " + redact_url(url) + ": " + why});
  };
  if (!json.is_object()) return bad("the answer is not a JSON object");
  // distribution sends "tags": null for a repository without tags.
  if (const auto it = json.find("tags"); it != json.end() && !it->is_null()) {
    if (!it->is_array()) return bad("\"tags\" is not an array");
    for (const auto& tag : *it) {
      if (!tag.is_string() || !digest::is_valid_tag(tag.get_ref<const std::string&>())) return bad("a tag is not a tag name");
      tags.push_back(tag.get<std::string>());
    }
    if (tags.size() > k_max_tags) return bad("more than a million tags");
  }
  return {};
}

}  // namespace

std::expected<PutManifestResult, Error> Client::put_manifest(std::string_view reference, std::string_view media_type,
                                                             std::string_view body) {
  if (!is_reference(reference)) return invalid("bad manifest reference '" + std::string(reference) + "'");
  const digest::Digest digest = digest::sha256(body);
  if (const auto named = digest::Digest::parse(reference); named && *named != digest)
    return invalid("manifest bytes hash to " + digest.to_string() + ", not " + std::string(reference));
  const Operation operation(*this, "PUT manifest " + std::string(reference), 0, Direction::upload);
  Request request{.method = "PUT", .url = api_url("manifests/" + std::string(reference)), .body = std::string(body)};
  request.headers.emplace_back("Content-Type", std::string(media_type));
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (response->status != 201) return std::unexpected(http_error(request, *response, "storing the manifest"));
  if (const auto echoed = response->header("Docker-Content-Digest"); echoed && *echoed != digest.to_string())
    return std::unexpected(Error{ErrorKind::digest_mismatch, "PUT " + redact_url(request.url) +
                                                                 ": the registry stored " + *echoed +
                                                                 " for bytes that hash to " + digest.to_string()});
  return PutManifestResult{.digest = digest, .subject_indexed = response->header("OCI-Subject").has_value()};
}

std::expected<FetchedManifest, Error> Client::get_manifest(std::string_view reference) {
  if (!is_reference(reference)) return invalid("bad manifest reference '" + std::string(reference) + "'");
  const Operation operation(*this, "GET manifest " + std::string(reference));
  Request request{
      .method = "GET", .url = api_url("manifests/" + std::string(reference)), .max_body = k_max_manifest_bytes};
  request.headers.emplace_back("Accept", accept_manifests());
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (!response->ok()) return std::unexpected(http_error(request, *response, "manifest " + std::string(reference)));
  FetchedManifest out{.digest = digest::sha256(response->body)};
  const std::string content_type = response->header("Content-Type").value_or("");
  out.media_type = std::string(util::trim(std::string_view(content_type).substr(0, content_type.find(';'))));
  // By digest the reference is the proof; by tag the registry's own header
  // is, when it sends one (distribution always does).
  auto expected = digest::Digest::parse(reference);
  if (!expected) {
    const auto header = response->header("Docker-Content-Digest");
    expected = header ? digest::Digest::parse(*header) : expected;
  }
  if (expected && out.digest != *expected)
    return std::unexpected(Error{ErrorKind::digest_mismatch, "GET " + redact_url(request.url) + ": expected " +
                                                                 expected->to_string() + ", the bytes hash to " +
                                                                 out.digest.to_string()});
  out.body = std::move(response->body);
  return out;
}

std::expected<void, Error> Client::delete_manifest(const digest::Digest& digest) {
  const std::string reference = digest.to_string();
  const Operation operation(*this, "DELETE manifest " + reference);
  Request request{.method = "DELETE", .url = api_url("manifests/" + reference)};
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (response->status == 202 || response->status == 200) return {};
  return std::unexpected(http_error(request, *response, "manifest " + reference));
}

std::expected<std::vector<std::string>, Error> Client::list_tags(std::size_t page_size) {
  // One deadline for every page.
  const Operation operation(*this, "GET the tag list");
  std::vector<std::string> tags;
  std::string url = api_url("tags/list") + (page_size ? "?n=" + std::to_string(page_size) : "");
  const std::string same_repository = api_url("tags/list");
  for (int page = 0; page < k_max_tag_pages; ++page) {
    Request request{.method = "GET", .url = url};
    auto response = exchange(request);
    if (!response) return std::unexpected(response.error());
    if (!response->ok()) return std::unexpected(http_error(request, *response, "listing tags"));
    if (auto read = read_tag_page(response->body, url, tags); !read) return std::unexpected(read.error());
    const auto bad = [&](const std::string& why) {
      return std::unexpected(Error{ErrorKind::protocol, "GET " + redact_url(url) + ": " + why});
    };
    const auto link = response->header("Link");
    const auto next = link ? next_link(*link) : std::nullopt;
    if (!next) return tags;
    // Our Authorization goes with the next request: only to this listing.
    const auto resolved = resolve_url(m_remote.origin, *next);
    if (!resolved || !resolved->starts_with(same_repository)) return bad("a Link to '" + redact_url(*next) + "'");
    url = *resolved;
  }
  return std::unexpected(Error{ErrorKind::protocol, "GET " + redact_url(url) + ": more than " +
                                                        std::to_string(k_max_tag_pages) + " pages of tags"});
}

std::expected<std::optional<std::vector<std::string>>, Error> Client::first_tags(std::size_t n) {
  const Operation operation(*this, "GET the first " + std::to_string(n) + " tags");
  const std::string url = api_url("tags/list") + "?n=" + std::to_string(n);
  Request request{.method = "GET", .url = url, .max_body = k_max_manifest_bytes};
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  if (response->status == 404) return std::nullopt;
  if (!response->ok()) return std::unexpected(http_error(request, *response, "listing tags"));
  std::vector<std::string> tags;
  if (auto read = read_tag_page(response->body, url, tags); !read) return std::unexpected(read.error());
  return tags;
}

std::expected<std::vector<Descriptor>, Error> Client::referrers(const digest::Digest& digest,
                                                                std::string_view artifact_type) {
  const Operation operation(*this, "GET the referrers of " + digest.to_string());
  Request request{.method = "GET", .url = api_url("referrers/" + digest.to_string()), .max_body = k_max_manifest_bytes};
  if (!artifact_type.empty()) request.url += "?artifactType=" + net::url_encode(artifact_type);
  request.headers.emplace_back("Accept", std::string(k_oci_index));
  auto response = exchange(request);
  if (!response) return std::unexpected(response.error());
  std::string body;
  if (response->ok()) {
    body = std::move(response->body);
  } else if (response->status == 404) {
    // No referrers API (distribution 2.x): the tag schema of OCI 1.1.
    auto fallback = get_manifest(referrers_tag(digest));
    if (!fallback && fallback.error().kind == ErrorKind::not_found) return std::vector<Descriptor>{};
    if (!fallback) return std::unexpected(fallback.error());
    body = std::move(fallback->body);
  } else {
    return std::unexpected(http_error(request, *response, "referrers of " + digest.to_string()));
  }
  auto index = parse_index(body);
  if (!index) return std::unexpected(index.error());
  std::vector<Descriptor> out;
  // A registry may ignore the filter (it says so in OCI-Filters-Applied);
  // applying it again is cheaper than reading that header.
  for (auto& d : index->manifests)
    if (artifact_type.empty() || d.artifact_type == artifact_type) out.push_back(std::move(d));
  return out;
}

std::expected<digest::Digest, Error> Client::put_referrer(const Manifest& parsed, std::string_view body) {
  if (!parsed.subject) return invalid("put_referrer: the manifest has no subject");
  const digest::Digest digest = digest::sha256(body);
  const Operation operation(*this, "PUT referrer " + digest.to_string() + " of " + parsed.subject->digest.to_string(),
                            0, Direction::upload);
  auto put = put_manifest(digest.to_string(), parsed.media_type, body);
  if (!put) return std::unexpected(put.error());
  if (put->subject_indexed) return digest;

  // The fallback tag holds an index of every referrer of the subject. Two
  // writers racing here can lose one entry; a later put_referrer of the
  // same manifest adds it back (the read-modify-write is idempotent).
  const std::string tag = referrers_tag(parsed.subject->digest);
  Index index;
  auto current = get_manifest(tag);
  if (current) {
    auto existing = parse_index(current->body);
    if (!existing) return std::unexpected(existing.error());
    index = std::move(*existing);
  } else if (current.error().kind != ErrorKind::not_found) {
    return std::unexpected(current.error());
  }
  for (const auto& d : index.manifests)
    if (d.digest == digest) return digest;
  index.manifests.push_back(Descriptor{
      .media_type = parsed.media_type,
      .digest = digest,
      .size = body.size(),
      .artifact_type = parsed.artifact_type.empty() ? parsed.config.media_type : parsed.artifact_type,
      .annotations = parsed.annotations,
  });
  auto stored = put_manifest(tag, k_oci_index, index_json(index));
  if (!stored) return std::unexpected(stored.error());
  return digest;
}

}  // namespace orc::registry
