// The pure parts of push, pull and fetch: tag names, which remote wins, the
// arch coverage decision per ptx policy, the --insecure line, and what
// --require-smoke accepts (the shape of `fetch --json` is cli's:
// tests/unit/cli/render_transfer_test.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/app/transfer/fetch.hpp"
#include "orchestrator/app/transfer/transfer_progress.hpp"
#include "orchestrator/cache/smoke_run.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/site/remote.hpp"

namespace orc::app {
namespace {

const std::string k_hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const digest::Digest k_digest = digest::Digest::from_hex(k_hex).value();

TEST(TransferTags, NameRecipeTierAndDigest) {
  EXPECT_EQ(site::set_tag("vision-ext", "tier-new", k_digest), "vision-ext--tier-new--0123456789abcdef");
  EXPECT_EQ(site::latest_tag("vision-ext", "tier-new"), "vision-ext--tier-new");
  EXPECT_TRUE(digest::is_valid_tag(site::set_tag("vision-ext", "tier.new_2", k_digest)));
  EXPECT_TRUE(site::is_set_tag_of("vision-ext--tier-new--0123456789abcdef", "vision-ext", "tier-new"));
  // The moving tag, another tier, a short or non-hex digest part: not a set's tag.
  EXPECT_FALSE(site::is_set_tag_of("vision-ext--tier-new", "vision-ext", "tier-new"));
  EXPECT_FALSE(site::is_set_tag_of("vision-ext--tier-old--0123456789abcdef", "vision-ext", "tier-new"));
  EXPECT_FALSE(site::is_set_tag_of("vision-ext--tier-new--0123456789abcde", "vision-ext", "tier-new"));
  EXPECT_FALSE(site::is_set_tag_of("vision-ext--tier-new--0123456789abcdeg", "vision-ext", "tier-new"));
  EXPECT_FALSE(site::is_set_tag_of("sha256-" + k_hex, "vision-ext", "tier-new"));
}

TEST(TransferRemote, TheEnvironmentBeatsTheConfiguration) {
  recipe::Config config;
  config.remote = "http://config:5000/team/a";
  config.remote_where = {.file = "orchestrate.yaml", .line = 7, .col = 9};
  auto chosen = site::choose_remote("http://env:5000/team/b", &config);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->url, "http://env:5000/team/b");
  EXPECT_EQ(chosen->origin, "ORCHESTRATE_REMOTE");
  chosen = site::choose_remote("", &config);  // set but empty: as unset
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->url, "http://config:5000/team/a");
  EXPECT_EQ(chosen->origin, "orchestrate.yaml:7");
  EXPECT_FALSE(site::choose_remote(nullptr, nullptr));
  const recipe::Config empty;
  EXPECT_FALSE(site::choose_remote(nullptr, &empty));
}

TEST(TransferRemote, DisplayDropsCredentials) {
  EXPECT_EQ(site::display_remote("http://ci:s3cret@127.0.0.1:5000/team/a"), "http://127.0.0.1:5000/team/a");
  EXPECT_EQ(site::display_remote("https://registry.example/team/a"), "https://registry.example/team/a");
  // An '@' in the path is not userinfo.
  EXPECT_EQ(site::display_remote("http://host/team/a@b"), "http://host/team/a@b");
}

TEST(TransferRemote, RegistryFailuresMapToExitCodes) {
  EXPECT_EQ(site::exit_code_for({.kind = registry::ErrorKind::digest_mismatch}), util::ExitCode::check_failed);
  EXPECT_EQ(site::exit_code_for({.kind = registry::ErrorKind::invalid}), util::ExitCode::bad_input);
  for (auto kind : {registry::ErrorKind::unreachable, registry::ErrorKind::unauthorized, registry::ErrorKind::server,
                    registry::ErrorKind::not_found, registry::ErrorKind::protocol})
    EXPECT_EQ(site::exit_code_for({.kind = kind}), util::ExitCode::outside_failure);
}

recipe::Tier tier(recipe::PtxPolicy ptx) {
  recipe::Tier t{.name = "tier-new", .ptx = ptx};
  t.gpus.push_back({.name = "H100", .cc = {9, 0}});
  t.gpus.push_back({.name = "B200", .cc = {10, 0}});
  return t;
}

cache::Manifest manifest_with(std::vector<std::string> sass, std::vector<std::string> ptx) {
  cache::Manifest m;
  m.files.push_back({.path = "README", .sha256 = k_hex});  // no device code: not judged
  m.files.push_back({.path = "lib/libk.so",
                     .sha256 = k_hex,
                     .embedded_sass = arch::ArchList(std::move(sass)),
                     .embedded_ptx = arch::ArchList(std::move(ptx))});
  return m;
}

TEST(TransferArchCoverage, NativeSassCoversEveryPolicy) {
  const auto m = manifest_with({"sm_90", "sm_100"}, {});
  for (auto policy : {recipe::PtxPolicy::none, recipe::PtxPolicy::highest, recipe::PtxPolicy::all}) {
    const auto coverage = site::check_arch_coverage(m, tier(policy));
    EXPECT_TRUE(coverage.ok);
    EXPECT_TRUE(coverage.jit.empty());
  }
}

TEST(TransferArchCoverage, JitIsAllowedUnlessThePolicyIsNone) {
  const auto m = manifest_with({"sm_90"}, {"compute_90"});
  const auto allowed = site::check_arch_coverage(m, tier(recipe::PtxPolicy::highest));
  EXPECT_TRUE(allowed.ok);
  EXPECT_EQ(allowed.jit,
            std::vector<std::string>{"lib/libk.so: B200 (10.0) runs by JIT from compute_90 PTX (no sm_100 SASS)"});
  const auto refused = site::check_arch_coverage(m, tier(recipe::PtxPolicy::none));
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.problems,
            std::vector<std::string>{"lib/libk.so: no kernel image for B200 (10.0) of tier 'tier-new' (only compute_90 "
                                     "PTX, and the tier's ptx policy is none)"});
}

TEST(TransferArchCoverage, MissingKernelsAndNoDeviceCodeFail) {
  const auto missing = site::check_arch_coverage(manifest_with({"sm_90"}, {}), tier(recipe::PtxPolicy::all));
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.problems,
            std::vector<std::string>{"lib/libk.so: no kernel image for B200 (10.0) of tier "
                                     "'tier-new' (needs sm_100 SASS or PTX at or below compute_100)"});
  // PTX newer than the device never JITs down.
  EXPECT_FALSE(site::check_arch_coverage(manifest_with({}, {"compute_100"}), tier(recipe::PtxPolicy::all)).ok);
  const auto nothing = site::check_arch_coverage(manifest_with({}, {}), tier(recipe::PtxPolicy::highest));
  EXPECT_FALSE(nothing.ok);
  EXPECT_EQ(nothing.problems,
            std::vector<std::string>{"no file of the set embeds device code, so nothing covers tier 'tier-new'"});
}

TEST(TransferInsecure, TheWarningSaysTheCheckIsOffEveryTime) {
  const cache::Verification untrusted{.status = cache::VerifyStatus::unknown_key,
                                      .key_id = "0011223344556677",
                                      .detail = "signed by key 0011223344556677, which is not trusted"};
  EXPECT_EQ(insecure_warning(k_digest, untrusted),
            "orchestrate: warning: --insecure: the signature check is off for sha256:0123456789abcdef (it does not "
            "verify: signed by key 0011223344556677, which is not trusted)\n");
  const cache::Verification good{.status = cache::VerifyStatus::verified, .detail = "signed by trusted key 00"};
  EXPECT_EQ(insecure_warning(k_digest, good),
            "orchestrate: warning: --insecure: the signature check is off for sha256:0123456789abcdef (it verifies "
            "anyway: signed by trusted key 00)\n");
}

const cache::SmokeAttestation k_pass{
    .gpu = "NVIDIA H200", .cc = "9.0", .driver = "580.65.06", .outcome = "pass", .time = "2026-11-29T00:00:00Z"};
const cache::SmokeAttestation k_pass_b200{
    .gpu = "NVIDIA B200", .cc = "10.0", .driver = "580.65.06", .outcome = "pass", .time = "2026-11-29T00:00:00Z"};

// Manifests whose runs node-a ran (one GPU ordinal each) and signed, as
// `smoke --artifact` records them, and the keys that trust node-a.
class TransferRequireSmoke : public ::testing::Test {
 protected:
  cache::SigningKey m_key = *cache::SigningKey::generate();
  cache::TrustedKeys m_trusted{{m_key.public_key().key_id(), m_key.public_key()}};

  cache::Manifest smoked(std::map<std::string, std::vector<cache::SmokeAttestation>> smoke) {
    cache::Manifest manifest;
    const digest::Digest subject = cache::smoke_subject(manifest);
    for (auto& [tier_name, runs] : smoke)
      for (std::size_t i = 0; i < runs.size(); ++i) {
        runs[i].node = "node-a";
        runs[i].ordinal = static_cast<std::uint32_t>(i);
        runs[i].member = true;
        cache::sign_smoke_run(runs[i], m_key, tier_name, subject);
      }
    manifest.smoke = std::move(smoke);
    return manifest;
  }
  std::string problem(const cache::Manifest& manifest) {
    return site::smoke_problem(manifest, k_digest, tier(recipe::PtxPolicy::highest), m_trusted).value_or("");
  }
};

TEST_F(TransferRequireSmoke, APassOnEveryCcOfTheTierSatisfiesIt) {
  EXPECT_EQ(problem(smoked({{"tier-new", {k_pass, k_pass_b200}}})), "");
}

TEST_F(TransferRequireSmoke, NoAttestationForTheTierSaysWhatToRun) {
  const std::string expected = "sha256:" + k_hex +
                               " has no smoke attestation for tier 'tier-new', so it lacks a passing run on CC 9.0 "
                               "(H100) and 10.0 (B200) (--require-smoke); run 'orchestrate smoke tier-new --artifact "
                               "sha256:" +
                               k_hex + "' on a node with those GPUs and push the attested set it stores";
  EXPECT_EQ(problem(smoked({})), expected);
  // Another tier's pass, or an empty list, proves nothing for this one.
  EXPECT_EQ(problem(smoked({{"tier-old", {k_pass, k_pass_b200}}})), expected);
  EXPECT_EQ(problem(smoked({{"tier-new", {}}})), expected);
}

TEST_F(TransferRequireSmoke, APassOnOneCcLeavesTheOtherMissing) {
  const std::string got = problem(smoked({{"tier-new", {k_pass, k_pass}}}));
  EXPECT_EQ(got, "sha256:" + k_hex +
                     "'s smoke attestation for tier 'tier-new' lacks a passing run on CC 10.0 (B200) "
                     "(--require-smoke); run 'orchestrate smoke tier-new --artifact sha256:" +
                     k_hex + "' on a node with that GPU and push the attested set it stores");
}

TEST_F(TransferRequireSmoke, AnyOutcomeButPassRefuses) {
  cache::SmokeAttestation failed = k_pass;
  failed.gpu = "NVIDIA H100";
  failed.outcome = "fail";
  const std::string refused = problem(smoked({{"tier-new", {k_pass, failed, k_pass_b200}}}));
  EXPECT_NE(refused.find("smoke attestation for tier 'tier-new' is not a pass on NVIDIA H100 (CC 9.0, driver "
                         "580.65.06) on node-a: fail (--require-smoke); fix it, run 'orchestrate smoke tier-new "
                         "--artifact sha256:" +
                         k_hex + "' on that node"),
            std::string::npos)
      << refused;
  cache::SmokeAttestation skipped = k_pass;
  skipped.outcome = "none";
  EXPECT_NE(problem(smoked({{"tier-new", {skipped, k_pass_b200}}})), "");
}

// Runs recorded before runs were signed cannot say which node ran them.
TEST_F(TransferRequireSmoke, UnsignedRunsCountForNothing) {
  cache::Manifest manifest;
  manifest.smoke["tier-new"] = {k_pass, k_pass_b200};
  const std::string refused = problem(manifest);
  EXPECT_NE(refused.find("lacks a passing run on CC 9.0 (H100) and 10.0 (B200) (--require-smoke; not counted: NVIDIA "
                         "H200 (CC 9.0, driver 580.65.06): recorded before runs were signed by their node; NVIDIA B200 "
                         "(CC 10.0, driver 580.65.06): recorded before runs were signed by their node)"),
            std::string::npos)
      << refused;
}

TEST(TransferProgressBar, FillsByFraction) {
  EXPECT_EQ(progress_bar(0, 100, 4), "[....]  0 B / 100 B    0%");
  EXPECT_EQ(progress_bar(50, 100, 4), "[##..]  50 B / 100 B   50%");
  EXPECT_EQ(progress_bar(200, 100, 4), "[####]  100 B / 100 B  100%");
}

}  // namespace
}  // namespace orc::app
