// `orchestrate key ...` and `orchestrate cache ...` as a user sees them:
// stdout (JSON only with --json), stderr and exit codes, in-process.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/cli/cli.hpp"
#include "tests/unit/cache/built_sets.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

namespace fs = std::filesystem;

using Output = testing::CliResult;

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("orc-cache-cli-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
             std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir / "store").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir / "keys").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("ORCHESTRATE_CACHE_DIR");
    ::unsetenv("ORCHESTRATE_KEYS_DIR");
    fs::remove_all(m_dir);
  }

  static Output cli(std::vector<std::string> args) { return testing::run_cli(std::move(args)); }

  // Records one artifact set of `recipe` for tier-new directly in the store.
  cache::IndexEntry add_set(const std::string& recipe, std::int64_t created) {
    auto store = cache::Store::open(m_dir / "store").value();
    cache::Manifest m{.recipe = recipe, .tier = "tier-new", .toolkit = "12.4", .created = "2025-01-01T00:00:00Z"};
    const auto file = store.put_bytes("file of " + recipe + std::to_string(created)).value();
    m.files.push_back({.path = "lib/x.so", .sha256 = file.digest.hex(), .size = file.size, .embedded_sass = {"sm_90"}});
    cache::IndexEntry e{.manifest = store.put_bytes(cache::canonical_json(m)).value().digest,
                        .recipe = recipe,
                        .tier = "tier-new",
                        .toolkit = "12.4",
                        .sass = {"sm_90"},
                        .verified = true,
                        .created = created};
    e.files.push_back({.path = "lib/x.so", .sha256 = file.digest.hex(), .size = file.size});
    EXPECT_TRUE(store.record(e));
    return e;
  }

  // Two sets stored as a build stores them (store_artifact_set, signed with
  // this machine's key, which `key generate` also trusts).
  void build_two() {
    ASSERT_EQ(cli({"key", "generate"}).code, 0);
    const auto key = cache::load_signing_key(m_dir / "keys").value();
    auto store = cache::Store::open(m_dir / "store").value();
    for (const auto& [recipe, created] :
         {std::pair<std::string, std::string>{"vision", "2025-01-01T00:00:01Z"}, {"caffe", "2025-01-01T00:00:02Z"}}) {
      const fs::path file = m_dir / ("lib" + recipe + ".so");
      std::ofstream(file) << "library " << recipe;
      cache::NewArtifactSet set{
          .manifest = {.recipe = recipe, .tier = "tier-new", .toolkit = "12.4", .created = created},
          .sources = {file},
          .key = &key,
          .verified = true};
      set.manifest.files.push_back({.path = "lib/" + file.filename().string(), .embedded_sass = {"sm_90"}});
      ASSERT_TRUE(cache::store_artifact_set(store, std::move(set)));
    }
  }

  fs::path index_file() const { return m_dir / "store" / "index.v1.sqlite"; }

  std::size_t count_blobs() const {
    std::size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(m_dir / "store" / "blobs.v1")) n += e.is_regular_file();
    return n;
  }

  // gc refuses with exit 2, says why and what to run, and deletes nothing.
  void expect_gc_refused(const std::string& why) {
    const std::size_t blobs = count_blobs();
    const auto r = cli({"cache", "gc", "--json"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(r.err.starts_with("orchestrate: error: ")) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("rebuild it from the manifests in the store with 'orchestrate cache verify --rebuild-index'"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(count_blobs(), blobs);
  }

  fs::path m_dir;
};

TEST_F(CacheCli, KeyGenerateExportTrust) {
  auto r = cli({"key", "generate", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto made = nlohmann::json::parse(r.out);
  const std::string id = made["key_id"];
  EXPECT_EQ(id.size(), 16u);
  struct stat st {};
  ASSERT_EQ(::stat(made["private_key"].get<std::string>().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  r = cli({"key", "generate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("orchestrate: error: "), std::string::npos);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;

  r = cli({"key", "export"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("-----BEGIN PUBLIC KEY-----")) << r.out;
  EXPECT_NE(r.err.find(id), std::string::npos);
  const fs::path exported = m_dir / "me.pem";
  std::ofstream(exported) << r.out;

  // Another machine trusts it.
  ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir / "other-keys").c_str(), 1);
  r = cli({"key", "trust", exported.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["trusted"][0]["key_id"], id);
  EXPECT_TRUE(fs::exists(m_dir / "other-keys" / "trusted" / (id + ".pem")));

  std::ofstream(m_dir / "junk.pem") << "not a key";
  r = cli({"key", "trust", (m_dir / "junk.pem").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("junk.pem"), std::string::npos) << r.err;
}

TEST_F(CacheCli, KeyExportWithoutAKeySaysWhatToRun) {
  const auto r = cli({"key", "export", "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("run 'orchestrate key generate'"), std::string::npos) << r.err;
}

TEST_F(CacheCli, LsJsonAndTable) {
  auto r = cli({"cache", "ls", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["sets"].empty());
  const auto a = add_set("vision", 100);
  add_set("caffe", 200);
  r = cli({"cache", "ls", "--json", "--recipe", "vision"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sets"].size(), 1u);
  const auto& set = j["sets"][0];
  EXPECT_EQ(set["manifest"], a.manifest.to_string());
  EXPECT_EQ(set["recipe"], "vision");
  EXPECT_EQ(set["sass"], nlohmann::json({"sm_90"}));
  EXPECT_EQ(set["files"][0]["path"], "lib/x.so");
  EXPECT_TRUE(set["signer"].is_null());
  EXPECT_EQ(set["created"], "1970-01-01T00:01:40Z");
  r = cli({"cache", "ls"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("MANIFEST")) << r.out;
  EXPECT_LT(r.out.find("caffe"), r.out.find("vision"));  // newest first
  EXPECT_NE(r.out.find(a.manifest.hex().substr(0, 16)), std::string::npos);
}

TEST_F(CacheCli, VerifyExitsOneOnCorruptionThenZero) {
  const auto a = add_set("vision", 100);
  add_set("caffe", 200);
  const auto blob = m_dir / "store" / "blobs.v1" / "sha256" / a.files[0].sha256.substr(0, 2) / a.files[0].sha256;
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(blob, std::ios::binary) << "flipped";
  auto r = cli({"cache", "verify", "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["corrupt"].size(), 1u);
  EXPECT_EQ(j["corrupt"][0]["digest"], "sha256:" + a.files[0].sha256);
  EXPECT_EQ(j["corrupt"][0]["dropped"], nlohmann::json({a.manifest.hex()}));
  r = cli({"cache", "verify"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 corrupt, 0 missing"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(cli({"cache", "ls", "--json"}).out)["sets"].size(), 1u);
}

TEST_F(CacheCli, GcKeepsNewestAndReportsJson) {
  add_set("vision", 100);
  const auto newest = add_set("vision", 200);
  auto r = cli({"cache", "gc", "--keep", "1", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["removed_sets"].size(), 1u);
  EXPECT_EQ(j["removed_blobs"], 2);  // its manifest and its file
  const auto left = nlohmann::json::parse(cli({"cache", "ls", "--json"}).out);
  ASSERT_EQ(left["sets"].size(), 1u);
  EXPECT_EQ(left["sets"][0]["manifest"], newest.manifest.to_string());
  r = cli({"cache", "gc", "--keep", "-1"});
  EXPECT_EQ(r.code, 2);
}

TEST_F(CacheCli, GcRefusesAStoreWithoutItsIndexAndARebuildBringsItBack) {
  build_two();
  const std::string before = cli({"cache", "ls", "--json"}).out;
  ASSERT_EQ(nlohmann::json::parse(before)["sets"].size(), 2u);
  ASSERT_EQ(count_blobs(), 6u);  // per set: the library, the manifest, the signature
  fs::remove(index_file());
  expect_gc_refused("index " + index_file().string() + " is missing");
  // No command makes an empty index in its place.
  EXPECT_EQ(cli({"cache", "ls"}).code, 2);
  EXPECT_FALSE(fs::exists(index_file()));

  auto r = cli({"cache", "verify", "--rebuild-index", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rebuilt_index"]["sets"].size(), 2u);
  EXPECT_EQ(j["rebuilt_index"]["verified"], 2);
  EXPECT_TRUE(j["rebuilt_index"]["old_index"].is_null());
  EXPECT_EQ(j["corrupt"].size(), 0u);
  EXPECT_EQ(cli({"cache", "ls", "--json"}).out, before);
  r = cli({"cache", "gc", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["removed_blobs"], 0);
  EXPECT_EQ(count_blobs(), 6u);
}

TEST_F(CacheCli, GcRefusesADamagedOrNewerIndex) {
  build_two();
  cache::testing::set_schema_version(index_file(), "9");
  expect_gc_refused("has schema version 9");
  std::ofstream(index_file(), std::ios::binary | std::ios::trunc) << std::string(8192, '\x5a');
  expect_gc_refused("file is not a database");
  const auto r = cli({"cache", "verify", "--rebuild-index"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 artifact set(s), 2 verified, 0 left out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the index it replaces is kept as " + (m_dir / "store" / "quarantine.v1").string()),
            std::string::npos)
      << r.out;
}

// An index that cannot be read is the store's own state, not an outside
// system failing: exit 2, as docs/cli.md's rule has it.
TEST_F(CacheCli, AnUnreadableIndexIsBadInputNotAnOutsideFailure) {
  build_two();
  fs::remove(index_file());
  fs::create_directory(index_file());
  const auto r = cli({"cache", "ls", "--json"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is not a regular file"), std::string::npos) << r.err;
}

TEST_F(CacheCli, UnusableStoreIsAnOutsideFailure) {
  std::ofstream(m_dir / "file") << "x";
  ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir / "file").c_str(), 1);
  const auto r = cli({"cache", "ls", "--json"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find((m_dir / "file").string()), std::string::npos) << r.err;
}

}  // namespace
}  // namespace orc::cli
