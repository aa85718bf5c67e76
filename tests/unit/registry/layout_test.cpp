#include "orchestrator/registry/layout.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::registry {
namespace {

const ArtifactInfo k_info{.created = "2025-01-02T03:04:05Z",
                          .revision = "0123abc",
                          .source = "https://git.example/vision-ext",
                          .title = "vision-ext",
                          .version = "1.4.0",
                          .tier = "tier-new",
                          .sass = "80,86,90",
                          .ptx = "90",
                          .toolkit = "12.4",
                          .cudnn = "9.1",
                          .recipe = "vision-ext"};

Descriptor config() { return describe(k_artifact_config, R"({"schema":1})"); }
Descriptor layer(std::string_view bytes) { return describe(k_layer_tar_zstd, bytes); }

TEST(Layout, ArtifactManifestRoundTrip) {
  const Descriptor layers[] = {layer("tar1"), layer("tar2")};
  const std::string text = artifact_manifest(config(), layers, k_info);
  const auto json = nlohmann::json::parse(text);
  EXPECT_EQ(json["schemaVersion"], 2);
  EXPECT_EQ(json["mediaType"], k_oci_manifest);
  EXPECT_EQ(json["config"]["mediaType"], k_artifact_config);
  EXPECT_EQ(json["layers"][1]["digest"], digest::sha256("tar2").to_string());
  EXPECT_EQ(json["annotations"]["org.opencontainers.image.revision"], "0123abc");
  EXPECT_EQ(json["annotations"]["dev.orchestrate.sass"], "80,86,90");
  EXPECT_EQ(json["annotations"].size(), 11u);

  const auto parsed = parse_manifest(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->config, config());
  ASSERT_EQ(parsed->layers.size(), 2u);
  EXPECT_EQ(parsed->layers[0], layers[0]);
  EXPECT_FALSE(parsed->subject);
  const auto info = read_artifact(*parsed);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(*info, k_info);
}

TEST(Layout, ArtifactManifestRefusesCallerMistakes) {
  const Descriptor layers[] = {layer("x")};
  EXPECT_THROW(artifact_manifest(describe("application/json", "{}"), layers, k_info), util::Failure);
  const Descriptor wrong[] = {describe("application/x-tar", "x")};
  EXPECT_THROW(artifact_manifest(config(), wrong, k_info), util::Failure);
  ArtifactInfo no_tier = k_info;
  no_tier.tier.clear();
  EXPECT_THROW(artifact_manifest(config(), layers, no_tier), util::Failure);
}

TEST(Layout, SignatureManifestIsAReferrer) {
  const Descriptor layers[] = {layer("x")};
  const std::string artifact = artifact_manifest(config(), layers, k_info);
  const Descriptor subject = describe(k_oci_manifest, artifact);
  const Descriptor signature = describe(k_signature_layer, std::string(64, 's'));
  const std::string text = signature_manifest(subject, signature, k_info.created);
  const auto parsed = parse_manifest(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->artifact_type, k_signature_artifact_type);
  EXPECT_EQ(parsed->config.media_type, k_empty_config);
  EXPECT_EQ(parsed->config.digest.to_string(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  ASSERT_TRUE(parsed->subject);
  EXPECT_EQ(*parsed->subject, subject);
  EXPECT_EQ(read_signature(*parsed, subject.digest).value(), signature);
  EXPECT_FALSE(read_signature(*parsed, digest::sha256("other")));
  EXPECT_FALSE(read_artifact(*parsed));  // a signature is not an artifact
  EXPECT_FALSE(read_signature(parse_manifest(artifact).value(), subject.digest));
}

TEST(Layout, IndexRoundTripAndReferrersTag) {
  Index index;
  Descriptor d = describe(k_oci_manifest, "m");
  d.artifact_type = std::string(k_signature_artifact_type);
  d.annotations["org.opencontainers.image.created"] = "now";
  index.manifests = {d};
  const auto parsed = parse_index(index_json(index));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->manifests.size(), 1u);
  EXPECT_EQ(parsed->manifests[0], d);
  EXPECT_EQ(referrers_tag(d.digest), "sha256-" + d.digest.hex());
}

// One reader of image indexes: inspect's registry scan picks its platform
// from what parse_index read.
TEST(Layout, AnIndexEntrysPlatformIsReadAndPicked) {
  Index index;
  Descriptor arm = describe(k_oci_manifest, "arm");
  arm.platform = Platform{.os = "linux", .architecture = "arm64", .variant = "v8"};
  Descriptor unnamed = describe(k_oci_manifest, "unnamed");
  Descriptor amd = describe(k_oci_manifest, "amd");
  amd.platform = Platform{.os = "linux", .architecture = "amd64", .variant = ""};
  index.manifests = {arm, unnamed, amd};
  const auto parsed = parse_index(index_json(index));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->manifests.size(), 3u);
  EXPECT_EQ(parsed->manifests[0], arm);
  const Descriptor* picked = platform_manifest(*parsed, "linux", "amd64");
  ASSERT_NE(picked, nullptr);
  EXPECT_EQ(picked->digest, amd.digest);
  // No entry for the platform: the first that names none.
  EXPECT_EQ(platform_manifest(*parsed, "linux", "ppc64le")->digest, unnamed.digest);
  index.manifests = {arm};
  EXPECT_EQ(platform_manifest(index, "linux", "amd64"), nullptr);

  const std::string bad_platform =
      R"({"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
      R"("digest":")" +
      amd.digest.to_string() + R"(","size":3,"platform":{"os":7}}]})";
  const auto refused = parse_index(bad_platform);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("manifests[0].platform.os is not a short string"), std::string::npos)
      << refused.error().message;
}

// Registry JSON is untrusted: every malformed shape is an Error, never an
// exception or a crash.
TEST(Layout, MalformedManifestsAreErrors) {
  const std::string digest = digest::sha256("x").to_string();
  const std::string good_config = R"({"mediaType":"a/b","digest":")" + digest + R"(","size":1})";
  const auto manifest = [&](const std::string& config, const std::string& rest = R"("layers":[])") {
    return R"({"schemaVersion":2,"config":)" + config + "," + rest + "}";
  };
  ASSERT_TRUE(parse_manifest(manifest(good_config)));
  const std::string bad_inputs[] = {
      "",
      "[]",
      "{",
      R"({"schemaVersion":1,"config":{},"layers":[]})",
      R"({"schemaVersion":"2"})",
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","config":)" + good_config +
          R"(,"layers":[]})",
      manifest(good_config, R"("layers":{})"),
      manifest(good_config, R"("layers":[1])"),
      manifest(good_config, ""),
      manifest(R"({"mediaType":"a/b","digest":"sha256:XYZ","size":1})"),
      manifest(R"({"mediaType":"a/b","digest":"md5:00","size":1})"),
      manifest(R"({"mediaType":"a/b","digest":")" + digest + R"(","size":-1})"),
      manifest(R"({"mediaType":"a/b","digest":")" + digest + R"(","size":1.5})"),
      manifest(R"({"mediaType":"nonsense","digest":")" + digest + R"(","size":1})"),
      manifest(R"({"mediaType":"a/b","digest":")" + digest + R"(","size":1,"annotations":{"k":1}})"),
      manifest(good_config, R"("layers":[],"subject":"x")"),
      manifest(good_config, R"("layers":[],"artifactType":7)"),
  };
  for (const auto& input : bad_inputs) {
    const auto parsed = parse_manifest(input);
    ASSERT_FALSE(parsed) << input;
    EXPECT_EQ(parsed.error().kind, ErrorKind::protocol);
    EXPECT_TRUE(parsed.error().message.starts_with("malformed manifest: ")) << parsed.error().message;
  }
  EXPECT_FALSE(parse_index(R"({"schemaVersion":2,"manifests":null})"));
  EXPECT_FALSE(parse_index(manifest(good_config)));
  EXPECT_FALSE(parse_index(std::string(k_max_manifest_bytes + 1, ' ')));
}

// A field readers ignore may nest, but not as deep as 4 MiB allows (four
// million levels, hundreds of MiB as a parsed tree): refused unparsed.
TEST(Layout, ManifestsNestedPastTheBoundAreRefusedBeforeTheyAreParsed) {
  const std::string config = R"({"mediaType":"a/b","digest":")" + digest::sha256("x").to_string() + R"(","size":1})";
  const auto with_field = [&](std::size_t depth) {
    return R"({"schemaVersion":2,"config":)" + config + R"(,"layers":[],"x":)" + std::string(depth, '[') +
           std::string(depth, ']') + "}";
  };
  EXPECT_TRUE(parse_manifest(with_field(k_max_manifest_depth - 1)));
  for (const std::size_t depth : {k_max_manifest_depth, std::size_t{2'000'000}}) {
    const auto parsed = parse_manifest(with_field(depth));
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().kind, ErrorKind::protocol);
    EXPECT_EQ(parsed.error().message, "malformed manifest: nested deeper than 64 levels");
    EXPECT_FALSE(parse_index(R"({"schemaVersion":2,"manifests":[],"x":)" + std::string(depth, '[') + "}"));
  }
}

// A registry's digest is parsed once, where its JSON is read: a malformed one
// is the registry's fault (protocol: exit 3 through site::exit_code_for), and
// the message says what is wrong with it in Digest::parse's words.
TEST(Layout, AMalformedDigestFromTheRegistryIsAProtocolErrorSayingWhy) {
  const std::string upper = "sha256:" + std::string(63, 'a') + "A";
  const auto parsed = parse_manifest(R"({"schemaVersion":2,"config":{"mediaType":"a/b","digest":")" + upper +
                                     R"(","size":1},"layers":[]})");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().kind, ErrorKind::protocol);
  EXPECT_EQ(parsed.error().message, "malformed manifest: config.digest: digest '" + upper +
                                        "' has an uppercase hex digit at position 64 of its 64 (digests are "
                                        "lowercase hex)");
  const auto index =
      parse_index(R"({"schemaVersion":2,"manifests":[{"mediaType":"a/b","digest":"sha512:00","size":1}]})");
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().kind, ErrorKind::protocol);
  EXPECT_EQ(index.error().message,
            "malformed manifest: manifests[0].digest: digest 'sha512:00' uses algorithm 'sha512'; only sha256 is "
            "supported");
  const auto missing = parse_manifest(R"({"schemaVersion":2,"config":{"mediaType":"a/b","size":1},"layers":[]})");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "malformed manifest: config.digest is missing");
}

}  // namespace
}  // namespace orc::registry
