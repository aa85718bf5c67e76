#pragma once
// A container image's name, parsed once where it enters: the reference
// grammar of the OCI distribution spec as `docker pull` reads it,
//
//   [DOMAIN/]PATH[:TAG][@DIGEST]
//
// DOMAIN is the first '/'-separated component when it holds a '.' or a ':'
// or is "localhost" ("registry.example:5000/team/cuda", "localhost/x");
// otherwise the whole name is the PATH ("orchestrate/cuda", "nvidia/cuda").
// PATH components are lower-case letters and digits joined by '.', '_',
// "__" or runs of '-'; a TAG is up to 128 of [A-Za-z0-9_.-], not starting
// with '.' or '-'; a DIGEST is one digest::Digest::parse accepts. The tag is
// the part after the last ':' that follows the last '/', so a port is never
// a tag.
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/digest/digest.hpp"

namespace orc::digest {

class ImageReference {
 public:
  // The error says which part is wrong and shows the input (printable, at
  // most 80 characters of it).
  static std::expected<ImageReference, std::string> parse(std::string_view text);
  // A reference whose registry is known apart (oci://HOST/PATH:TAG): `text`
  // is PATH[:TAG][@DIGEST] and `domain` is HOST[:PORT], taken as it is.
  static std::expected<ImageReference, std::string> parse_at(std::string_view domain, std::string_view text);

  // "registry.example:5000", empty when the name has none.
  const std::string& domain() const { return m_domain; }
  // "orchestrate/cuda": the repository within its registry.
  const std::string& path() const { return m_path; }
  // DOMAIN/PATH, or PATH: the name `docker images` lists as REPOSITORY, and
  // the part before '@' in the engine's RepoDigests entries.
  std::string repository() const;
  const std::optional<std::string>& tag() const { return m_tag; }
  const std::optional<Digest>& digest() const { return m_digest; }
  // The tag, or "latest", which an engine pulls when a name has neither tag
  // nor digest.
  std::string tag_or_latest() const { return m_tag.value_or("latest"); }

  // The same repository under another tag, without a digest.
  ImageReference with_tag(std::string tag) const;
  // REPOSITORY[:TAG][@DIGEST], as parsed.
  std::string to_string() const;

  friend bool operator==(const ImageReference&, const ImageReference&) = default;

 private:
  // PATH[:TAG][@DIGEST] under `domain`; errors quote `whole`.
  static std::expected<ImageReference, std::string> read(std::string_view domain, std::string_view rest,
                                                         std::string_view whole);

  std::string m_domain;
  std::string m_path;
  std::optional<std::string> m_tag;
  std::optional<Digest> m_digest;
};

// PATH as above: what a registry accepts as a repository name.
bool is_valid_repository(std::string_view path);
// TAG as above.
bool is_valid_tag(std::string_view tag);

}  // namespace orc::digest
