// The registry client against Debian's real docker-registry (distribution
// 2.8), started by this binary on 127.0.0.1 (scripts/start-registry.sh) and
// stopped by PID: pushes (monolithic, chunked, skipped when present), pulls by
// tag and digest, artifact and signature manifests through the referrers
// fallback tag, tag listing, basic auth, and the faults: a flipped byte on
// the registry's disk, a connection cut mid-blob, a stopped registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/client.hpp"
#include "tests/integration/fault_proxy.hpp"
#include "tests/integration/process.hpp"
#include "tests/integration/registry_process.hpp"

namespace orc::registry {
namespace {

namespace fs = std::filesystem;
using integration::RegistryProcess;
using integration::run_process;
using integration::TempDir;
using std::chrono::milliseconds;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& path, std::string_view bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string out(size, '\0');
  for (auto& c : out) c = static_cast<char>(rng());
  return out;
}

struct RegistryFixture : ::testing::Test {
  TempDir dir{"orc-registry-it"};
  std::string log;

  Client client(const std::string& url, std::optional<Credentials> credentials = {}) {
    return Client(
        ClientOptions{.url = url,
                      .credentials = std::move(credentials),
                      .retry = {.max_attempts = 3, .base_delay = milliseconds(50), .max_delay = milliseconds(200)},
                      .log = [this](std::string_view line) { log += std::string(line) + "\n"; }},
        make_curl_transport());
  }
};

#define ASSERT_OK(expr)                                               \
  do {                                                                \
    const auto& result_ = (expr);                                     \
    ASSERT_TRUE(result_) << #expr << ": " << result_.error().message; \
  } while (0)

TEST_F(RegistryFixture, PushPullFaultsAnonymous) {
  RegistryProcess registry(dir.path() / "registry");
  ASSERT_EQ(registry.error(), "");
  auto c = client(registry.url("team/artifacts"));
  ASSERT_OK(c.ping());

  // Blobs: a file monolithically, a file in 1 MiB chunks; the second push of
  // each is skipped after HEAD.
  const std::string layer1 = random_bytes(3 << 20, 1), layer2 = random_bytes((5 << 20) + 123, 2);
  const fs::path file1 = dir.path() / "layer1", file2 = dir.path() / "layer2";
  write(file1, layer1);
  write(file2, layer2);
  const Descriptor d1 = describe(k_layer_tar_zstd, layer1), d2 = describe(k_layer_tar_zstd, layer2);
  auto pushed = c.push_blob(d1.digest, file1);
  ASSERT_OK(pushed);
  EXPECT_TRUE(pushed->uploaded);
  pushed = c.push_blob(d2.digest, file2, {.mode = UploadMode::chunked, .chunk_size = 1 << 20});
  ASSERT_OK(pushed);
  EXPECT_TRUE(pushed->uploaded);
  const std::string last_chunk = "Content-Range: 5242880-" + std::to_string(layer2.size() - 1);
  EXPECT_NE(log.find(last_chunk), std::string::npos) << "the last chunk was not a PATCH";
  for (const auto* d : {&d1, &d2}) {
    pushed = c.push_blob(d->digest, d == &d1 ? file1 : file2);
    ASSERT_OK(pushed);
    EXPECT_FALSE(pushed->uploaded) << "pushed twice: " << d->digest.to_string();
    EXPECT_EQ(c.blob_size(d->digest).value(), d->size);
  }
  EXPECT_EQ(c.blob_size(digest::sha256("absent")).value(), std::nullopt);

  // The artifact manifest, by tag and by digest.
  const std::string config_json = R"({"schema":1,"recipe":"vision-ext"})";
  const Descriptor config = describe(k_artifact_config, config_json);
  ASSERT_OK(c.push_blob(config.digest, config_json));
  const Descriptor layers[] = {d1, d2};
  const ArtifactInfo info{.created = "2025-01-02T03:04:05Z",
                          .revision = "abc",
                          .title = "vision-ext",
                          .tier = "tier-new",
                          .sass = "80,90",
                          .ptx = "90",
                          .toolkit = "12.4",
                          .recipe = "vision-ext"};
  const std::string manifest = artifact_manifest(config, layers, info);
  auto put = c.put_manifest("tier-new", k_oci_manifest, manifest);
  ASSERT_OK(put);
  EXPECT_EQ(put->digest, digest::sha256(manifest));
  EXPECT_FALSE(put->subject_indexed);
  auto by_tag = c.get_manifest("tier-new");
  ASSERT_OK(by_tag);
  auto by_digest = c.get_manifest(put->digest.to_string());
  ASSERT_OK(by_digest);
  EXPECT_EQ(by_tag->body, manifest);
  EXPECT_EQ(by_digest->body, manifest);
  EXPECT_EQ(by_digest->media_type, k_oci_manifest);
  const auto parsed = parse_manifest(by_tag->body);
  ASSERT_OK(parsed);
  EXPECT_EQ(read_artifact(*parsed).value(), info);

  // Pull every layer: identical bytes, no partial file left.
  for (const auto& layer : parsed->layers) {
    const fs::path out = dir.path() / ("pulled-" + layer.digest.hex());
    ASSERT_OK(c.fetch_blob(layer.digest, layer.size, out));
    EXPECT_EQ(read(out), layer.digest == d1.digest ? layer1 : layer2);
    EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  }

  // The signature as a referrer: distribution 2.8 has no referrers API, so
  // it lands in the sha256-<hex> fallback tag and comes back from there.
  const std::string signature_bytes = random_bytes(64, 3);
  const Descriptor signature = describe(k_signature_layer, signature_bytes);
  ASSERT_OK(c.push_blob(signature.digest, signature_bytes));
  ASSERT_OK(c.push_blob(digest::sha256(k_empty_json), std::string(k_empty_json)));
  const Descriptor subject = describe(k_oci_manifest, manifest);
  const std::string signature_json = signature_manifest(subject, signature, info.created);
  const auto signature_manifest_digest = c.put_referrer(parse_manifest(signature_json).value(), signature_json);
  ASSERT_OK(signature_manifest_digest);
  // Twice: the fallback index must not list it twice.
  ASSERT_OK(c.put_referrer(parse_manifest(signature_json).value(), signature_json));
  const auto referrers = c.referrers(subject.digest, k_signature_artifact_type);
  ASSERT_OK(referrers);
  ASSERT_EQ(referrers->size(), 1u);
  EXPECT_EQ((*referrers)[0].digest, *signature_manifest_digest);
  EXPECT_EQ((*referrers)[0].artifact_type, k_signature_artifact_type);
  const auto fetched_signature = c.get_manifest((*referrers)[0].digest.to_string());
  ASSERT_OK(fetched_signature);
  const auto signature_layer = read_signature(parse_manifest(fetched_signature->body).value(), subject.digest);
  ASSERT_OK(signature_layer);
  const fs::path signature_out = dir.path() / "signature";
  ASSERT_OK(c.fetch_blob(signature_layer->digest, signature_layer->size, signature_out));
  EXPECT_EQ(read(signature_out), signature_bytes);
  EXPECT_EQ(c.referrers(d1.digest).value().size(), 0u);

  // Tags: distribution 2.8 ignores n= and sends no Link (pagination came in
  // 3.0; the unit tests cover Link); every tag must still come back.
  for (int i = 0; i < 5; ++i) ASSERT_OK(c.put_manifest("t" + std::to_string(i), k_oci_manifest, manifest));
  auto tags = c.list_tags(2);
  ASSERT_OK(tags);
  std::ranges::sort(*tags);  // 2.8 lists in storage order
  EXPECT_EQ(*tags, (std::vector<std::string>{referrers_tag(subject.digest), "t0", "t1", "t2", "t3", "t4", "tier-new"}));

  // A connection cut 1 MiB into a blob: the client resumes with Range.
  {
    integration::FaultProxy proxy(registry.port(), {.cut_after = 1 << 20});
    auto through_proxy = client(registry.url("team/artifacts", proxy.port()));
    log.clear();
    const fs::path out = dir.path() / "resumed";
    ASSERT_OK(through_proxy.fetch_blob(d2.digest, d2.size, out));
    EXPECT_TRUE(proxy.did_cut());
    EXPECT_GE(proxy.connections(), 2);
    EXPECT_NE(log.find("Range: bytes="), std::string::npos) << log;
    EXPECT_EQ(read(out), layer2);
  }

  // A flipped byte on the registry's disk: refused, nothing left behind.
  {
    const fs::path stored = registry.blob_data(d1.digest);
    ASSERT_TRUE(fs::exists(stored)) << stored;
    std::string bytes = read(stored);
    bytes[bytes.size() / 2] ^= 0x01;
    write(stored, bytes);
    const fs::path out = dir.path() / "corrupt";
    const auto result = c.fetch_blob(d1.digest, d1.size, out);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::digest_mismatch) << result.error().message;
    EXPECT_NE(result.error().message.find(digest::sha256(bytes).to_string()), std::string::npos)
        << result.error().message;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  }

  // The registry stopped: unreachable, after the bounded retries.
  registry.stop();
  const auto down = c.ping();
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().kind, ErrorKind::unreachable) << down.error().message;
  EXPECT_NE(down.error().message.find("127.0.0.1:" + std::to_string(registry.port())), std::string::npos);
  const auto pull_down = c.fetch_blob(d2.digest, d2.size, dir.path() / "down");
  ASSERT_FALSE(pull_down);
  EXPECT_EQ(pull_down.error().kind, ErrorKind::unreachable);
}

TEST_F(RegistryFixture, BasicAuth) {
  const std::string password = "s3cret-Pa55";
  RegistryProcess registry(dir.path() / "registry", "ci:" + password);
  ASSERT_EQ(registry.error(), "");

  auto anonymous = client(registry.url("team/artifacts"));
  auto refused = anonymous.ping();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::unauthorized);
  EXPECT_EQ(refused.error().status, 401);

  auto wrong = client(registry.url("team/artifacts"), Credentials{"ci", "wrong"});
  refused = wrong.ping();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::unauthorized);
  EXPECT_EQ(refused.error().message.find("wrong"), std::string::npos) << refused.error().message;

  // Credentials in the URL work like the option and never show in messages.
  auto c = client("http://ci:" + password + "@127.0.0.1:" + std::to_string(registry.port()) + "/team/artifacts");
  EXPECT_EQ(c.display_url(), registry.url("team/artifacts"));
  ASSERT_OK(c.ping());
  const std::string blob = random_bytes(300'000, 4);
  const digest::Digest digest = digest::sha256(blob);
  auto pushed = c.push_blob(digest, blob);
  ASSERT_OK(pushed);
  EXPECT_TRUE(pushed->uploaded);
  pushed = c.push_blob(digest, blob, {.mode = UploadMode::chunked});
  ASSERT_OK(pushed);
  EXPECT_FALSE(pushed->uploaded);
  const fs::path out = dir.path() / "pulled";
  ASSERT_OK(c.fetch_blob(digest, blob.size(), out));
  EXPECT_EQ(read(out), blob);
  const auto missing = anonymous.fetch_blob(digest, blob.size(), dir.path() / "anonymous");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::unauthorized);

  EXPECT_EQ(log.find(password), std::string::npos);
  EXPECT_EQ(log.find(basic_authorization({"ci", password}).substr(6)), std::string::npos);
  EXPECT_NE(log.find("Authorization: <redacted>"), std::string::npos);
}

}  // namespace
}  // namespace orc::registry
