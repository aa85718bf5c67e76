// Smoke outcomes attested in a stored set's signed manifest.
#include "orchestrator/app/smoke/smoke_attest.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <iostream>
#include <thread>
#include <tuple>

#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/cache/smoke_run.hpp"
#include "orchestrator/site/arch_coverage.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

class SmokeAttest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-smoke-attest-" + std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    auto store = cache::Store::open(m_dir / "store");
    ASSERT_TRUE(store) << store.error().message;
    m_store.emplace(std::move(*store));
    auto made = cache::generate_key(m_dir / "keys");
    ASSERT_TRUE(made) << made.error().message;
    auto key = cache::load_signing_key(m_dir / "keys");
    ASSERT_TRUE(key) << key.error().message;
    m_key.emplace(std::move(*key));
    auto trusted = cache::load_trusted_keys(m_dir / "keys");
    ASSERT_TRUE(trusted);
    m_trusted = *trusted;
    // A second node, with a key of its own that this machine also trusts.
    auto other = cache::SigningKey::generate();
    ASSERT_TRUE(other) << other.error().message;
    m_key_b.emplace(std::move(*other));
    m_trusted.emplace(m_key_b->public_key().key_id(), m_key_b->public_key());

    std::ofstream(m_dir / "saxpy", std::ios::binary) << "not really an ELF, but bytes";
    fs::permissions(m_dir / "saxpy", fs::perms(0755));
    cache::NewArtifactSet set;
    set.manifest = cache::Manifest{.recipe = "saxpy",
                                   .framework = "nvcc",
                                   .tier = "tier-new",
                                   .key = "k1",
                                   .source_kind = "path",
                                   .source_revision = "tree:1",
                                   .engine = "host",
                                   .image = "host",
                                   .toolkit = "13.0"};
    set.manifest.files.push_back({.path = "saxpy", .requested_sass = {"sm_90"}, .embedded_sass = {"sm_90"}});
    set.sources = {m_dir / "saxpy"};
    set.key = &*m_key;
    set.verified = true;
    auto entry = cache::store_artifact_set(*m_store, std::move(set));
    ASSERT_TRUE(entry) << entry.error().message;
    m_manifest = entry->manifest;
  }
  void TearDown() override { fs::remove_all(m_dir); }

  struct Gpu {
    std::string name;
    std::string cc;
    bool pass = true;
    int ordinal = 0;
  };

  // What `orchestrate smoke` found on one node's GPUs.
  static smoke::SmokeResult result_on(const std::vector<Gpu>& gpus, const std::string& driver = "580.159.04") {
    smoke::SmokeResult r;
    r.driver_version = driver;
    for (const auto& gpu : gpus) {
      smoke::GpuResult g;
      g.ordinal = gpu.ordinal;
      g.name = gpu.name;
      g.cc = *arch::ComputeCapability::parse(gpu.cc);
      g.load = smoke::LoadObservation{.outcome = gpu.pass ? smoke::LoadOutcome::native : smoke::LoadOutcome::none};
      r.gpus.push_back(g);
    }
    return r;
  }
  static smoke::SmokeResult result(bool pass) {
    return result_on({{.name = "NVIDIA H200", .cc = "9.0", .pass = pass}});
  }

  static recipe::Tier tier(const std::string& name, const std::vector<std::pair<std::string, std::string>>& gpus,
                           const std::string& driver = "") {
    recipe::Tier t{.name = name};
    for (const auto& [gpu, cc] : gpus) t.gpus.push_back({.name = gpu, .cc = *arch::ComputeCapability::parse(cc)});
    if (!driver.empty()) t.driver = *util::Version::parse(driver);
    return t;
  }
  // tier-new of the stored set: an H200; mid: a T4 and an A100.
  static recipe::Tier tier_new() { return tier("tier-new", {{"H200", "9.0"}}); }
  static recipe::Tier mid(const std::string& driver = "") {
    return tier("mid", {{"T4", "7.5"}, {"A100", "8.0"}}, driver);
  }

  // The newest set's manifest, loaded with its signature checked.
  cache::LoadedSet load(const digest::Digest& manifest) {
    auto entry = m_store->index().resolve(digest::DigestPrefix(manifest));
    EXPECT_TRUE(entry) << entry.error().message;
    auto loaded = cache::load_artifact_set(*m_store, *entry, m_trusted);
    EXPECT_TRUE(loaded) << loaded.error().message;
    return std::move(*loaded);
  }

  // `result` attested as run on node-a (m_key) or node-b (m_key_b).
  digest::Digest attest(const digest::Digest& manifest, const smoke::SmokeResult& result, const recipe::Tier& t,
                        const std::string& node) {
    const AttestTarget target = resolve_artifact_set(*m_store, manifest.to_string());
    return attest_artifact_set(*m_store, target, result, t,
                               {.host = node, .key = node == "node-a" ? *m_key : *m_key_b});
  }

  fs::path m_dir;
  std::optional<cache::Store> m_store;
  std::optional<cache::SigningKey> m_key;    // node-a's
  std::optional<cache::SigningKey> m_key_b;  // node-b's
  cache::TrustedKeys m_trusted;
  digest::Digest m_manifest;
};

TEST_F(SmokeAttest, ArgumentsNamingSetsAreDigestPrefixes) {
  EXPECT_TRUE(names_artifact_set("sha256:abcd"));
  EXPECT_TRUE(names_artifact_set("abcd12"));
  EXPECT_FALSE(names_artifact_set("abc")) << "too short to be a prefix";
  EXPECT_FALSE(names_artifact_set("build/saxpy"));
  EXPECT_FALSE(names_artifact_set("sha256:xyz0"));
}

TEST_F(SmokeAttest, APassIsRecordedInANewSignedManifestThatFetchFindsFirst) {
  const AttestTarget target = resolve_artifact_set(*m_store, m_manifest.short_string(8));
  EXPECT_EQ(target.entry.manifest, m_manifest);
  ASSERT_EQ(target.files.size(), 1u);
  EXPECT_TRUE(fs::exists(target.files[0]));

  const digest::Digest attested =
      attest_artifact_set(*m_store, target, result(true), tier_new(), {.host = "node-a", .key = *m_key});
  EXPECT_NE(attested, m_manifest) << "the attestation is part of the manifest, so its digest changes";
  auto newest = m_store->index().newest_verified("saxpy", "tier-new");
  ASSERT_TRUE(newest && *newest);
  EXPECT_EQ((*newest)->manifest, attested);
  EXPECT_EQ((*newest)->files.at(0).sha256, target.entry.files.at(0).sha256) << "the same file blob";
  EXPECT_EQ(target.entry.files.at(0).mode, 0755u);
  EXPECT_EQ((*newest)->files.at(0).mode, 0755u) << "the file's mode, not the blob's";

  auto loaded = cache::load_artifact_set(*m_store, **newest, m_trusted);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->signature.status, cache::VerifyStatus::verified) << loaded->signature.detail;
  ASSERT_EQ(loaded->manifest.smoke.count("tier-new"), 1u);
  const auto& runs = loaded->manifest.smoke.at("tier-new");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].gpu, "NVIDIA H200");
  EXPECT_EQ(runs[0].cc, "9.0");
  EXPECT_EQ(runs[0].driver, "580.159.04");
  EXPECT_EQ(runs[0].outcome, "pass");
  EXPECT_EQ(runs[0].node, "node-a");
  EXPECT_EQ(runs[0].key_id, m_key->public_key().key_id());
  EXPECT_TRUE(runs[0].member);
  EXPECT_EQ(cache::verify_smoke_run(runs[0], "tier-new", cache::smoke_subject(loaded->manifest), m_trusted),
            cache::RunSignature::verified);
  EXPECT_EQ(site::smoke_problem(loaded->manifest, attested, tier_new(), m_trusted), std::nullopt);

  // A second run of the same node on the same GPU replaces the first one's record.
  const AttestTarget again = resolve_artifact_set(*m_store, attested.to_string());
  const digest::Digest failed =
      attest_artifact_set(*m_store, again, result(false), tier_new(), {.host = "node-a", .key = *m_key});
  auto reloaded =
      cache::load_artifact_set(*m_store, *m_store->index().resolve(digest::DigestPrefix(failed)), m_trusted);
  ASSERT_TRUE(reloaded);
  ASSERT_EQ(reloaded->manifest.smoke.at("tier-new").size(), 1u);
  EXPECT_EQ(reloaded->manifest.smoke.at("tier-new")[0].outcome, "fail");
}

// tier mid is a T4 and an A100; a run on an H100 proves nothing about it.
TEST_F(SmokeAttest, ARunOnAGpuOfAnotherCcIsRecordedAsSuchAndNeverCounts) {
  const digest::Digest attested =
      attest(m_manifest, result_on({{.name = "NVIDIA H100", .cc = "9.0"}}), mid(), "node-a");
  const cache::LoadedSet loaded = load(attested);
  const auto& runs = loaded.manifest.smoke.at("mid");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, "pass");
  EXPECT_FALSE(runs[0].member);
  EXPECT_EQ(site::smoke_problem(loaded.manifest, attested, mid(), m_trusted),
            attested.to_string() +
                "'s smoke attestation for tier 'mid' lacks a passing run on CC 7.5 (T4) and 8.0 (A100) "
                "(--require-smoke; not counted: NVIDIA H100 (CC 9.0, driver 580.159.04) on node-a: not a GPU of the "
                "tier); run 'orchestrate smoke mid --artifact " +
                attested.to_string() + "' on a node with those GPUs and push the attested set it stores");
  // Nor does a tier that declares 9.0 take a run its node recorded as not one of its GPUs.
  recipe::Tier widened = mid();
  widened.gpus.push_back({.name = "H100", .cc = *arch::ComputeCapability::parse("9.0")});
  EXPECT_NE(site::smoke_problem(loaded.manifest, attested, widened, m_trusted)
                .value_or("")
                .find("lacks a passing run on CC 7.5 (T4), "
                      "8.0 (A100) and 9.0 (H100)"),
            std::string::npos);
}

// Each node proves its own GPUs; together they cover the tier, and the
// first node's run still verifies after the second re-signed the manifest.
TEST_F(SmokeAttest, TwoNodesRunsAccumulateEachSignedByItsNode) {
  const digest::Digest first = attest(m_manifest, result_on({{.name = "Tesla T4", .cc = "7.5"}}), mid(), "node-a");
  const std::string after_a = site::smoke_problem(load(first).manifest, first, mid(), m_trusted).value_or("");
  EXPECT_NE(after_a.find("lacks a passing run on CC 8.0 (A100) (--require-smoke); run 'orchestrate smoke mid"),
            std::string::npos)
      << after_a;
  EXPECT_NE(after_a.find("on a node with that GPU"), std::string::npos) << after_a;

  const digest::Digest second =
      attest(first, result_on({{.name = "NVIDIA A100-SXM4-80GB", .cc = "8.0"}}), mid(), "node-b");
  const cache::LoadedSet loaded = load(second);
  EXPECT_EQ(loaded.signature.status, cache::VerifyStatus::verified);
  EXPECT_EQ(loaded.signature.key_id, m_key_b->public_key().key_id()) << "node-b stored the set last";
  const auto& runs = loaded.manifest.smoke.at("mid");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].node, "node-a");
  EXPECT_EQ(runs[0].key_id, m_key->public_key().key_id());
  EXPECT_EQ(runs[1].node, "node-b");
  EXPECT_EQ(runs[1].key_id, m_key_b->public_key().key_id());
  const digest::Digest subject = cache::smoke_subject(loaded.manifest);
  for (const auto& run : runs)
    EXPECT_EQ(cache::verify_smoke_run(run, "mid", subject, m_trusted), cache::RunSignature::verified) << run.node;
  EXPECT_EQ(site::smoke_problem(loaded.manifest, second, mid(), m_trusted), std::nullopt);

  // A machine that trusts only node-b has no proof of the T4.
  const cache::TrustedKeys only_b{{m_key_b->public_key().key_id(), m_key_b->public_key()}};
  const std::string untrusted = site::smoke_problem(loaded.manifest, second, mid(), only_b).value_or("");
  EXPECT_NE(untrusted.find("lacks a passing run on CC 7.5 (T4) (--require-smoke; not counted: Tesla T4 (CC 7.5, "
                           "driver 580.159.04) on node-a: signed by key " +
                           m_key->public_key().key_id() + ", which this machine does not trust)"),
            std::string::npos)
      << untrusted;
}

TEST_F(SmokeAttest, ANewerRunOfANodesGpuReplacesOnlyItsOwn) {
  const digest::Digest a = attest(m_manifest,
                                  result_on({{.name = "Tesla T4", .cc = "7.5", .ordinal = 0},
                                             {.name = "NVIDIA A100-SXM4-80GB", .cc = "8.0", .ordinal = 1}}),
                                  mid(), "node-a");
  const digest::Digest b =
      attest(a, result_on({{.name = "NVIDIA A100-SXM4-80GB", .cc = "8.0", .ordinal = 0}}), mid(), "node-b");
  // node-a again, on its GPU 0 only (CUDA_VISIBLE_DEVICES=0): the T4 now fails.
  const digest::Digest again =
      attest(b, result_on({{.name = "Tesla T4", .cc = "7.5", .pass = false, .ordinal = 0}}), mid(), "node-a");
  const cache::LoadedSet loaded = load(again);
  const auto& runs = loaded.manifest.smoke.at("mid");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(std::tie(runs[0].node, runs[0].ordinal, runs[0].outcome),
            std::make_tuple(std::string("node-a"), 0u, std::string("fail")));
  EXPECT_EQ(std::tie(runs[1].node, runs[1].ordinal, runs[1].outcome),
            std::make_tuple(std::string("node-a"), 1u, std::string("pass")));
  EXPECT_EQ(std::tie(runs[2].node, runs[2].ordinal, runs[2].outcome),
            std::make_tuple(std::string("node-b"), 0u, std::string("pass")));
  EXPECT_EQ(load(b).manifest.smoke.at("mid")[0].outcome, "pass") << "the earlier set is left as it was";
  // A failing run on a GPU of the tier refuses the set, though another CC passed.
  const std::string problem = site::smoke_problem(loaded.manifest, again, mid(), m_trusted).value_or("");
  EXPECT_NE(problem.find("'s smoke attestation for tier 'mid' is not a pass on Tesla T4 (CC 7.5, driver 580.159.04) "
                         "on node-a: fail and lacks a passing run on CC 7.5 (T4) (--require-smoke); run"),
            std::string::npos)
      << problem;
}

TEST_F(SmokeAttest, ARunOnADriverBelowTheTiersDoesNotCount) {
  const digest::Digest attested = attest(
      m_manifest,
      result_on({{.name = "Tesla T4", .cc = "7.5"}, {.name = "NVIDIA A100-SXM4-80GB", .cc = "8.0", .ordinal = 1}},
                "535.104.05"),
      mid(), "node-a");
  const cache::LoadedSet loaded = load(attested);
  EXPECT_EQ(site::smoke_problem(loaded.manifest, attested, mid(), m_trusted), std::nullopt) << "no driver declared";
  EXPECT_EQ(site::smoke_problem(loaded.manifest, attested, mid("535.104.05"), m_trusted), std::nullopt)
      << "at the tier's driver";
  const std::string problem = site::smoke_problem(loaded.manifest, attested, mid("550.54"), m_trusted).value_or("");
  EXPECT_NE(problem.find("lacks a passing run on CC 7.5 (T4) and 8.0 (A100) (--require-smoke; not counted: Tesla T4 "
                         "(CC 7.5, driver 535.104.05) on node-a: below the tier's driver 550.54; NVIDIA "
                         "A100-SXM4-80GB (CC 8.0, driver 535.104.05) on node-a: below the tier's driver 550.54)"),
            std::string::npos)
      << problem;
}

// node-b, storing the set after node-a, turns node-a's failed run into a
// pass: the manifest's signature (node-b's) verifies, the run's does not.
TEST_F(SmokeAttest, ARunRecordAlteredAfterItsNodeSignedItIsRefused) {
  const digest::Digest a = attest(m_manifest,
                                  result_on({{.name = "Tesla T4", .cc = "7.5", .pass = false},
                                             {.name = "NVIDIA A100-SXM4-80GB", .cc = "8.0", .ordinal = 1}}),
                                  mid(), "node-a");
  cache::LoadedSet loaded = load(a);
  ASSERT_EQ(loaded.manifest.smoke.at("mid").size(), 2u);
  cache::NewArtifactSet forged;
  forged.manifest = loaded.manifest;
  forged.manifest.smoke.at("mid")[0].outcome = "pass";
  const auto entry = m_store->index().resolve(digest::DigestPrefix(a));
  ASSERT_TRUE(entry);
  for (const auto& f : loaded.manifest.files) forged.sources.push_back(m_store->blob_path(f.sha256));
  forged.key = &*m_key_b;
  forged.verified = true;
  auto stored = cache::store_artifact_set(*m_store, std::move(forged));
  ASSERT_TRUE(stored) << stored.error().message;
  const cache::LoadedSet reloaded = load(stored->manifest);
  EXPECT_EQ(reloaded.signature.status, cache::VerifyStatus::verified) << "node-b signed the manifest";
  EXPECT_EQ(site::smoke_problem(reloaded.manifest, stored->manifest, mid(), m_trusted),
            stored->manifest.to_string() +
                "'s smoke attestation for tier 'mid' holds a run that is not what its node signed: Tesla T4 (CC 7.5, "
                "driver 580.159.04) on node-a (key " +
                m_key->public_key().key_id() + ") (--require-smoke): the record was altered after that node signed it");
}

TEST_F(SmokeAttest, AttestingASetNeedsTheTiersDefinition) {
  try {
    run_smoke({.fatbin = m_dir / "saxpy", .artifact_sets = {m_manifest.to_string()}}, std::cerr);
    FAIL() << "attested a set without the tier it is attested for";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.code(), util::ExitCode::bad_input) << f.what();
    EXPECT_NE(std::string(f.what()).find("needs its TIER"), std::string::npos) << f.what();
  }
}

TEST_F(SmokeAttest, AnUnknownDigestIsBadInput) {
  try {
    resolve_artifact_set(*m_store, "sha256:ffffffff");
    FAIL() << "resolved a digest nobody stored";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.code(), util::ExitCode::bad_input) << f.what();
  }
}

// The user's --artifact is parsed once, where it enters: a whole digest that
// is not one is exit 2 with Digest::parse's words and the option named.
TEST_F(SmokeAttest, AMalformedArtifactDigestIsBadInputSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"sha512:" + std::string(64, 'f'),
       "--artifact: digest 'sha512:" + std::string(64, 'f') + "' uses algorithm 'sha512'; only sha256 is supported"},
      {"sha256:" + std::string(65, 'f'),
       "--artifact: digest 'sha256:" + std::string(65, 'f') + "' has 65 hex digits; sha256 needs 64"},
  };
  for (const auto& [argument, message] : cases) {
    try {
      resolve_artifact_set(*m_store, argument);
      ADD_FAILURE() << "took " << argument;
    } catch (const util::Failure& f) {
      EXPECT_EQ(f.code(), util::ExitCode::bad_input) << f.what();
      EXPECT_NE(std::string(f.what()).find(message), std::string::npos) << f.what();
    }
  }
}

// An attested set replaces the set it attests: when that was current, push
// and fetch --tier hand out the attested one from then on; a set that was
// not current stays not current.
TEST_F(SmokeAttest, AttestingTheCurrentSetMakesTheAttestedSetCurrent) {
  ASSERT_TRUE(cache::write_current(*m_store, "saxpy", "tier-new", m_manifest));
  const digest::Digest attested = attest(m_manifest, result(true), tier_new(), "node-a");
  auto current = cache::current_set(*m_store, "saxpy", "tier-new");
  ASSERT_TRUE(current) << current.error().message;
  ASSERT_TRUE(current->entry);
  EXPECT_TRUE(current->recorded);
  EXPECT_EQ(current->entry->manifest, attested);
  EXPECT_FALSE(current->newer);

  // The first set promoted back: attesting the newer, not-current set
  // leaves the record where promote put it.
  ASSERT_TRUE(cache::write_current(*m_store, "saxpy", "tier-new", m_manifest));
  const digest::Digest again = attest(attested, result(true), tier_new(), "node-b");
  auto after = cache::read_current(*m_store, "saxpy", "tier-new");
  ASSERT_TRUE(after && *after);
  EXPECT_EQ(**after, m_manifest);
  EXPECT_NE(again, m_manifest);
}

// `smoke TIER --recipe R` loads R's current set for the tier: the recorded
// one, said with a newer set by time that is not current; an unknown
// recipe and a recipe with no set are bad input naming what to do. The
// driver here is one no machine has, so nothing is loaded or attested.
TEST_F(SmokeAttest, ARecipeNamesItsCurrentSetForTheTier) {
  std::ofstream(m_dir / "orchestrate.yaml") << "tiers:\n  tier-new: {gpus: [H200]}\n"
                                               "recipes:\n  - name: saxpy\n    framework: nvcc\n"
                                               "    source: {path: .}\n    tiers: [tier-new]\n    build: [make]\n"
                                               "    artifacts: [saxpy]\n  - name: other\n    framework: nvcc\n"
                                               "    source: {path: .}\n    tiers: [tier-new]\n    build: [make]\n"
                                               "    artifacts: [x]\n";
  const SmokeRequest request{.tier = "tier-new",
                             .config = m_dir / "orchestrate.yaml",
                             .recipes = {"saxpy"},
                             .store_root = m_dir / "store",
                             .driver_library = "libcuda-absent-here.so.1"};
  ASSERT_TRUE(cache::write_current(*m_store, "saxpy", "tier-new", m_manifest));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // sets are dated in whole seconds
  const digest::Digest newer = attest(m_manifest, result(true), tier_new(), "node-a");
  // The attested set became current; promote the first one back, so the
  // attested one is newer by time and not current.
  ASSERT_TRUE(cache::write_current(*m_store, "saxpy", "tier-new", m_manifest));
  const SmokeOutput out = run_smoke(request, std::cerr);
  ASSERT_TRUE(out.result.driver_error) << "no driver of that name exists";
  ASSERT_EQ(out.current_sets.size(), 1u);
  EXPECT_EQ(out.current_sets[0].set, m_manifest);
  EXPECT_TRUE(out.current_sets[0].recorded);
  ASSERT_TRUE(out.current_sets[0].newer);
  EXPECT_EQ(*out.current_sets[0].newer, newer);
  EXPECT_NE(describe_current(out.current_sets[0], "tier-new")
                .find("'orchestrate promote saxpy --tier tier-new --digest " + newer.to_string() + "' makes it so"),
            std::string::npos);

  for (const auto& [recipe, says] : std::vector<std::pair<std::string, std::string>>{
           {"saxpi", "unknown recipe 'saxpi'"}, {"other", "no verified artifact set of other for tier tier-new in "}}) {
    SmokeRequest bad = request;
    bad.recipes = {recipe};
    try {
      (void)run_smoke(bad, std::cerr);
      ADD_FAILURE() << recipe << " was smoked";
    } catch (const util::Failure& f) {
      EXPECT_EQ(f.code(), util::ExitCode::bad_input) << f.what();
      const std::string all = f.what() + (f.diagnostics().empty() ? std::string() : f.diagnostics()[0].render());
      EXPECT_NE(all.find(says), std::string::npos) << all;
    }
  }
}

}  // namespace
}  // namespace orc::app
