// Smoke runs signed by the node that ran them: what the signature covers,
// and how a newer run of a node takes the place of its own earlier one only.
#include "orchestrator/cache/smoke_run.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "test_support.hpp"

namespace orc::cache {
namespace {

SigningKey make_key() {
  auto key = SigningKey::generate();
  EXPECT_TRUE(key) << key.error().message;
  return std::move(*key);
}

SmokeAttestation run_on(const std::string& node, std::uint32_t ordinal, const std::string& outcome = "pass") {
  return {.gpu = "NVIDIA A100-SXM4-80GB",
          .cc = "8.0",
          .driver = "550.54.15",
          .outcome = outcome,
          .time = "2026-11-30T00:00:00Z",
          .node = node,
          .ordinal = ordinal,
          .member = true};
}

class SmokeRun : public ::testing::Test {
 protected:
  SigningKey m_key = make_key();
  SigningKey m_other = make_key();
  TrustedKeys m_trusted{{m_key.public_key().key_id(), m_key.public_key()},
                        {m_other.public_key().key_id(), m_other.public_key()}};
  digest::Digest m_subject = smoke_subject(testing::sample_manifest());

  SmokeAttestation signed_run(const std::string& node = "node-a", std::uint32_t ordinal = 0) {
    SmokeAttestation run = run_on(node, ordinal);
    sign_smoke_run(run, m_key, "mid", m_subject);
    return run;
  }
};

TEST_F(SmokeRun, ARunVerifiesAsSignedByTheKeyOfItsNode) {
  const SmokeAttestation run = signed_run();
  EXPECT_EQ(run.key_id, m_key.public_key().key_id());
  EXPECT_EQ(run.signature.size(), 64u);
  EXPECT_EQ(verify_smoke_run(run, "mid", m_subject, m_trusted), RunSignature::verified);
  EXPECT_EQ(verify_smoke_run(run, "mid", m_subject, {{m_other.public_key().key_id(), m_other.public_key()}}),
            RunSignature::unknown_key);
  EXPECT_EQ(verify_smoke_run(run_on("node-a", 0), "mid", m_subject, m_trusted), RunSignature::not_signed);
}

// Every field of the record, the tier and the set it is for are signed: a
// change to any of them, or the run moved elsewhere, no longer verifies.
TEST_F(SmokeRun, EveryFieldTheTierAndTheSetAreCovered) {
  const std::vector<std::pair<std::string, std::function<void(SmokeAttestation&)>>> edits = {
      {"gpu", [](auto& r) { r.gpu = "NVIDIA H100"; }},
      {"cc", [](auto& r) { r.cc = "7.5"; }},
      {"driver", [](auto& r) { r.driver = "580.65.06"; }},
      {"outcome", [](auto& r) { r.outcome = "fail"; }},
      {"time", [](auto& r) { r.time = "2026-12-01T00:00:00Z"; }},
      {"node", [](auto& r) { r.node = "node-b"; }},
      {"ordinal", [](auto& r) { r.ordinal = 1; }},
      {"member", [](auto& r) { r.member = false; }},
      {"signature", [](auto& r) { r.signature[10] ^= 1; }},
  };
  for (const auto& [field, edit] : edits) {
    SmokeAttestation run = signed_run();
    edit(run);
    EXPECT_EQ(verify_smoke_run(run, "mid", m_subject, m_trusted), RunSignature::bad_signature) << field;
  }
  // Claimed by another trusted key, moved to another tier or another set.
  SmokeAttestation claimed = signed_run();
  claimed.key_id = m_other.public_key().key_id();
  EXPECT_EQ(verify_smoke_run(claimed, "mid", m_subject, m_trusted), RunSignature::bad_signature);
  EXPECT_EQ(verify_smoke_run(signed_run(), "tier-new", m_subject, m_trusted), RunSignature::bad_signature);
  Manifest other = testing::sample_manifest();
  other.files[0].sha256 = std::string(64, 'd');
  EXPECT_EQ(verify_smoke_run(signed_run(), "mid", smoke_subject(other), m_trusted), RunSignature::bad_signature);
}

// The subject is the build: re-attesting (new runs, a new created time) keeps
// it, a different file does not.
TEST_F(SmokeRun, TheSubjectIsTheBuildWithoutItsRunsOrCreatedTime) {
  Manifest m = testing::sample_manifest();
  m.smoke["mid"].push_back(signed_run());
  m.created = "2026-12-01T00:00:00Z";
  EXPECT_EQ(smoke_subject(m), m_subject);
  m.key = "another build";
  EXPECT_NE(smoke_subject(m), m_subject);
  EXPECT_EQ(m_subject.hex().size(), 64u);
}

// A set stored again (smoke --artifact) gains the modes the index kept when
// its manifest was written before modes were signed: the runs signed on it
// before must still speak for it.
TEST_F(SmokeRun, TheSubjectLeavesTheModesOut) {
  Manifest m = testing::sample_manifest();
  m.files[0].mode = 0755;
  m.files[1].mode = 0644;
  EXPECT_EQ(smoke_subject(m), m_subject);
  EXPECT_EQ(verify_smoke_run(signed_run(), "mid", smoke_subject(m), m_trusted), RunSignature::verified);
}

TEST_F(SmokeRun, ANewerRunOfANodesGpuReplacesOnlyItsOwn) {
  const SmokeAttestation unsigned_run = run_on("", 0, "pass");
  std::vector<SmokeAttestation> runs = {unsigned_run};
  record_smoke_run(runs, signed_run("node-b", 0));
  record_smoke_run(runs, signed_run("node-a", 1));
  record_smoke_run(runs, signed_run("node-a", 0));
  SmokeAttestation same_host_other_key = run_on("node-a", 0);
  sign_smoke_run(same_host_other_key, m_other, "mid", m_subject);
  record_smoke_run(runs, same_host_other_key);
  ASSERT_EQ(runs.size(), 5u) << "one per node, key and GPU, and the unsigned run";

  SmokeAttestation newer = run_on("node-a", 0, "fail");
  newer.time = "2026-12-01T00:00:00Z";
  sign_smoke_run(newer, m_key, "mid", m_subject);
  record_smoke_run(runs, newer);
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[0], unsigned_run) << "unsigned runs first, kept";
  int replaced = 0;
  for (const auto& r : runs) {
    if (r == newer)
      ++replaced;
    else
      EXPECT_EQ(r.outcome, "pass") << r.node << " " << r.ordinal;
  }
  EXPECT_EQ(replaced, 1);
  // Signed runs in one order whatever order they came in.
  for (std::size_t i = 2; i < runs.size(); ++i)
    EXPECT_LE(std::tie(runs[i - 1].node, runs[i - 1].key_id, runs[i - 1].ordinal),
              std::tie(runs[i].node, runs[i].key_id, runs[i].ordinal));
}

}  // namespace
}  // namespace orc::cache
