#include "orchestrator/registry/layout.hpp"

#include <nlohmann/json.hpp>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/json_nesting.hpp"

namespace orc::registry {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view k_oci_prefix = "org.opencontainers.image.";
constexpr std::string_view k_our_prefix = "dev.orchestrate.";

// Each ArtifactInfo field and the annotation that carries it: the one table
// both the builder and the reader walk.
struct AnnotationField {
  std::string_view prefix;
  std::string_view name;
  std::string ArtifactInfo::*member;
};
constexpr AnnotationField k_fields[] = {
    {k_oci_prefix, "created", &ArtifactInfo::created}, {k_oci_prefix, "revision", &ArtifactInfo::revision},
    {k_oci_prefix, "source", &ArtifactInfo::source},   {k_oci_prefix, "title", &ArtifactInfo::title},
    {k_oci_prefix, "version", &ArtifactInfo::version}, {k_our_prefix, "tier", &ArtifactInfo::tier},
    {k_our_prefix, "sass", &ArtifactInfo::sass},       {k_our_prefix, "ptx", &ArtifactInfo::ptx},
    {k_our_prefix, "toolkit", &ArtifactInfo::toolkit}, {k_our_prefix, "cudnn", &ArtifactInfo::cudnn},
    {k_our_prefix, "recipe", &ArtifactInfo::recipe},
};

std::unexpected<Error> bad(std::string what) {
  return std::unexpected(Error{ErrorKind::protocol, "malformed manifest: " + std::move(what)});
}

ordered_json descriptor_json(const Descriptor& d) {
  ordered_json out = {{"mediaType", d.media_type}, {"digest", d.digest.to_string()}, {"size", d.size}};
  if (!d.artifact_type.empty()) out["artifactType"] = d.artifact_type;
  if (!d.annotations.empty()) out["annotations"] = d.annotations;
  if (d.platform) {
    out["platform"] = {{"architecture", d.platform->architecture}, {"os", d.platform->os}};
    if (!d.platform->variant.empty()) out["platform"]["variant"] = d.platform->variant;
  }
  return out;
}

// type "/" subtype, RFC 6838 restricted-name characters.
bool is_media_type(std::string_view s) {
  if (s.empty() || s.size() > 255) return false;
  const auto slash = s.find('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == s.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$&-^_.+").find(c) != std::string_view::npos || (c == '/' && i == slash);
    if (!ok) return false;
  }
  return true;
}

std::expected<std::string, Error> optional_string(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return std::string();
  if (!it->is_string()) return bad(std::string(key) + " is not a string");
  if (it->get_ref<const std::string&>().size() > k_max_string) return bad(std::string(key) + " is too long");
  return it->get<std::string>();
}

std::expected<std::map<std::string, std::string>, Error> read_annotations(const json& object) {
  std::map<std::string, std::string> out;
  const auto it = object.find("annotations");
  if (it == object.end()) return out;
  if (!it->is_object()) return bad("annotations is not an object");
  if (it->size() > k_max_annotations) return bad("too many annotations");
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) return bad("annotation '" + key.substr(0, 100) + "' is not a string");
    if (key.size() > k_max_string || value.get_ref<const std::string&>().size() > k_max_string)
      return bad("annotation too long");
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

std::expected<Descriptor, Error> read_descriptor(const json& j, const std::string& where) {
  if (!j.is_object()) return bad(where + " is not an object");
  Descriptor d;
  auto media_type = optional_string(j, "mediaType");
  if (!media_type) return std::unexpected(media_type.error());
  if (!is_media_type(*media_type)) return bad(where + ".mediaType is missing or not a media type");
  d.media_type = std::move(*media_type);
  auto digest = optional_string(j, "digest");
  if (!digest) return std::unexpected(digest.error());
  if (digest->empty()) return bad(where + ".digest is missing");
  // The registry's text is parsed here, once: a malformed digest is the
  // registry's fault (protocol), said with what is wrong with it.
  auto parsed = digest::Digest::parse(*digest);
  if (!parsed) return bad(where + ".digest: " + parsed.error());
  d.digest = *parsed;
  const auto size = j.find("size");
  if (size == j.end() || !size->is_number_integer() || size->get<std::int64_t>() < 0)
    return bad(where + ".size is missing or not a non-negative integer");
  d.size = size->get<std::uint64_t>();
  auto artifact_type = optional_string(j, "artifactType");
  if (!artifact_type) return std::unexpected(artifact_type.error());
  if (!artifact_type->empty() && !is_media_type(*artifact_type))
    return bad(where + ".artifactType is not a media type");
  d.artifact_type = std::move(*artifact_type);
  auto annotations = read_annotations(j);
  if (!annotations) return std::unexpected(annotations.error());
  d.annotations = std::move(*annotations);
  if (const auto platform = j.find("platform"); platform != j.end()) {
    if (!platform->is_object()) return bad(where + ".platform is not an object");
    Platform p;
    for (auto [key, field] : {std::pair{"os", &p.os}, {"architecture", &p.architecture}, {"variant", &p.variant}}) {
      const auto value = platform->find(key);
      if (value == platform->end()) continue;
      if (!value->is_string() || value->get_ref<const std::string&>().size() > k_max_string)
        return bad(where + ".platform." + key + " is not a short string");
      *field = value->get<std::string>();
    }
    d.platform = std::move(p);
  }
  return d;
}

std::expected<std::vector<Descriptor>, Error> read_descriptors(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return bad(std::string(key) + " is missing or not an array");
  if (it->size() > k_max_descriptors) return bad(std::string("too many ") + key);
  std::vector<Descriptor> out;
  out.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    auto d = read_descriptor((*it)[i], std::string(key) + "[" + std::to_string(i) + "]");
    if (!d) return std::unexpected(d.error());
    out.push_back(std::move(*d));
  }
  return out;
}

// The top level both forms share: size bound, an object, schemaVersion 2,
// and mediaType, when present, the one expected.
std::expected<json, Error> read_top(std::string_view text, std::span<const std::string_view> media_types) {
  if (text.size() > k_max_manifest_bytes) return bad("larger than 4 MiB");
  if (!util::json_nesting_within(text, k_max_manifest_depth))
    return bad("nested deeper than " + std::to_string(k_max_manifest_depth) + " levels");
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not a JSON object");
  const auto version = j.find("schemaVersion");
  if (version == j.end() || !version->is_number_integer() || version->get<std::int64_t>() != 2)
    return bad("schemaVersion is not 2");
  const auto media_type = j.find("mediaType");
  if (media_type != j.end()) {
    if (!media_type->is_string()) return bad("mediaType is not a string");
    bool known = false;
    for (const auto& m : media_types) known = known || media_type->get_ref<const std::string&>() == m;
    if (!known) return bad("unexpected mediaType '" + media_type->get<std::string>().substr(0, 100) + "'");
  }
  return j;
}

}  // namespace

Descriptor describe(std::string_view media_type, std::string_view bytes) {
  return Descriptor{.media_type = std::string(media_type), .digest = digest::sha256(bytes), .size = bytes.size()};
}

std::string image_manifest(const Manifest& manifest) {
  ordered_json out = {{"schemaVersion", 2}, {"mediaType", k_oci_manifest}};
  if (!manifest.artifact_type.empty()) out["artifactType"] = manifest.artifact_type;
  out["config"] = descriptor_json(manifest.config);
  out["layers"] = ordered_json::array();
  for (const auto& layer : manifest.layers) out["layers"].push_back(descriptor_json(layer));
  if (!manifest.annotations.empty()) out["annotations"] = manifest.annotations;
  return out.dump();
}

std::string artifact_manifest(const Descriptor& config, std::span<const Descriptor> layers, const ArtifactInfo& info) {
  if (config.media_type != k_artifact_config)
    util::fail_input("artifact config must have media type " + std::string(k_artifact_config));
  if (info.tier.empty() || info.recipe.empty()) util::fail_input("an artifact manifest needs its tier and recipe");
  ordered_json out = {{"schemaVersion", 2}, {"mediaType", k_oci_manifest}, {"config", descriptor_json(config)}};
  out["layers"] = ordered_json::array();
  for (const auto& layer : layers) {
    if (layer.media_type != k_layer_tar_zstd)
      util::fail_input("artifact layers must have media type " + std::string(k_layer_tar_zstd));
    out["layers"].push_back(descriptor_json(layer));
  }
  ordered_json annotations = ordered_json::object();
  for (const auto& field : k_fields)
    if (!(info.*field.member).empty())
      annotations[std::string(field.prefix) + std::string(field.name)] = info.*field.member;
  out["annotations"] = std::move(annotations);
  return out.dump();
}

std::string signature_manifest(const Descriptor& subject, const Descriptor& signature, std::string_view created) {
  ordered_json out = {{"schemaVersion", 2},
                      {"mediaType", k_oci_manifest},
                      {"artifactType", k_signature_artifact_type},
                      {"config", descriptor_json(describe(k_empty_config, k_empty_json))},
                      {"layers", ordered_json::array({descriptor_json(signature)})},
                      {"subject", descriptor_json(subject)}};
  if (!created.empty()) out["annotations"] = {{"org.opencontainers.image.created", created}};
  return out.dump();
}

std::string index_json(const Index& index) {
  ordered_json out = {{"schemaVersion", 2}, {"mediaType", index.media_type}};
  if (!index.artifact_type.empty()) out["artifactType"] = index.artifact_type;
  out["manifests"] = ordered_json::array();
  for (const auto& d : index.manifests) out["manifests"].push_back(descriptor_json(d));
  if (!index.annotations.empty()) out["annotations"] = index.annotations;
  return out.dump();
}

std::expected<Manifest, Error> parse_manifest(std::string_view text) {
  const std::string_view types[] = {k_oci_manifest, k_docker_manifest};
  auto j = read_top(text, types);
  if (!j) return std::unexpected(j.error());
  Manifest m;
  m.media_type = j->value("mediaType", std::string(k_oci_manifest));
  auto artifact_type = optional_string(*j, "artifactType");
  if (!artifact_type) return std::unexpected(artifact_type.error());
  m.artifact_type = std::move(*artifact_type);
  const auto config = j->find("config");
  if (config == j->end()) return bad("config is missing");
  auto config_descriptor = read_descriptor(*config, "config");
  if (!config_descriptor) return std::unexpected(config_descriptor.error());
  m.config = std::move(*config_descriptor);
  auto layers = read_descriptors(*j, "layers");
  if (!layers) return std::unexpected(layers.error());
  m.layers = std::move(*layers);
  if (const auto subject = j->find("subject"); subject != j->end()) {
    auto d = read_descriptor(*subject, "subject");
    if (!d) return std::unexpected(d.error());
    m.subject = std::move(*d);
  }
  auto annotations = read_annotations(*j);
  if (!annotations) return std::unexpected(annotations.error());
  m.annotations = std::move(*annotations);
  return m;
}

std::expected<Index, Error> parse_index(std::string_view text) {
  const std::string_view types[] = {k_oci_index, k_docker_manifest_list};
  auto j = read_top(text, types);
  if (!j) return std::unexpected(j.error());
  Index index;
  index.media_type = j->value("mediaType", std::string(k_oci_index));
  auto artifact_type = optional_string(*j, "artifactType");
  if (!artifact_type) return std::unexpected(artifact_type.error());
  index.artifact_type = std::move(*artifact_type);
  auto manifests = read_descriptors(*j, "manifests");
  if (!manifests) return std::unexpected(manifests.error());
  index.manifests = std::move(*manifests);
  auto annotations = read_annotations(*j);
  if (!annotations) return std::unexpected(annotations.error());
  index.annotations = std::move(*annotations);
  return index;
}

const Descriptor* platform_manifest(const Index& index, std::string_view os, std::string_view architecture) {
  const Descriptor* unnamed = nullptr;
  for (const auto& m : index.manifests) {
    if (!m.platform) {
      if (!unnamed) unnamed = &m;
      continue;
    }
    if (m.platform->os == os && m.platform->architecture == architecture) return &m;
  }
  return unnamed;
}

std::expected<ArtifactInfo, Error> read_artifact(const Manifest& manifest) {
  if (manifest.config.media_type != k_artifact_config)
    return bad("not an Orchestrate artifact (config media type '" + manifest.config.media_type + "')");
  for (const auto& layer : manifest.layers)
    if (layer.media_type != k_layer_tar_zstd) return bad("unexpected layer media type '" + layer.media_type + "'");
  ArtifactInfo info;
  for (const auto& field : k_fields) {
    const auto it = manifest.annotations.find(std::string(field.prefix) + std::string(field.name));
    if (it != manifest.annotations.end()) info.*field.member = it->second;
  }
  if (info.tier.empty() || info.recipe.empty()) return bad("artifact annotations lack the tier or the recipe");
  return info;
}

std::expected<Descriptor, Error> read_signature(const Manifest& manifest, const digest::Digest& subject_digest) {
  if (manifest.artifact_type != k_signature_artifact_type) return bad("not an Orchestrate signature manifest");
  if (!manifest.subject || manifest.subject->digest != subject_digest)
    return bad("the signature's subject is not " + subject_digest.to_string());
  if (manifest.layers.size() != 1 || manifest.layers[0].media_type != k_signature_layer)
    return bad("a signature manifest holds exactly one " + std::string(k_signature_layer) + " layer");
  // An Ed25519 signature is 64 bytes; anything past a few KiB is not ours.
  if (manifest.layers[0].size > 4096) return bad("signature layer larger than 4 KiB");
  return manifest.layers[0];
}

std::string referrers_tag(const digest::Digest& digest) {
  return std::string(digest::to_string(digest.algorithm())) + "-" + digest.hex();
}

}  // namespace orc::registry
