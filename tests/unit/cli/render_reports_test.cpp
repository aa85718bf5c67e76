// The reports of images, fetch, push, pull, key and plan as the command line
// prints them: exactly the text and JSON the commands printed before they
// returned reports, the warnings on stderr, the report's exit code; and the
// plan and images tables within 100 columns.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "tests/unit/cli/cli_fixture.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

using testing::CliTest;
using testing::run_cli;
using util::ExitCode;

const std::string k_hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const digest::Digest k_digest = digest::Digest::from_hex(k_hex).value();
// The digest whose 64 hex digits are all `c`.
digest::Digest all(char c) { return digest::Digest::from_hex(std::string(64, c)).value(); }

struct Emitted {
  std::string out, err;
  ExitCode code = ExitCode::ok;
};

template <typename Report>
Emitted emitted(const Report& report, Format format) {
  std::ostringstream out, err;
  Io io{.out = out, .err = err, .exit_code = ExitCode::bad_input};  // emit must set it
  emit(io, report, format);
  return {out.str(), err.str(), io.exit_code};
}

TEST(TransferFetchJson, HasTheDocumentedShape) {
  const app::FetchReport result{
      .recipe = "saxpy",
      .tier = "tier-new",
      .manifest = k_digest,
      .dir = "out",
      .from = "store",
      .files = {{.path = "bin/saxpy", .sha256 = k_hex, .size = 9, .sass = {"sm_90"}, .ptx = {"compute_90"}}},
      .digest_ok = true,
      .signature_ok = false,
      .archs_ok = true};
  const auto parsed = nlohmann::ordered_json::parse(render(result, Format::json));
  std::vector<std::string> keys;
  for (const auto& [key, value] : parsed.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"recipe", "tier", "tier_from", "digest", "dir", "from", "files", "verified",
                                            "warnings"}));
  EXPECT_EQ(parsed["digest"], "sha256:" + k_hex);
  EXPECT_EQ(parsed["files"], nlohmann::ordered_json::parse(R"([{"path": "bin/saxpy", "sha256": ")" + k_hex +
                                                           R"(", "sass": ["sm_90"], "ptx": ["compute_90"]}])"));
  EXPECT_EQ(parsed["verified"],
            nlohmann::ordered_json::parse(R"({"digest": true, "signature": false, "archs": true})"));
  EXPECT_EQ(parsed["warnings"], nlohmann::ordered_json::array()) << "none said, none carried";
}

TEST(TransferFetchJson, SaysSmokeOnlyUnderRequireSmoke) {
  app::FetchReport result{
      .recipe = "saxpy", .tier = "tier-new", .manifest = k_digest, .digest_ok = true, .archs_ok = true};
  result.smoke_ok = true;
  EXPECT_EQ(nlohmann::ordered_json::parse(render(result, Format::json))["verified"],
            nlohmann::ordered_json::parse(R"({"digest": true, "signature": false, "archs": true, "smoke": true})"));
}

TEST(FetchRender, TextSaysWhatWentWhere) {
  app::FetchReport report{.recipe = "saxpy",
                          .tier = "tier-new",
                          .manifest = k_digest,
                          .dir = "out",
                          .from = "http://registry:5000/team/a",
                          .files = {{.path = "bin/saxpy", .sha256 = k_hex, .size = 9, .sass = {"sm_80", "sm_90"}},
                                    {.path = "lib/libk.so", .sha256 = k_hex, .size = 2048, .ptx = {"compute_90"}}},
                          .digest_ok = true,
                          .signature_ok = true,
                          .archs_ok = true,
                          .signer = "0011223344556677",
                          .jit = {"B200 (10.0) runs compute_90 by PTX JIT"}};
  const Emitted e = emitted(report, Format::text);
  EXPECT_EQ(e.out, "fetched saxpy for tier-new sha256:" + k_hex +
                       " from http://registry:5000/team/a into out\n"
                       "verified: digest yes, signature yes (key 0011223344556677), archs yes\n"
                       "note: B200 (10.0) runs compute_90 by PTX JIT\n"
                       "  out/bin/saxpy  9 B  sha256:0123456789abcdef  sass sm_80,sm_90  ptx -\n"
                       "  out/lib/libk.so  2.0 KiB  sha256:0123456789abcdef  sass -  ptx compute_90\n");
  EXPECT_EQ(e.err, "");
  EXPECT_EQ(e.code, ExitCode::ok);
  report.from = "store";
  report.signature_ok = false;
  report.smoke_ok = true;
  report.files.clear();
  report.jit.clear();
  EXPECT_EQ(render(report, Format::text),
            "fetched saxpy for tier-new sha256:" + k_hex +
                " from the local store into out\n"
                "verified: digest yes, signature NO (--insecure), archs yes, smoke yes\n");
}

TEST(FetchRender, AWarningGoesToStderrAndIntoTheJson) {
  app::FetchReport report{.recipe = "saxpy", .tier = "tier-new", .manifest = k_digest, .dir = "out", .from = "store"};
  report.warnings.push_back({.severity = util::Severity::warning, .message = "--insecure: the check is off"});
  for (const Format format : {Format::text, Format::json}) {
    const Emitted e = emitted(report, format);
    EXPECT_EQ(e.err, "orchestrate: warning: --insecure: the check is off\n");
    EXPECT_EQ(e.code, ExitCode::ok);
  }
  EXPECT_EQ(nlohmann::json::parse(render(report, Format::json))["warnings"],
            nlohmann::json::parse(R"(["--insecure: the check is off"])"));
}

app::PushReport two_pushed() {
  return {.remote = "http://registry:5000/team/a",
          .pushed = {{.recipe = "saxpy",
                      .tier = "tier-new",
                      .manifest = k_digest,
                      .artifact = k_digest,
                      .tag = "saxpy--tier-new--0123456789abcdef",
                      .uploaded = 3,
                      .skipped = 1,
                      .moved_latest = true,
                      .current = true,
                      .newer = all('f'),
                      .previous = all('e')},
                     {.recipe = "saxpy",
                      .tier = "tier-old",
                      .manifest = k_digest,
                      .artifact = k_digest,
                      .tag = "saxpy--tier-old--0123456789abcdef",
                      .uploaded = 0,
                      .skipped = 4,
                      .moved_latest = false}}};
}

TEST(PushRender, TextIsALinePerSet) {
  const Emitted e = emitted(two_pushed(), Format::text);
  EXPECT_EQ(e.out,
            "pushed saxpy for tier-new sha256:0123456789abcdef as http://registry:5000/team/a:"
            "saxpy--tier-new--0123456789abcdef (3 blobs sent, 1 already there; saxpy--tier-new moved to it from "
            "sha256:eeeeeeeeeeeeeeee; the current set)\n"
            "  note: a newer set by time, sha256:ffffffffffffffff, is not current (the last build answered this one); "
            "'orchestrate promote saxpy --tier tier-new --digest ffffffffffffffff' makes it current\n"
            "pushed saxpy for tier-old sha256:0123456789abcdef as http://registry:5000/team/a:"
            "saxpy--tier-old--0123456789abcdef (0 blobs sent, 4 already there)\n");
  EXPECT_EQ(e.err, "");
  EXPECT_EQ(e.code, ExitCode::ok);
}

TEST(PushRender, JsonHasTheRemoteAndEverySet) {
  EXPECT_EQ(render(two_pushed(), Format::json), R"({
  "remote": "http://registry:5000/team/a",
  "pushed": [
    {
      "recipe": "saxpy",
      "tier": "tier-new",
      "manifest": "sha256:)" + k_hex + R"(",
      "artifact": "sha256:)" + k_hex + R"(",
      "tag": "saxpy--tier-new--0123456789abcdef",
      "uploaded": 3,
      "skipped": 1,
      "latest": true,
      "current": true,
      "newer": "sha256:)" + std::string(64, 'f') + R"(",
      "previous": "sha256:)" + std::string(64, 'e') +
                                                    R"("
    },
    {
      "recipe": "saxpy",
      "tier": "tier-old",
      "manifest": "sha256:)" + k_hex + R"(",
      "artifact": "sha256:)" + k_hex + R"(",
      "tag": "saxpy--tier-old--0123456789abcdef",
      "uploaded": 0,
      "skipped": 4,
      "latest": false,
      "current": false,
      "newer": null,
      "previous": null
    }
  ]
}
)");
}

// Issue 29: promote says the set it made current, the one before here and
// the one the remote's tag named before; without a remote, that the tag did
// not move.
TEST(PromoteRender, TextAndJsonNameTheSetBeforeHereAndOnTheRemote) {
  app::PromoteReport report{.recipe = "saxpy",
                            .tier = "tier-new",
                            .manifest = k_digest,
                            .previous = all('f'),
                            .previous_recorded = true,
                            .remote = "http://registry:5000/team/a"};
  report.pushed = app::PushedEntry{.recipe = "saxpy",
                                   .tier = "tier-new",
                                   .manifest = k_digest,
                                   .uploaded = 0,
                                   .skipped = 4,
                                   .moved_latest = true,
                                   .current = true,
                                   .previous = all('e')};
  EXPECT_EQ(emitted(report, Format::text).out,
            "sha256:0123456789abcdef is the current set of saxpy for tier-new here (before: sha256:ffffffffffffffff)\n"
            "on http://registry:5000/team/a: saxpy--tier-new names it (before: sha256:eeeeeeeeeeeeeeee); 0 blobs "
            "sent, 4 already there\n");
  const auto j = nlohmann::json::parse(render(report, Format::json));
  EXPECT_EQ(j["digest"], "sha256:" + k_hex);
  EXPECT_EQ(j["previous"], "sha256:" + std::string(64, 'f'));
  EXPECT_EQ(j["tag"], "saxpy--tier-new");
  EXPECT_EQ(j["tag_previous"], "sha256:" + std::string(64, 'e'));

  report.pushed.reset();
  report.remote.clear();
  report.previous_recorded = false;
  EXPECT_EQ(emitted(report, Format::text).out,
            "sha256:0123456789abcdef is the current set of saxpy for tier-new here (before: sha256:ffffffffffffffff, "
            "the newest verified set, as none was recorded)\n"
            "  note: no remote is configured (ORCHESTRATE_REMOTE or 'remote:'): the registry's tag was not moved\n");
  EXPECT_TRUE(nlohmann::json::parse(render(report, Format::json))["remote"].is_null());
}

TEST(PullRender, TextJsonAndTheInsecureWarning) {
  app::PullReport report{
      .recipe = "saxpy", .tier = "tier-new", .manifest = k_digest, .downloaded = true, .verified = true};
  EXPECT_EQ(render(report, Format::text), "pulled saxpy for tier-new sha256:" + k_hex + "\n");
  EXPECT_EQ(render(report, Format::json), R"({
  "recipe": "saxpy",
  "tier": "tier-new",
  "digest": "sha256:)" + k_hex + R"(",
  "downloaded": true,
  "verified": true
}
)");
  report.downloaded = false;
  const cache::Verification unsigned_set{.status = cache::VerifyStatus::not_signed, .detail = "not signed"};
  report.warnings.push_back(app::insecure_diagnostic(digest::Digest::from_hex(k_hex).value(), unsigned_set));
  const Emitted e = emitted(report, Format::text);
  EXPECT_EQ(e.out, "already stored: saxpy for tier-new sha256:" + k_hex + "\n");
  EXPECT_EQ(e.err, app::insecure_warning(digest::Digest::from_hex(k_hex).value(), unsigned_set));
  EXPECT_EQ(e.code, ExitCode::ok);
}

TEST(KeyRender, GenerateExportAndTrust) {
  const app::KeyGenerateReport made{
      .key_id = "0011223344556677", .private_key = "/k/signing.pem", .public_key = "/k/signing.pub.pem"};
  EXPECT_EQ(emitted(made, Format::text).out,
            "generated signing key 0011223344556677\n  private key: /k/signing.pem (mode 0600; keep it on this "
            "machine)\n  public key:  /k/signing.pub.pem (trusted here; 'orchestrate key trust' it on every machine "
            "that fetches)\n");
  EXPECT_EQ(emitted(made, Format::json).out, R"({
  "key_id": "0011223344556677",
  "private_key": "/k/signing.pem",
  "public_key": "/k/signing.pub.pem"
}
)");
  const app::KeyExportReport exported{.key_id = "0011223344556677", .pem = "-----BEGIN PUBLIC KEY-----\nAAAA\n"};
  const Emitted text = emitted(exported, Format::text);
  EXPECT_EQ(text.out, exported.pem) << "the PEM alone on stdout, so > me.pem is a key file";
  EXPECT_EQ(text.err, "key id 0011223344556677\n");
  EXPECT_EQ(emitted(exported, Format::json).out,
            "{\n  \"key_id\": \"0011223344556677\",\n  \"public_key\": \"-----BEGIN PUBLIC KEY-----\\nAAAA\\n\"\n}\n");
  const app::KeyTrustReport trusted{.trusted = {{.key_id = "aa", .file = "a.pem"}, {.key_id = "bb", .file = "b.pem"}}};
  EXPECT_EQ(emitted(trusted, Format::text).out, "trusted key aa from a.pem\ntrusted key bb from b.pem\n");
  EXPECT_EQ(emitted(trusted, Format::json).out, R"({
  "trusted": [
    {
      "key_id": "aa",
      "file": "a.pem"
    },
    {
      "key_id": "bb",
      "file": "b.pem"
    }
  ]
}
)");
  EXPECT_EQ(emitted(trusted, Format::text).code, ExitCode::ok);
}

// A report's exit code is the command's: emit passes it on as it is.
TEST(ReportExitCodes, EmitPassesTheReportsCodeOn) {
  EXPECT_EQ(emitted(app::PullReport{.exit_code = ExitCode::check_failed}, Format::text).code, ExitCode::check_failed);
  EXPECT_EQ(emitted(app::PushReport{.exit_code = ExitCode::outside_failure}, Format::json).code,
            ExitCode::outside_failure);
  EXPECT_EQ(emitted(app::FetchReport{.exit_code = ExitCode::check_failed}, Format::text).code, ExitCode::check_failed);
  EXPECT_EQ(emitted(app::KeyTrustReport{.exit_code = ExitCode::ok}, Format::text).code, ExitCode::ok);
}

// A tier of long GPU names and a recipe no toolkit serves: every line of the
// plan within 100 columns, a name never run into the next field.
constexpr const char* k_long_config = R"(tiers:
  tier-wide:
    gpus: ["RTX PRO 6000 Blackwell Server Edition", "NVIDIA H100 80GB HBM3", "GeForce RTX 4090", "A100", "Tesla K80"]
toolkits: ["11.8", "12.4", "12.8", "13.0"]
recipes:
  - name: a-recipe-with-a-rather-long-name-indeed
    framework: cmake
    source: {path: src}
    tiers: [tier-wide]
)";

void expect_within_100(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(display_width(line), k_table_width) << line;
}

TEST_F(CliTest, PlanLinesFitAndLongNamesAndReasonsDoNotCollide) {
  const auto config = write("orchestrate.yaml", k_long_config);
  const auto r = run_cli({"plan", "-f", config, "--explain"});
  EXPECT_EQ(r.code, 1) << r.err;  // Tesla K80 and Blackwell: no one toolkit
  expect_within_100(r.out);
  EXPECT_EQ(r.out.find("Edition12.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  a-recipe-with-a-rather-long-name-indeed [cmake]  UNSATISFIABLE\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    - "), std::string::npos) << "the reasons, beneath:\n" << r.out;
}

TEST_F(CliTest, PlanColumnsAlignAcrossRecipes) {
  const auto config = write("orchestrate.yaml", testing::k_config);
  const auto r = run_cli({"plan", "tier-new", "-f", config});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_within_100(r.out);
  // Every recipe row starts its CUDA column at the same place, two spaces
  // or more after the widest name.
  std::istringstream lines(r.out);
  std::vector<std::size_t> at;
  for (std::string line; std::getline(lines, line);)
    if (const auto cuda = line.find("CUDA "); cuda != std::string::npos && line.starts_with("  ") && line[2] != ' ') {
      at.push_back(cuda);
      EXPECT_EQ(line.substr(cuda - 2, 2), "  ") << line;
    }
  ASSERT_EQ(at.size(), 2u) << r.out;
  EXPECT_EQ(at[0], at[1]) << r.out;
}

TEST_F(CliTest, ImagesListTablesFitAndAlign) {
  const testing::ScopedEnv cache("ORCHESTRATE_CACHE_DIR", m_dir.string());
  const auto r = run_cli({"images", "list", "--engine-socket", (m_dir / "missing.sock").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  // The tables (the engine's line after them names a path of any length).
  expect_within_100(r.out.substr(0, r.out.find("\nengine: ")));
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    if (line.find("orchestrate/cuda:") != std::string::npos) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.find("orchestrate/cuda:"), rows[0].find("orchestrate/cuda:")) << r.out;
    EXPECT_EQ(row.find("engine not reachable"), rows[0].find("engine not reachable")) << r.out;
  }
  EXPECT_NE(r.out.find("  NAME "), std::string::npos) << r.out;
}
}  // namespace
}  // namespace orc::cli
