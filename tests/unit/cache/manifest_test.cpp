// Manifest schema 2: canonical bytes, round trip, and the strict parser's
// refusals (a miss for other schemas, malformed for broken schema 2).
#include "orchestrator/cache/manifest.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/cache/signing.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

using testing::sample_manifest;
using Kind = ManifestError::Kind;

// Parsing the canonical bytes gives `m` back, and the same bytes again.
void expect_round_trip(const Manifest& m) {
  const std::string text = canonical_json(m);
  const auto parsed = parse_manifest(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, m);
  EXPECT_EQ(canonical_json(*parsed), text);
}

TEST(Manifest, RoundTripsThroughCanonicalBytes) { expect_round_trip(sample_manifest()); }

TEST(Manifest, CanonicalFormSortsKeysAndFilesWithoutWhitespace) {
  Manifest m = sample_manifest();
  std::swap(m.files[0], m.files[1]);  // given out of order
  const std::string text = canonical_json(m);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(text.find(": "), std::string::npos);
  EXPECT_TRUE(text.starts_with(R"({"build_log":"sha256:cccc)")) << text;
  EXPECT_LT(text.find("lib/libvision.so"), text.find("vision.whl"));
  EXPECT_EQ(text, canonical_json(sample_manifest()));
  EXPECT_NE(text.find(R"("schema_version":2)"), std::string::npos);
  // Empty optional fields are null, not "".
  m.cudnn.clear();
  m.build_log.reset();
  const auto j = nlohmann::json::parse(canonical_json(m));
  EXPECT_TRUE(j["cudnn"].is_null());
  EXPECT_TRUE(j["build_log"].is_null());
  EXPECT_EQ(parse_manifest(canonical_json(m))->cudnn, "");
}

TEST(Manifest, OtherSchemasAndNonJsonAreNotOurs) {
  for (const char* text : {"", "not json", "[]", "{}", R"({"schema_version": 1, "key": "x"})",
                           R"({"schema_version": 3})", R"({"schema_version": "2"})", R"({"schema_version": 2.0})"}) {
    const auto r = parse_manifest(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().kind, Kind::not_ours) << text;
  }
}

using Edits = std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>>;

// Each edit of `good` is refused as malformed, with the message expected.
void expect_refused(const nlohmann::json& good, const Edits& edits) {
  for (const auto& [edit, expected] : edits) {
    nlohmann::json j = good;
    edit(j);
    const auto r = parse_manifest(j.dump());
    ASSERT_FALSE(r) << expected;
    EXPECT_EQ(r.error().kind, Kind::malformed) << expected;
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << r.error().message;
  }
}

TEST(Manifest, StrictParserRefusesBrokenSchemaTwo) {
  const auto good = nlohmann::json::parse(canonical_json(sample_manifest()));
  const Edits edits = {
      {[](auto& j) { j["extra"] = 1; }, "unknown key 'extra'"},
      {[](auto& j) { j.erase("toolkit"); }, "missing key 'toolkit'"},
      {[](auto& j) { j["recipe"] = 5; }, "recipe: expected a string"},
      {[](auto& j) { j["files"][0]["size"] = -1; }, "files[0].size"},
      {[](auto& j) { j["files"][0]["size"] = 1.5; }, "files[0].size"},
      {[](auto& j) { j["files"][0]["sha256"] = "ABC"; }, "files[0].sha256"},
      {[](auto& j) { j["files"][0]["sha256"] = ""; }, "files[0].sha256: expected 64 lower-case hex digits"},
      {[](auto& j) { j["files"][1]["path"] = "a-first"; }, "files[1].path"},
      {[](auto& j) { j["files"][0]["embedded"]["sass"] = {1}; }, "files[0].embedded.sass[0]"},
      {[](auto& j) { j["build_log"] = std::string(64, 'c'); }, "build_log: expected sha256:"},
      // A malformed digest says what is wrong with it (Digest::parse's words).
      {[](auto& j) { j["build_log"] = "sha256:" + std::string(63, 'c') + "G"; },
       "build_log: expected sha256:<64 hex digits>; digest 'sha256:" + std::string(63, 'c') +
           "G' has a character that is not a hex digit at position 64 of its 64 (digests are lowercase hex)"},
      {[](auto& j) { j["cudnn"] = ""; }, "cudnn: empty string"},
      {[](auto& j) { j["smoke"]["tier-new"][0].erase("driver"); }, "smoke.tier-new[0]: missing key 'driver'"},
      {[](auto& j) { j["image"] = "x"; }, "image: expected an object"},
      {[](auto& j) { j["recipe"] = std::string(k_max_manifest_string + 1, 'r'); }, "recipe: longer than the limit"},
  };
  expect_refused(good, edits);
}

// A file's mode is signed with its bytes: four octal digits on each file; a
// manifest without modes (written before) has the bytes it always had.
TEST(Manifest, ModesRoundTripAsFourOctalDigits) {
  Manifest m = sample_manifest();
  m.files[0].mode = 0755;
  m.files[1].mode = 0640;
  expect_round_trip(m);
  const auto j = nlohmann::json::parse(canonical_json(m));
  EXPECT_EQ(j["files"][0]["mode"], "0755");
  EXPECT_EQ(j["files"][1]["mode"], "0640");
  EXPECT_EQ(canonical_json(sample_manifest()).find("\"mode\""), std::string::npos);
  EXPECT_FALSE(parse_manifest(canonical_json(sample_manifest()))->files[0].mode);
}

TEST(Manifest, ModesBeyondThePermissionBitsAreRefused) {
  Manifest m = sample_manifest();
  m.files[0].mode = 0755;
  const auto good = nlohmann::json::parse(canonical_json(m));
  const std::string digits = "files[0].mode: expected four octal digits from 0000 to 0777";
  const Edits edits = {
      {[](auto& j) { j["files"][0]["mode"] = "04755"; }, digits},
      {[](auto& j) { j["files"][0]["mode"] = "4755"; }, digits},
      {[](auto& j) { j["files"][0]["mode"] = "755"; }, digits},
      {[](auto& j) { j["files"][0]["mode"] = "0788"; }, digits},
      {[](auto& j) { j["files"][0]["mode"] = "0x1f"; }, digits},
      {[](auto& j) { j["files"][0]["mode"] = 493; }, "files[0].mode: expected a string"},
  };
  expect_refused(good, edits);
}

// A large file carries its chunk digests; a small one has no "chunks" key.
Manifest with_chunks() {
  Manifest m = sample_manifest();
  m.files[0].size = (9 << 20) + 1;
  m.files[0].chunks = {.size = 4 << 20, .sha256 = {std::string(64, '1'), std::string(64, '2'), std::string(64, '3')}};
  return m;
}

TEST(Manifest, ChunksRoundTripAndAppearOnlyWhereAFileHasThem) {
  expect_round_trip(with_chunks());
  const auto j = nlohmann::json::parse(canonical_json(with_chunks()));
  EXPECT_EQ(j["files"][0]["chunks"]["size"], 4 << 20);
  EXPECT_EQ(j["files"][0]["chunks"]["sha256"].size(), 3u);
  EXPECT_FALSE(j["files"][1].contains("chunks"));
  // A manifest without chunks has the bytes it had before chunks existed.
  EXPECT_EQ(canonical_json(sample_manifest()).find("chunks"), std::string::npos);
}

TEST(Manifest, ChunksThatDoNotCoverTheFileExactlyAreRefused) {
  const auto good = nlohmann::json::parse(canonical_json(with_chunks()));
  const Edits edits = {
      {[](auto& j) { j["files"][0]["chunks"]["sha256"].erase(2); }, "files[0].chunks: 2 chunk digests"},
      {[](auto& j) { j["files"][0]["size"] = 3 << 20; }, "files[0].chunks: chunks of 4194304 bytes"},
      {[](auto& j) { j["files"][0]["chunks"]["size"] = 1 << 20; }, "files[0].chunks: chunks of 1048576 bytes"},
      {[](auto& j) { j["files"][0]["chunks"]["size"] = 0; }, "files[0].chunks: a file without chunks"},
      {[](auto& j) { j["files"][0]["chunks"]["sha256"][1] = "XY"; }, "files[0].chunks.sha256[1]"},
      {[](auto& j) { j["files"][0]["chunks"]["sha256"][2] = ""; }, "files[0].chunks.sha256[2]: expected 64"},
      {[](auto& j) { j["files"][0]["chunks"]["sha256"] = "x"; }, "files[0].chunks.sha256: expected an array"},
      {[](auto& j) { j["files"][0]["chunks"]["extra"] = 1; }, "files[0].chunks: unknown key 'extra'"},
      {[](auto& j) {
         j["files"][1]["chunks"] = {{"size", 4 << 20}, {"sha256", nlohmann::json::array()}};
       },
       "files[1].chunks"},
  };
  expect_refused(good, edits);
}

// A run recorded since runs are signed per node: its five signed keys.
Manifest with_signed_run() {
  Manifest m = sample_manifest();
  m.smoke["tier-new"].push_back({.gpu = "Tesla T4",
                                 .cc = "7.5",
                                 .driver = "550.54.15",
                                 .outcome = "pass",
                                 .time = "2025-01-02T05:00:00Z",
                                 .node = "node-a",
                                 .key_id = "0123456789abcdef",
                                 .ordinal = 3,
                                 .member = true,
                                 .signature = std::string(64, '\x5a')});
  return m;
}

TEST(Manifest, SignedSmokeRunsRoundTripBesideUnsignedOnes) {
  expect_round_trip(with_signed_run());
  const auto j = nlohmann::json::parse(canonical_json(with_signed_run()));
  const auto& runs = j["smoke"]["tier-new"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].size(), 5u) << "an unsigned run keeps the shape it had: " << runs[0];
  EXPECT_EQ(runs[1]["node"], "node-a");
  EXPECT_EQ(runs[1]["key_id"], "0123456789abcdef");
  EXPECT_EQ(runs[1]["ordinal"], 3);
  EXPECT_EQ(runs[1]["member"], true);
  EXPECT_EQ(runs[1]["signature"], base64_encode(std::string(64, '\x5a')));
  EXPECT_FALSE(parse_manifest(canonical_json(sample_manifest()))->smoke.at("tier-new")[0].is_signed());
}

// A manifest written before runs were signed, byte for byte as that version
// stored it: it still parses, and gives the same bytes back.
TEST(Manifest, AManifestWithAnUnsignedRunOfBeforeStillReads) {
  const std::string frozen =
      R"({"build_log":null,"created":"2026-11-29T00:00:01Z","cudnn":null,"engine":"host","files":[{"embedded":)"
      R"({"ptx":[],"sass":["sm_90"]},"path":"saxpy","requested":{"ptx":[],"sass":["sm_90"]},"sha256":")" +
      std::string(64, 'e') +
      R"(","size":28}],"framework":"nvcc","host_compiler":null,"image":{"digest":null,"reference":"host"},)"
      R"("key":"k1","recipe":"saxpy","schema_version":2,"smoke":{"tier-new":[{"cc":"9.0","driver":"580.159.04",)"
      R"("gpu":"NVIDIA H200","outcome":"pass","time":"2026-11-29T00:00:02Z"}]},"source":{"kind":"path",)"
      R"("revision":"tree:1"},"tier":"tier-new","toolkit":"13.0","warnings":[]})";
  const auto parsed = parse_manifest(frozen);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->smoke.at("tier-new").size(), 1u);
  EXPECT_EQ(parsed->smoke.at("tier-new")[0].outcome, "pass");
  EXPECT_FALSE(parsed->smoke.at("tier-new")[0].is_signed());
  EXPECT_EQ(canonical_json(*parsed), frozen);
  EXPECT_TRUE(parsed->files[0].needs.empty()) << "written before needs: a set that needs nothing it could name";
}

// The CUDA libraries a file links and its set does not carry, typed: the
// library's key, the major a node needs, the soname.
Manifest with_needs() {
  Manifest m = sample_manifest();
  m.files[0].needs = {{.library = "cudart", .major = 13, .soname = "libcudart.so.13"},
                      {.library = "cublas", .major = 13, .soname = "libcublas.so.13"},
                      {.library = "cudnn", .major = std::nullopt, .soname = "libcudnn_ops.so"}};
  return m;
}

TEST(Manifest, NeedsRoundTripSortedBySonameAndAreAbsentOtherwise) {
  Manifest m = with_needs();
  const auto j = nlohmann::json::parse(canonical_json(m));
  const auto& needs = j["files"][0]["needs"];
  ASSERT_EQ(needs.size(), 3u);
  EXPECT_EQ(needs[0], (nlohmann::json{{"library", "cublas"}, {"major", 13}, {"soname", "libcublas.so.13"}}));
  EXPECT_EQ(needs[1]["soname"], "libcudart.so.13");
  EXPECT_TRUE(needs[2]["major"].is_null());
  EXPECT_FALSE(j["files"][1].contains("needs"));
  EXPECT_EQ(canonical_json(sample_manifest()).find("needs"), std::string::npos);
  // Parsed back in canonical order: the same bytes again.
  std::ranges::sort(m.files[0].needs, {}, &LibraryNeed::soname);
  expect_round_trip(m);
  EXPECT_EQ(parse_manifest(canonical_json(with_needs()))->files[0].needs[0].major, 13);
}

TEST(Manifest, NeedsThatAreNotTypedAsSuchAreRefused) {
  const auto good = nlohmann::json::parse(canonical_json(with_needs()));
  const std::string soname = "files[0].needs[0].soname: 'libcublas.so.12' is not a file name of that major";
  const Edits edits = {
      {[](auto& j) { j["files"][0]["needs"] = nlohmann::json::array(); }, "files[0].needs: empty"},
      {[](auto& j) { j["files"][0]["needs"] = "libcublas.so.13"; }, "files[0].needs: expected an array"},
      {[](auto& j) { j["files"][0]["needs"][0].erase("major"); }, "files[0].needs[0]: missing key 'major'"},
      {[](auto& j) { j["files"][0]["needs"][0]["major"] = "13"; }, "files[0].needs[0].major: expected a non-neg"},
      {[](auto& j) { j["files"][0]["needs"][0]["major"] = 10000; }, "files[0].needs[0].major: larger than"},
      {[](auto& j) { j["files"][0]["needs"][0]["soname"] = "libcublas.so.12"; }, soname},
      {[](auto& j) { j["files"][0]["needs"][0]["soname"] = "libcublas.so.130"; }, "files[0].needs[0].soname"},
      {[](auto& j) { j["files"][0]["needs"][0]["soname"] = "lib/libcublas.so.13"; }, "files[0].needs[0].soname"},
      {[](auto& j) { j["files"][0]["needs"][2]["soname"] = "libcudnn_ops.so.9"; }, "files[0].needs[2].soname"},
      {[](auto& j) { j["files"][0]["needs"][0]["library"] = "cuBLAS"; }, "files[0].needs[0].library: expected lower"},
      {[](auto& j) { j["files"][0]["needs"][1] = j["files"][0]["needs"][0]; }, "appears twice"},
      {[](auto& j) { std::swap(j["files"][0]["needs"][0], j["files"][0]["needs"][1]); }, "not sorted by soname"},
      {[](auto& j) { j["files"][0]["needs"][0]["extra"] = 1; }, "files[0].needs[0]: unknown key 'extra'"},
  };
  expect_refused(good, edits);
}

TEST(Manifest, ASignedRunWithPartOrABrokenSignatureIsRefused) {
  const auto good = nlohmann::json::parse(canonical_json(with_signed_run()));
  const Edits edits = {
      {[](auto& j) { j["smoke"]["tier-new"][1].erase("signature"); },
       "smoke.tier-new[1]: missing key 'signature' of a signed run"},
      {[](auto& j) { j["smoke"]["tier-new"][0]["node"] = "node-a"; },
       "smoke.tier-new[0]: missing key 'key_id' of a signed run"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["extra"] = 1; }, "smoke.tier-new[1]: unknown key 'extra'"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["node"] = ""; }, "smoke.tier-new[1].node: empty"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["key_id"] = "0123"; }, "smoke.tier-new[1].key_id: expected 16"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["key_id"] = "0123456789ABCDEF"; }, "smoke.tier-new[1].key_id"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["ordinal"] = -1; }, "smoke.tier-new[1].ordinal"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["ordinal"] = k_max_gpu_ordinal + 1; },
       "smoke.tier-new[1].ordinal: larger than the limit"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["member"] = "yes"; }, "smoke.tier-new[1].member: expected true"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["signature"] = base64_encode(std::string(63, 'x')); },
       "smoke.tier-new[1].signature: expected 64 bytes of base64"},
      {[](auto& j) { j["smoke"]["tier-new"][1]["signature"] = "not base64!"; }, "smoke.tier-new[1].signature"},
  };
  expect_refused(good, edits);
}

TEST(Manifest, HostileSizesAreRefusedNotCrashed) {
  EXPECT_FALSE(parse_manifest(std::string(100000, '[') + std::string(100000, ']')));
  EXPECT_FALSE(parse_manifest(std::string(k_max_manifest_bytes + 1, ' ')));
  nlohmann::json j = nlohmann::json::parse(canonical_json(sample_manifest()));
  j["warnings"] = std::vector<std::string>(k_max_manifest_list + 1, "w");
  const auto r = parse_manifest(j.dump());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("warnings"), std::string::npos);
}

// Why the watcher rebuilt a set travels signed in its manifest; a set built
// by hand has no "trigger" key, so its bytes are what they always were.
TEST(Manifest, ARebuildTriggerRoundTripsAndIsAbsentOtherwise) {
  Manifest m = sample_manifest();
  m.trigger = RebuildTrigger{.reason = "CUDA 13.0.1 -> 13.0.2 (127.0.0.1:5000/nvidia/cuda:13.0.2-devel-ubuntu24.04)",
                             .from_set = digest::Digest::parse("sha256:" + std::string(64, 'a')).value(),
                             .from_toolkit = "13.0.1",
                             .from_image = "127.0.0.1:5000/nvidia/cuda:13.0.1-devel-ubuntu24.04",
                             .from_image_digest = "",
                             .to_toolkit = "13.0.2",
                             .to_image = "127.0.0.1:5000/nvidia/cuda:13.0.2-devel-ubuntu24.04",
                             .to_image_digest = "sha256:" + std::string(64, 'b')};
  expect_round_trip(m);
  const auto j = nlohmann::json::parse(canonical_json(m));
  EXPECT_EQ(j["trigger"]["from"]["toolkit"], "13.0.1");
  EXPECT_TRUE(j["trigger"]["from"]["image_digest"].is_null());
  EXPECT_EQ(j["trigger"]["to"]["image_digest"], "sha256:" + std::string(64, 'b'));
  EXPECT_EQ(canonical_json(sample_manifest()).find("trigger"), std::string::npos);
  EXPECT_FALSE(parse_manifest(canonical_json(sample_manifest()))->trigger);

  // A trigger missing a part, or with a key of its own, is a damaged manifest.
  auto broken = j;
  broken["trigger"].erase("to");
  auto r = parse_manifest(broken.dump());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Kind::malformed);
  EXPECT_NE(r.error().message.find("trigger: missing key 'to'"), std::string::npos) << r.error().message;
  broken = j;
  broken["trigger"]["from"]["extra"] = 1;
  r = parse_manifest(broken.dump());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("trigger.from: unknown key 'extra'"), std::string::npos) << r.error().message;
}

// Issue 29: the tier a set was built for travels signed with it, so a node
// without the configuration can judge the set; a set built before has no
// "built_for" key and the bytes it always had.
TEST(Manifest, TheTierBuiltForRoundTripsAndIsAbsentOtherwise) {
  Manifest m = sample_manifest();
  m.built_for = BuiltFor{.gpus = {{.name = "H100", .cc = "9.0"}, {.name = "", .cc = "8.6"}}, .ptx = "highest"};
  expect_round_trip(m);
  const auto j = nlohmann::json::parse(canonical_json(m));
  EXPECT_EQ(j["built_for"]["gpus"][0]["name"], "H100");
  EXPECT_TRUE(j["built_for"]["gpus"][1]["name"].is_null()) << "a GPU given as a CC has no name";
  EXPECT_EQ(j["built_for"]["ptx"], "highest");
  EXPECT_EQ(canonical_json(sample_manifest()).find("built_for"), std::string::npos);
  EXPECT_FALSE(parse_manifest(canonical_json(sample_manifest()))->built_for);

  auto broken = j;
  broken["built_for"]["ptx"] = "some";
  auto r = parse_manifest(broken.dump());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("built_for.ptx: 'some' is not a PTX policy"), std::string::npos)
      << r.error().message;
  broken = j;
  broken["built_for"]["gpus"] = nlohmann::json::array();
  r = parse_manifest(broken.dump());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("built_for.gpus: not a list of GPUs"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace orc::cache
