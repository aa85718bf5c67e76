// push, pull and fetch between two local stores ("two machines": two
// ORCHESTRATE_CACHE_DIRs) through Debian's real docker-registry, started here
// (scripts/start-registry.sh) and stopped by PID. Artifacts are real
// nvcc-built fatbins, inspected and stored signed by bench_fetch_seed; the
// orchestrate binary runs as a child process, as a user would run it. Every
// fault ends with the fetching store intact: `cache verify` clean, no index
// row for what was refused, nothing half-written in tmp/.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fcntl.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "orchestrator/app/transfer/transfer.hpp"
#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/cache/smoke_run.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"
#include "tests/integration/fault_proxy.hpp"
#include "tests/integration/process.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;
using integration::ProcessResult;
using integration::run_process;
using integration::TempDir;
using nlohmann::json;

const std::string k_nvcc = integration::env_or("NVCC", "/usr/local/cuda/bin/nvcc");

std::string script(const char* name) { return std::string(ORC_SOURCE_DIR) + "/scripts/" + name; }

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string out(size, '\0');
  for (std::size_t i = 0; i + 8 <= size; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(out.data() + i, &v, 8);
  }
  return out;
}

class Registry {
 public:
  Registry(const fs::path& dir, std::string user = {}) : m_dir(dir) {
    std::vector<std::string> argv = {script("start-registry.sh"), dir.string(), "--access-log"};
    if (!user.empty()) argv.insert(argv.end(), {"--user", user});
    const auto started = run_process(argv);
    if (started.exit_code != 0) {
      m_error = "start-registry.sh: " + started.output;
      return;
    }
    m_port = std::stoi(read(dir / "port"));
  }
  ~Registry() { stop(); }
  void stop() {
    if (m_port) run_process({script("stop-registry.sh"), m_dir.string()});
  }
  const std::string& error() const { return m_error; }
  int port() const { return m_port; }
  std::string url(std::string_view credentials = {}) const {
    return "http://" + std::string(credentials) + (credentials.empty() ? "" : "@") +
           "127.0.0.1:" + std::to_string(m_port) + "/team/artifacts";
  }
  fs::path blob_data(const digest::Digest& digest) const {
    const std::string hex = digest.hex();
    return m_dir / "data/docker/registry/v2/blobs/sha256" / hex.substr(0, 2) / hex / "data";
  }
  // A digest as the JSON of a command printed it.
  fs::path blob_data(std::string_view text) const { return blob_data(digest::Digest::parse(text).value()); }
  // GETs of one blob that the registry answered with bytes (200 or 206).
  int blob_gets(const digest::Digest& digest) const {
    const std::string log = read(m_dir / "registry.log");
    const std::string needle = "\"GET /v2/team/artifacts/blobs/" + digest.to_string() + " ";
    int count = 0;
    for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
      const auto status = log.substr(log.find("\" ", at + 1) + 2, 3);
      if (status == "200" || status == "206") ++count;
    }
    return count;
  }

 private:
  fs::path m_dir;
  int m_port = 0;
  std::string m_error;
};

// One machine: a store, a keys dir, and the remote it talks to.
struct Machine {
  fs::path store;
  fs::path keys;
  std::string remote;
  fs::path config;

  std::vector<std::string> argv(std::vector<std::string> args) const {
    std::vector<std::string> out = {"env", "ORCHESTRATE_CACHE_DIR=" + store.string(),
                                    "ORCHESTRATE_KEYS_DIR=" + keys.string(), "ORCHESTRATE_REMOTE=" + remote};
    // No configuration: a consuming node (and no orchestrate.yaml where the tests run).
    if (!config.empty()) out.push_back("ORCHESTRATE_CONFIG=" + config.string());
    out.push_back(ORC_BINARY);
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  ProcessResult run(std::vector<std::string> args) const { return run_process(argv(std::move(args))); }
  // stdout alone (the JSON), stderr into `err`.
  ProcessResult run_split(std::vector<std::string> args, std::string& err) const {
    const fs::path err_file = store.parent_path() / ("stderr-" + store.filename().string() + ".txt");
    // sh -c SCRIPT $0 ARGS...: $0 names the file stderr goes to.
    std::vector<std::string> sh = {"sh", "-c", "exec \"$@\" 2>\"$0\"", err_file.string()};
    const auto full = argv(std::move(args));
    sh.insert(sh.end(), full.begin(), full.end());
    auto result = run_process(sh);
    err = read(err_file);
    return result;
  }
  // `push --json`'s stdout.
  json push(const std::string& recipe) const {
    std::string err;
    const auto pushed = run_split({"push", recipe, "--json"}, err);
    EXPECT_EQ(pushed.exit_code, 0) << pushed.output << err;
    return json::parse(pushed.output, nullptr, false);
  }
  json sets() const {
    const auto listed =
        run_process({"env", "ORCHESTRATE_CACHE_DIR=" + store.string(), ORC_BINARY, "cache", "ls", "--json"});
    return json::parse(listed.output, nullptr, false)["sets"];
  }
};

// What every fault must leave: blobs that match their names, rows whose
// blobs are all there, and no temporary a reader could mistake for a blob.
void expect_store_intact(const Machine& m) {
  const auto verified = m.run({"cache", "verify", "--json"});
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(m.store / "tmp", ec)) {
    const std::string name = entry.path().filename().string();
    // A resumable download, or a temporary of a killed process that gc
    // removes (a file or tree of temp_name, an unpack tree naming its pid).
    EXPECT_TRUE(name.ends_with(".partial") || name.ends_with(".tmp") || name.find(".unpack-") != std::string::npos)
        << "left in tmp/: " << name;
  }
}

bool has_set(const Machine& m, std::string_view recipe) {
  for (const auto& s : m.sets())
    if (s["recipe"] == recipe) return true;
  return false;
}

class FetchSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_dir = new TempDir("orc-fetch-it");
    s_registry = new Registry(s_dir->path() / "registry");
    const fs::path root = s_dir->path();
    write(root / "orchestrate.yaml", R"(tiers:
  tier-new:
    gpus: ["H100", "B200"]
    ptx: highest
  tier-strict:
    gpus: ["H100", "B200"]
    ptx: none
recipes:
  - name: saxpy
    framework: nvcc
    source: {path: .}
    tiers: [tier-new, tier-strict]
trusted_keys: [keys-a/signing.pub.pem]
)");
    s_a = {root / "store-a", root / "keys-a", s_registry->url(), root / "orchestrate.yaml"};
    s_b = {root / "store-b", root / "keys-b", s_registry->url(), root / "orchestrate.yaml"};
    run_process(s_a.argv({"key", "generate"}));
    // A third key nobody trusts, for the wrong-signature case.
    Machine c = s_a;
    c.keys = root / "keys-c";
    run_process(c.argv({"key", "generate"}));
    // Kernels for the tier: sm_90 + sm_100 SASS with compute_100 PTX; and
    // sm_90 SASS + compute_90 PTX, which B200 runs only by JIT.
    write(root / "k.cu",
          "__global__ void saxpy(float a, float* x, float* y) { y[threadIdx.x] += a * x[threadIdx.x]; }\n");
    fs::create_directories(root / "bin");
    fs::create_directories(root / "bin-jit");
    s_nvcc = run_process({k_nvcc, "-fatbin", "-gencode", "arch=compute_90,code=sm_90", "-gencode",
                          "arch=compute_100,code=[sm_100,compute_100]", "-o", (root / "bin/saxpy.fatbin").string(),
                          (root / "k.cu").string()});
    if (s_nvcc.exit_code == 0)
      s_nvcc = run_process({k_nvcc, "-fatbin", "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o",
                            (root / "bin-jit/saxpy.fatbin").string(), (root / "k.cu").string()});
  }
  static void TearDownTestSuite() {
    delete s_registry;
    delete s_dir;
  }
  void SetUp() override {
    if (!s_registry->error().empty()) GTEST_SKIP() << s_registry->error();
    if (s_nvcc.exit_code != 0) GTEST_SKIP() << "nvcc (" << k_nvcc << ") failed: " << s_nvcc.output;
  }

  static fs::path root() { return s_dir->path(); }
  // Stores FILES as RECIPE for TIER in store A, signed with `keys` ("-": unsigned).
  static std::string seed(const std::string& recipe, const std::string& tier, std::vector<fs::path> files,
                          const std::string& keys = "keys-a", const std::string& built_for = {}) {
    std::vector<std::string> argv = {ORC_SEED};
    if (!built_for.empty()) argv.push_back("--built-for=" + built_for);
    for (const std::string& a :
         {s_a.store.string(), keys == "-" ? std::string("-") : (root() / keys).string(), recipe, tier})
      argv.push_back(a);
    for (const auto& f : files) argv.push_back(f.string());
    const auto seeded = run_process(argv);
    EXPECT_EQ(seeded.exit_code, 0) << seeded.output;
    return seeded.output.substr(0, 64);
  }
  static fs::path data_file(const std::string& name, std::size_t size, unsigned seed_value) {
    const fs::path p = root() / "data" / name / "data.bin";
    write(p, random_bytes(size, seed_value));
    return p;
  }

  static inline TempDir* s_dir = nullptr;
  static inline Registry* s_registry = nullptr;
  static inline ProcessResult s_nvcc;
  static inline Machine s_a, s_b;
};

TEST_F(FetchSuite, SecondMachineFetchesByTierAndDigestTheSameBytes) {
  const fs::path data = data_file("saxpy", 3 << 20, 1);
  fs::permissions(data, fs::perms::owner_exec, fs::perm_options::add);  // modes travel in the layer
  const std::string hex = seed("saxpy", "tier-new", {root() / "bin/saxpy.fatbin", data});
  const auto pushed = s_a.run({"push", "saxpy", "--tier", "tier-new"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
  EXPECT_NE(pushed.output.find("as " + s_registry->url() + ":saxpy--tier-new--" + hex.substr(0, 16)), std::string::npos)
      << pushed.output;
  // A second push sends no blob again (HEAD first).
  const json again = s_a.push("saxpy");
  EXPECT_EQ(again["pushed"][0]["uploaded"], 0) << again;

  std::string err;
  const fs::path out = root() / "out-tier";
  const auto by_tier = s_b.run_split({"fetch", "saxpy", "--tier", "tier-new", "-o", out.string(), "--json"}, err);
  ASSERT_EQ(by_tier.exit_code, 0) << by_tier.output << err;
  const json result = json::parse(by_tier.output);
  EXPECT_EQ(result["recipe"], "saxpy");
  EXPECT_EQ(result["tier"], "tier-new");
  EXPECT_EQ(result["digest"], "sha256:" + hex);
  EXPECT_EQ(result["from"], s_registry->url());
  EXPECT_EQ(result["verified"], (json{{"digest", true}, {"signature", true}, {"archs", true}}));
  ASSERT_EQ(result["files"].size(), 2u);
  EXPECT_EQ(result["files"][1]["path"], "saxpy.fatbin");
  EXPECT_EQ(result["files"][1]["sass"], (json{"sm_90", "sm_100"}));
  EXPECT_EQ(result["files"][1]["ptx"], (json{"compute_100"}));
  EXPECT_EQ(read(out / "data.bin"), read(data));
  EXPECT_EQ(read(out / "saxpy.fatbin"), read(root() / "bin/saxpy.fatbin"));
  const auto exec = [](const fs::path& p) {
    return (fs::status(p).permissions() & fs::perms::owner_exec) != fs::perms::none;
  };
  EXPECT_TRUE(exec(out / "data.bin"));
  EXPECT_EQ(exec(out / "saxpy.fatbin"), exec(root() / "bin/saxpy.fatbin"));

  // By digest prefix, now a local hit.
  const fs::path out2 = root() / "out-digest";
  const auto by_digest = s_b.run_split({"fetch", "saxpy", "--tier", "tier-new", "--digest",
                                        "sha256:" + hex.substr(0, 12), "-o", out2.string(), "--json"},
                                       err);
  ASSERT_EQ(by_digest.exit_code, 0) << by_digest.output << err;
  EXPECT_EQ(json::parse(by_digest.output)["from"], "store");
  EXPECT_EQ(read(out2 / "data.bin"), read(data));
  EXPECT_TRUE(exec(out2 / "data.bin"));

  // By full digest from a third, empty store: straight from the remote.
  Machine c = s_b;
  c.store = root() / "store-c";
  const fs::path out3 = root() / "out-digest-remote";
  const auto remote_digest = c.run({"fetch", "saxpy", "--tier", "tier-new", "--digest", hex, "-o", out3.string()});
  ASSERT_EQ(remote_digest.exit_code, 0) << remote_digest.output;
  EXPECT_NE(remote_digest.output.find("verified: digest yes, signature yes"), std::string::npos)
      << remote_digest.output;
  EXPECT_EQ(read(out3 / "saxpy.fatbin"), read(root() / "bin/saxpy.fatbin"));
  const auto pulled = c.run({"pull", "saxpy", "--tier", "tier-new"});
  EXPECT_EQ(pulled.exit_code, 0) << pulled.output;
  EXPECT_NE(pulled.output.find("already stored"), std::string::npos) << pulled.output;

  // A pulled set keeps no copy of its layer; pushed on from store B to
  // another repository, it is packed again from its blobs with the modes
  // the index kept, into the very layer A pushed.
  Machine relay = s_b;
  relay.remote = s_registry->url() + "-relay";
  const json relayed = relay.push("saxpy");
  ASSERT_EQ(relayed["pushed"].size(), 1u) << relayed;
  const auto layer_of = [&](const std::string& artifact) {
    return registry::parse_manifest(read(s_registry->blob_data(artifact))).value().layers.at(0).digest;
  };
  EXPECT_EQ(layer_of(relayed["pushed"][0]["artifact"]), layer_of(again["pushed"][0]["artifact"]));

  // An unknown tier is bad input, with a suggestion.
  const auto unknown = s_b.run({"fetch", "saxpy", "--tier", "tier-nwe"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("did you mean 'tier-new'?"), std::string::npos) << unknown.output;
  expect_store_intact(s_b);
}

// Issue 29: the moving tag follows the current set, not the newest by time.
// Set A, then B (newer): with nothing recorded the newest stands in and
// push puts the tag on B; `promote --digest A` makes A current here
// and moves the tag back to A though B is newer; an empty store's fetch
// --tier then gets A, and a plain push keeps the tag on A, noting B.
TEST_F(FetchSuite, PromoteMakesAnOlderSetCurrentHereAndOnTheRemote) {
  const std::string a = seed("promoted", "tier-new", {root() / "bin/saxpy.fatbin", data_file("promoted-a", 4096, 7)});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // sets are dated in whole seconds
  const std::string b = seed("promoted", "tier-new", {root() / "bin/saxpy.fatbin", data_file("promoted-b", 4096, 8)});
  ASSERT_NE(a, b);
  const json first = s_a.push("promoted");
  ASSERT_EQ(first["pushed"].size(), 1u) << first;
  EXPECT_EQ(first["pushed"][0]["manifest"], "sha256:" + b);
  EXPECT_EQ(first["pushed"][0]["latest"], true);

  std::string err;
  const auto promoted =
      s_a.run_split({"promote", "promoted", "--tier", "tier-new", "--digest", a.substr(0, 12), "--json"}, err);
  ASSERT_EQ(promoted.exit_code, 0) << promoted.output << err;
  const json p = json::parse(promoted.output);
  EXPECT_EQ(p["digest"], "sha256:" + a);
  EXPECT_EQ(p["previous"], "sha256:" + b) << "the newest stood in before";
  EXPECT_EQ(p["tag"], "promoted--tier-new");
  EXPECT_EQ(p["tag_previous"], "sha256:" + b) << "the tag moved back from the newer set";

  Machine fresh = s_b;
  fresh.store = root() / "store-promote";
  const auto fetched = fresh.run_split(
      {"fetch", "promoted", "--tier", "tier-new", "-o", (root() / "out-promoted").string(), "--json"}, err);
  ASSERT_EQ(fetched.exit_code, 0) << fetched.output << err;
  EXPECT_EQ(json::parse(fetched.output)["digest"], "sha256:" + a);

  // Without --digest, push sends the current set and says the newer one.
  const auto plain = s_a.run({"push", "promoted", "--tier", "tier-new"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("sha256:" + a.substr(0, 16)), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("the current set"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("a newer set by time, sha256:" + b.substr(0, 16) + ", is not current"), std::string::npos)
      << plain.output;
  EXPECT_NE(plain.output.find("'orchestrate promote promoted --tier tier-new --digest " + b.substr(0, 16) + "'"),
            std::string::npos)
      << plain.output;
  // fetch --tier from the local store hands out the current set too, and
  // warns of the newer one.
  const auto local = s_a.run_split(
      {"fetch", "promoted", "--tier", "tier-new", "-o", (root() / "out-promoted-local").string(), "--json"}, err);
  ASSERT_EQ(local.exit_code, 0) << local.output << err;
  const json l = json::parse(local.output);
  EXPECT_EQ(l["digest"], "sha256:" + a);
  EXPECT_EQ(l["from"], "store");
  EXPECT_NE(err.find("a newer set by time, sha256:" + b + ", is not the current set of promoted for tier-new"),
            std::string::npos)
      << err;
  EXPECT_NE(l.dump().find("a newer set by time"), std::string::npos) << "the warning travels in the JSON too: " << l;
  // A set of another tier, or one the store does not hold, is bad input.
  const auto other = s_a.run({"promote", "promoted", "--tier", "tier-old", "--digest", a.substr(0, 12)});
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("is a set of promoted for tier-new, not of promoted for tier-old"), std::string::npos)
      << other.output;
  const auto missing = s_a.run({"promote", "promoted", "--tier", "tier-new", "--digest", std::string(12, '0')});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("'orchestrate pull promoted --tier tier-new --digest"), std::string::npos)
      << missing.output;
}

// Issue 29, point 2: a consuming node fetches with the remote, recipe and
// tier alone. With no configuration anywhere, the set is judged against the
// GPUs its signed manifest records for the tier, with the keys dir's trusted
// keys; a set that records none is refused with what to give instead, and a
// configuration named but missing is still an error.
TEST_F(FetchSuite, ANodeWithoutTheConfigurationFetchesByRemoteRecipeAndTier) {
  seed("consumed", "tier-new", {root() / "bin/saxpy.fatbin"}, "keys-a", "highest:H100=9.0,B200=10.0");
  ASSERT_EQ(s_a.push("consumed")["pushed"].size(), 1u);
  seed("old-set", "tier-new", {root() / "bin/saxpy.fatbin"});
  ASSERT_EQ(s_a.push("old-set")["pushed"].size(), 1u);

  Machine bare{.store = root() / "store-bare", .keys = root() / "keys-bare", .remote = s_a.remote, .config = {}};
  const auto trusted = bare.run({"key", "trust", (root() / "keys-a/signing.pub.pem").string()});
  ASSERT_EQ(trusted.exit_code, 0) << trusted.output;
  std::string err;
  const auto fetched =
      bare.run_split({"fetch", "consumed", "--tier", "tier-new", "-o", (root() / "out-bare").string(), "--json"}, err);
  ASSERT_EQ(fetched.exit_code, 0) << fetched.output << err;
  const json j = json::parse(fetched.output);
  EXPECT_EQ(j["tier_from"], "manifest");
  EXPECT_EQ(j["verified"]["archs"], true);
  EXPECT_EQ(j["verified"]["signature"], true);
  EXPECT_TRUE(fs::exists(root() / "out-bare/saxpy.fatbin"));
  const auto text = bare.run({"fetch", "consumed", "--tier", "tier-new", "-o", (root() / "out-bare-2").string()});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("archs yes (against the GPUs its signed manifest records for tier-new: no configuration "
                             "here)"),
            std::string::npos)
      << text.output;

  const auto old = bare.run({"fetch", "old-set", "--tier", "tier-new", "-o", (root() / "out-old").string()});
  EXPECT_EQ(old.exit_code, 1) << old.output;
  EXPECT_NE(old.output.find("does not record the tier's GPUs"), std::string::npos) << old.output;
  EXPECT_NE(old.output.find("give the site's orchestrate.yaml with -f or ORCHESTRATE_CONFIG"), std::string::npos)
      << old.output;
  EXPECT_FALSE(fs::exists(root() / "out-old"));

  Machine named = bare;
  named.config = root() / "no-such.yaml";
  const auto missing = named.run({"fetch", "consumed", "--tier", "tier-new", "-o", (root() / "out-named").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no-such.yaml"), std::string::npos) << missing.output;
}

// Issue 11: the store keeps each file once and no pack; push packs the
// layer from the file blobs. What it pushes is what the signed manifest
// names: the config blob is the manifest the signature signs, and the layer
// holds exactly its files, byte for byte; pushing again sends nothing new.
TEST_F(FetchSuite, ThePushedLayerHoldsTheFilesTheSignedManifestNames) {
  const fs::path data = data_file("once", 2 << 20, 5);
  const std::string hex = seed("once", "tier-new", {root() / "bin/saxpy.fatbin", data});
  std::string manifest_bytes, signature_text;
  {
    cache::Store store = cache::Store::open(s_a.store).value();
    const cache::IndexEntry row = store.index().resolve(digest::DigestPrefix::parse(hex).value()).value();
    EXPECT_FALSE(row.pack) << "a pack was stored beside the files";
    manifest_bytes = store.read_blob(hex).value();
    signature_text = store.read_blob(row.signature.value()).value();
  }
  const json pushed = s_a.push("once");
  ASSERT_EQ(pushed["pushed"].size(), 1u) << pushed;
  const auto artifact =
      registry::parse_manifest(read(s_registry->blob_data(pushed["pushed"][0]["artifact"].get<std::string>()))).value();
  EXPECT_EQ(artifact.config.digest.to_string(), "sha256:" + hex);
  const std::string config = read(s_registry->blob_data(artifact.config.digest));
  EXPECT_EQ(config, manifest_bytes);
  const cache::TrustedKeys trusted{{cache::load_public_key(s_a.keys)->key_id(), *cache::load_public_key(s_a.keys)}};
  EXPECT_EQ(cache::verify_manifest(config, signature_text, trusted).status, cache::VerifyStatus::verified);

  ASSERT_EQ(artifact.layers.size(), 1u);
  const fs::path out = root() / "once-layer";
  const auto files =
      cache::unpack(s_registry->blob_data(artifact.layers[0].digest), out, {.sync = false, .hash = true});
  ASSERT_TRUE(files) << files.error().message;
  const auto manifest = cache::parse_manifest(config).value();
  ASSERT_EQ(files->size(), manifest.files.size());
  for (const auto& f : manifest.files) {
    const auto it = std::ranges::find(*files, f.path, &cache::UnpackedFile::name);
    ASSERT_NE(it, files->end()) << f.path;
    EXPECT_EQ(it->sha256, f.sha256) << f.path;
    EXPECT_EQ(it->size, f.size) << f.path;
  }
  EXPECT_EQ(read(out / "data.bin"), read(data));

  // The index remembers what the files packed to, so pushing the set again
  // where the registry holds that layer packs nothing: it does not even read
  // the files (here one is moved away meanwhile) and uploads nothing.
  fs::path blob;
  {
    cache::Store store = cache::Store::open(s_a.store).value();
    const cache::IndexEntry row = store.index().resolve(digest::DigestPrefix::parse(hex).value()).value();
    const auto remembered = store.index().packed_layer(cache::pack_key(row)).value();
    ASSERT_TRUE(remembered);
    EXPECT_EQ(remembered->digest, artifact.layers[0].digest);
    EXPECT_EQ(remembered->size, artifact.layers[0].size);
    blob = store.blob_path(manifest.files.front().sha256);
  }
  fs::rename(blob, root() / "moved-away");
  const json again = s_a.push("once");
  fs::rename(root() / "moved-away", blob);
  EXPECT_EQ(again["pushed"][0]["uploaded"], 0) << again;
  EXPECT_EQ(again["pushed"][0]["artifact"], pushed["pushed"][0]["artifact"]);
}

// Issue 11: -o naming a symlink was refused only at the end, by the rename
// onto it, and as "an outside system failed" (exit 3). It is bad input,
// said before anything is read, and the link and its target stay as they were.
TEST_F(FetchSuite, AnOutputThatIsASymlinkIsRefusedAsBadInput) {
  seed("linked", "tier-new", {root() / "bin/saxpy.fatbin"});
  const fs::path target = root() / "link-target";
  const fs::path link = root() / "out-link";
  fs::create_directory(target);
  fs::create_directory_symlink(target, link);
  const auto refused = s_a.run({"fetch", "linked", "--tier", "tier-new", "-o", link.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("orchestrate: error: " + link.string() + " is a symlink; "), std::string::npos)
      << refused.output;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_empty(target));
  const auto fetched = s_a.run({"fetch", "linked", "--tier", "tier-new", "-o", target.string()});
  EXPECT_EQ(fetched.exit_code, 0) << fetched.output;
  EXPECT_EQ(read(target / "saxpy.fatbin"), read(root() / "bin/saxpy.fatbin"));
  expect_store_intact(s_a);
}

TEST_F(FetchSuite, ArchCoverageFollowsTheTiersPtxPolicy) {
  // sm_90 + compute_90 PTX: B200 runs it by JIT, which tier-new allows and
  // tier-strict (ptx: none) does not.
  seed("jit", "tier-new", {root() / "bin-jit/saxpy.fatbin"});
  seed("jit", "tier-strict", {root() / "bin-jit/saxpy.fatbin"});
  ASSERT_EQ(s_a.run({"push", "jit"}).exit_code, 0);
  const auto allowed = s_b.run({"fetch", "jit", "--tier", "tier-new", "-o", (root() / "jit-new").string()});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_NE(allowed.output.find("B200 (10.0) runs by JIT from compute_90"), std::string::npos) << allowed.output;
  const auto refused = s_b.run({"fetch", "jit", "--tier", "tier-strict", "-o", (root() / "jit-strict").string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("no kernel image for B200 (10.0)"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(root() / "jit-strict"));
  expect_store_intact(s_b);
}

TEST_F(FetchSuite, BasicAuth) {
  Registry secured(root() / "registry-auth", "ci:s3cret-pw");
  ASSERT_EQ(secured.error(), "");
  Machine a = s_a, b = s_b;
  a.remote = secured.url("ci:s3cret-pw");
  b.remote = secured.url("ci:s3cret-pw");
  b.store = root() / "store-auth";
  seed("authed", "tier-new", {root() / "bin/saxpy.fatbin"});
  const auto pushed = a.run({"push", "authed", "--tier", "tier-new"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
  EXPECT_EQ(pushed.output.find("s3cret-pw"), std::string::npos) << "the password was printed: " << pushed.output;
  const auto fetched = b.run({"fetch", "authed", "--tier", "tier-new", "-o", (root() / "out-auth").string()});
  ASSERT_EQ(fetched.exit_code, 0) << fetched.output;
  EXPECT_EQ(read(root() / "out-auth/saxpy.fatbin"), read(root() / "bin/saxpy.fatbin"));
  // Without credentials the registry refuses: an outside failure.
  Machine anonymous = b;
  anonymous.remote = secured.url();
  anonymous.store = root() / "store-anon";
  const auto refused = anonymous.run({"fetch", "authed", "--tier", "tier-new", "-o", (root() / "no").string()});
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  expect_store_intact(b);
}

// A 1 MiB file is checked by its whole digest, a 12 MiB one by its signed
// chunks (several threads): a flipped byte is refused either way.
TEST_F(FetchSuite, FlippedByteOnTheRegistrysDiskIsRefused) {
  for (const auto& [recipe, size, chunk] :
       {std::tuple{"flip", 1 << 20, ""}, std::tuple{"flip-big", 12 << 20, "chunk 1 "}}) {
    SCOPED_TRACE(recipe);
    seed(recipe, "tier-new", {root() / "bin/saxpy.fatbin", data_file(recipe, size, 2)});
    const std::string artifact = s_a.push(recipe)["pushed"][0]["artifact"];
    const auto manifest = registry::parse_manifest(read(s_registry->blob_data(artifact))).value();
    const fs::path layer = s_registry->blob_data(manifest.layers.at(0).digest);
    std::string bytes = read(layer);
    bytes[bytes.size() / 2] ^= 0x01;
    write(layer, bytes);
    const fs::path out = root() / ("out-" + std::string(recipe));
    const auto fetched = s_b.run({"fetch", recipe, "--tier", "tier-new", "-o", out.string()});
    EXPECT_EQ(fetched.exit_code, 1) << fetched.output;
    EXPECT_NE(fetched.output.find("digest mismatch: " + std::string(chunk)), std::string::npos) << fetched.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(has_set(s_b, recipe));
    expect_store_intact(s_b);
  }
}

pid_t spawn(const std::vector<std::string>& argv) {
  return util::start_process({.argv = argv, .output = util::OutputMode::discard}).value_or(-1);
}

// The bytes of the file being unpacked into the store's tmp/ (the layer
// streams into it: no copy of the layer is kept), 0 when none yet.
std::uintmax_t largest_file_under(const fs::path& dir) {
  std::uintmax_t largest = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) largest = std::max(largest, fs::file_size(it->path(), size_ec));
  }
  return largest;
}

std::vector<std::string> names_in(const fs::path& dir, std::string_view containing) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().find(containing) != std::string::npos) out.push_back(e.path().filename());
  return out;
}

TEST_F(FetchSuite, FetchKilledMidDownloadIsCompletedByTheNext) {
  const fs::path data = data_file("big", 128 << 20, 3);
  seed("big", "tier-new", {root() / "bin/saxpy.fatbin", data});
  ASSERT_EQ(s_a.run({"push", "big", "--tier", "tier-new"}).exit_code, 0);
  Machine m = s_b;
  m.store = root() / "store-kill";
  const fs::path out = root() / "out-big";
  const pid_t pid = spawn(m.argv({"fetch", "big", "--tier", "tier-new", "-o", out.string()}));
  ASSERT_GT(pid, 0);
  // Kill it once the file it unpacks while downloading has bytes, before it completes.
  bool killed = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!killed && std::chrono::steady_clock::now() < deadline) {
    if (largest_file_under(m.store / "tmp") > (1u << 20)) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    if (!killed) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(killed) << "the download never showed an unpacked file growing";
  ASSERT_TRUE(WIFSIGNALED(status)) << "the fetch finished before it could be killed";
  EXPECT_FALSE(has_set(m, "big"));
  EXPECT_FALSE(fs::exists(out));
  // The killed fetch's half-written DIR is its private tree beside DIR...
  EXPECT_EQ(names_in(root(), ".out-big.unpack-").size(), 1u);
  expect_store_intact(m);

  const auto next = m.run({"fetch", "big", "--tier", "tier-new", "-o", out.string()});
  ASSERT_EQ(next.exit_code, 0) << next.output;
  EXPECT_EQ(read(out / "data.bin"), read(data));
  EXPECT_TRUE(has_set(m, "big"));
  // ...which the next fetch into the same DIR removes (its process is gone).
  EXPECT_TRUE(names_in(root(), ".out-big.unpack-").empty());
  expect_store_intact(m);
  // And gc collects what the killed one left in the store's tmp/.
  ASSERT_EQ(m.run({"cache", "gc"}).exit_code, 0);
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(m.store / "tmp", ec)) << names_in(m.store / "tmp", "").size() << " left in tmp/";
}

TEST_F(FetchSuite, EightConcurrentFetchesDownloadOnce) {
  seed("shared", "tier-new", {root() / "bin/saxpy.fatbin", data_file("shared", 32 << 20, 4)});
  const std::string artifact = s_a.push("shared")["pushed"][0]["artifact"];
  const auto manifest = registry::parse_manifest(read(s_registry->blob_data(artifact))).value();
  Machine m = s_b;
  m.store = root() / "store-eight";
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < 8; ++i)
    commands.push_back(m.argv(
        {"fetch", "shared", "--tier", "tier-new", "-o", (root() / ("out-eight-" + std::to_string(i))).string()}));
  const auto results = integration::run_parallel(commands, 8);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.output;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(read(root() / ("out-eight-" + std::to_string(i)) / "data.bin"), read(root() / "data/shared/data.bin"));
  EXPECT_EQ(s_registry->blob_gets(manifest.layers.at(0).digest), 1);
  EXPECT_EQ(m.sets().size(), 1u);
  expect_store_intact(m);
}

TEST_F(FetchSuite, WrongOrMissingSignatureIsRefusedUnlessInsecure) {
  seed("unsigned", "tier-new", {root() / "bin/saxpy.fatbin"}, "-");
  seed("wrongkey", "tier-new", {root() / "bin/saxpy.fatbin"}, "keys-c");
  ASSERT_EQ(s_a.run({"push", "unsigned", "--tier", "tier-new"}).exit_code, 0);
  ASSERT_EQ(s_a.run({"push", "wrongkey", "--tier", "tier-new"}).exit_code, 0);
  for (const std::string recipe : {"unsigned", "wrongkey"}) {
    SCOPED_TRACE(recipe);
    const fs::path out = root() / ("out-" + recipe);
    const auto refused = s_b.run({"fetch", recipe, "--tier", "tier-new", "-o", out.string()});
    EXPECT_EQ(refused.exit_code, 1) << refused.output;
    EXPECT_NE(refused.output.find("refusing"), std::string::npos) << refused.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(has_set(s_b, recipe));
    // --insecure: accepted, said on stderr, every time.
    for (int use = 0; use < 2; ++use) {
      std::string err;
      fs::remove_all(out);
      const auto accepted =
          s_b.run_split({"fetch", recipe, "--tier", "tier-new", "-o", out.string(), "--insecure", "--json"}, err);
      ASSERT_EQ(accepted.exit_code, 0) << accepted.output << err;
      EXPECT_NE(err.find("orchestrate: warning: --insecure: the signature check is off for sha256:"), std::string::npos)
          << err;
      const json result = json::parse(accepted.output);
      EXPECT_EQ(result["verified"], (json{{"digest", true}, {"signature", false}, {"archs", true}}));
      // The JSON carries the warning stderr said.
      ASSERT_EQ(result["warnings"].size(), 1u) << result.dump();
      EXPECT_NE(err.find("orchestrate: warning: " + result["warnings"][0].get<std::string>()), std::string::npos)
          << err << result.dump();
    }
    // Stored now, but never as verified: without --insecure it is refused again.
    const auto again = s_b.run({"fetch", recipe, "--tier", "tier-new", "-o", (root() / "again").string()});
    EXPECT_EQ(again.exit_code, 1) << again.output;
  }
  expect_store_intact(s_b);
}

// A layer no honest pack makes, signed with the trusted key so that only the
// unpacker stands between it and the disk.
std::string crafted_pack(const fs::path& out, const std::vector<std::pair<std::string, std::string>>& entries,
                         unsigned perm = 0644) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_zstd(a);
  archive_write_open_filename(a, out.c_str());
  for (const auto& [name, link] : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_perm(e, perm);
    if (!link.empty()) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, link.c_str());
      archive_write_header(a, e);
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_size(e, 5);
      archive_write_header(a, e);
      archive_write_data(a, "evil\n", 5);
    }
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return read(out);
}

// The signed manifest of a crafted layer: one file, "evil" ("evil\n"), with
// SASS for the tier, and `mode` (none: a manifest of before modes were signed).
cache::Manifest crafted_manifest(const std::string& recipe, std::optional<unsigned> mode = std::nullopt) {
  cache::Manifest manifest{.recipe = recipe,
                           .framework = "nvcc",
                           .tier = "tier-new",
                           .key = "crafted",
                           .source_kind = "path",
                           .source_revision = "tree:x",
                           .engine = "host",
                           .image = "host",
                           .toolkit = "13.0",
                           .created = "2026-01-01T00:00:00Z"};
  manifest.files.push_back({.path = "evil",
                            .sha256 = digest::sha256("evil\n").hex(),
                            .size = 5,
                            .embedded_sass = {"sm_100", "sm_90"},
                            .mode = mode});
  return manifest;
}

// Pushes `pack` as the layer of `manifest`, signed with the trusted key.
void push_crafted(const cache::Manifest& manifest, const fs::path& pack, const fs::path& keys,
                  const std::string& remote) {
  const auto key = cache::load_signing_key(keys).value();
  auto client = site::make_client(remote);
  const std::string bytes = cache::canonical_json(manifest);
  const SetBlobs set{
      .manifest = bytes, .signature = cache::signature_json(cache::sign_manifest(key, bytes)), .pack = pack};
  ASSERT_TRUE(push_blobs(*client, set, TransferProgress(nullptr, Terminal::no)).has_value());
}

TEST_F(FetchSuite, HostileLayersAreRefusedAndWriteNothingOutside) {
  const fs::path outside = root() / "outside";
  fs::create_directories(outside);
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> cases = {
      {"evil-dotdot", {{"../../outside/dotdot", ""}}},
      {"evil-absolute", {{(outside / "absolute").string(), ""}}},
      {"evil-link", {{"link", outside.string()}, {"link/through-link", ""}}},
      {"evil-relative-link", {{"up", "../../../outside"}, {"up/through-up", ""}}},
  };
  for (const auto& [recipe, entries] : cases) {
    SCOPED_TRACE(recipe);
    const fs::path pack = root() / (recipe + ".tar.zst");
    crafted_pack(pack, entries);
    push_crafted(crafted_manifest(recipe), pack, root() / "keys-a", s_registry->url());
    const fs::path out = root() / ("out-" + recipe);
    const auto fetched = s_b.run({"fetch", recipe, "--tier", "tier-new", "-o", out.string()});
    EXPECT_EQ(fetched.exit_code, 1) << fetched.output;
    EXPECT_NE(fetched.output.find("refusing the layer"), std::string::npos) << fetched.output;
    EXPECT_TRUE(fs::is_empty(outside)) << "something was written outside DIR";
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(has_set(s_b, recipe));
  }
  expect_store_intact(s_b);
}

// A layer swapped under a valid signature: its tar header gives a file a
// mode the signed manifest does not (0777, or setuid). Refused as a digest
// mismatch is (exit 1, "refusing the layer"), and nothing lands in DIR or
// the store. A manifest of before modes were signed still fetches: its file
// lands 0755 (the owner could execute it), never 0777.
TEST_F(FetchSuite, ALayersModesOutsideTheSignatureAreRefused) {
  struct Case {
    std::string recipe;
    std::optional<unsigned> signed_mode;
    unsigned layer_mode;
    std::string refusal;  // empty: fetched
  };
  const std::vector<Case> cases = {
      {"mode-swapped", 0644u, 0777, "'evil' has mode 0777 in the layer; the signed manifest says 0644"},
      {"mode-setuid", 0755u, 04755, "'evil' has mode 4755 in the layer; the signed manifest says 0755"},
      {"mode-unsigned", std::nullopt, 0777, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.recipe);
    const fs::path pack = root() / (c.recipe + ".tar.zst");
    crafted_pack(pack, {{"evil", ""}}, c.layer_mode);
    push_crafted(crafted_manifest(c.recipe, c.signed_mode), pack, root() / "keys-a", s_registry->url());
    const fs::path out = root() / ("out-" + c.recipe);
    const auto fetched = s_b.run({"fetch", c.recipe, "--tier", "tier-new", "-o", out.string()});
    if (c.refusal.empty()) {
      ASSERT_EQ(fetched.exit_code, 0) << fetched.output;
      EXPECT_EQ(fs::status(out / "evil").permissions(), static_cast<fs::perms>(0755));
      continue;
    }
    EXPECT_EQ(fetched.exit_code, 1) << fetched.output;
    EXPECT_NE(fetched.output.find("refusing the layer of sha256:"), std::string::npos) << fetched.output;
    EXPECT_NE(fetched.output.find(c.refusal), std::string::npos) << fetched.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(names_in(root(), ".out-" + c.recipe).empty());
    EXPECT_FALSE(has_set(s_b, c.recipe));
  }
  expect_store_intact(s_b);
}

// Stores bin/saxpy.fatbin plus `data` as RECIPE for tier-new in store A,
// signed with keys-a, its manifest created at `created` and carrying `smoke`,
// each run signed by keys-a as node-a's run on GPU ordinal i of its list:
// what `orchestrate smoke TIER --artifact` leaves on node-a, without a GPU.
std::string seed_attested(const fs::path& store_root, const fs::path& keys, const std::string& recipe,
                          const fs::path& data, const std::string& created,
                          std::map<std::string, std::vector<cache::SmokeAttestation>> smoke) {
  auto store = cache::Store::open(store_root);
  auto key = cache::load_signing_key(keys);
  if (!store || !key) return {};
  cache::NewArtifactSet set{.key = &*key, .verified = true};
  set.manifest = {.recipe = recipe,
                  .framework = "nvcc",
                  .tier = "tier-new",
                  .key = "seed",
                  .source_kind = "path",
                  .source_revision = "tree:seed",
                  .engine = "host",
                  .image = "host",
                  .toolkit = "13.0",
                  .created = created};
  set.manifest.files = {{.path = "saxpy.fatbin",
                         .requested_sass = {"sm_90", "sm_100"},
                         .requested_ptx = {"compute_100"},
                         .embedded_sass = {"sm_90", "sm_100"},
                         .embedded_ptx = {"compute_100"}},
                        {.path = "data.bin"}};
  set.sources = {store_root.parent_path() / "bin/saxpy.fatbin", data};
  // The runs sign the build's subject, which needs the files' digests: the
  // set is stored once, without runs, in a store of its own to learn them.
  auto scratch = cache::Store::open(store_root.parent_path() / ("subject-" + recipe + "-" + created));
  if (!scratch) return {};
  auto bare = cache::store_artifact_set(*scratch, set);
  if (!bare) return {};
  auto loaded = cache::load_artifact_set(*scratch, *bare, {});
  if (!loaded) return {};
  const digest::Digest subject = cache::smoke_subject(loaded->manifest);
  for (auto& [tier, runs] : smoke)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      runs[i].node = "node-a";
      runs[i].ordinal = static_cast<std::uint32_t>(i);
      runs[i].member = true;
      cache::sign_smoke_run(runs[i], *key, tier, subject);
    }
  set.manifest.smoke = std::move(smoke);
  auto entry = cache::store_artifact_set(*store, std::move(set));
  return entry ? entry->manifest.hex() : std::string();
}

// --require-smoke: by digest, a set without a passing attestation for the
// tier, or one that lacks a CC of it, is refused and nothing is written; by
// tier, the newest set that passes on every CC of the tier is served over
// newer sets that do not (from the remote, then the store).
TEST_F(FetchSuite, RequireSmokeServesOnlyAnAttestedSet) {
  const cache::SmokeAttestation h200{
      .gpu = "NVIDIA H200", .cc = "9.0", .driver = "580.65.06", .outcome = "pass", .time = "2026-11-29T00:00:00Z"};
  const cache::SmokeAttestation b200{
      .gpu = "NVIDIA B200", .cc = "10.0", .driver = "580.65.06", .outcome = "pass", .time = "2026-11-29T00:00:00Z"};
  const std::string attested = seed_attested(s_a.store, s_a.keys, "smoked", data_file("smoked-1", 1 << 20, 11),
                                             "2026-11-29T00:00:01Z", {{"tier-new", {h200, b200}}});
  const std::string plain = seed_attested(s_a.store, s_a.keys, "smoked", data_file("smoked-2", 1 << 20, 12),
                                          "2026-11-29T00:00:02Z", {{"tier-strict", {h200, b200}}});
  const std::string partial = seed_attested(s_a.store, s_a.keys, "smoked", data_file("smoked-3", 1 << 20, 13),
                                            "2026-11-29T00:00:03Z", {{"tier-new", {h200}}});
  ASSERT_EQ(attested.size(), 64u);
  ASSERT_EQ(plain.size(), 64u);
  ASSERT_EQ(partial.size(), 64u);
  ASSERT_EQ(s_a.run({"push", "--digest", attested}).exit_code, 0);
  ASSERT_EQ(s_a.run({"push", "--digest", plain}).exit_code, 0);
  ASSERT_EQ(s_a.run({"push", "--digest", partial}).exit_code, 0);

  const fs::path refused_dir = root() / "smoke-refused";
  const auto refused = s_b.run(
      {"fetch", "smoked", "--tier", "tier-new", "--digest", plain, "--require-smoke", "-o", refused_dir.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("refusing sha256:" + plain +
                                " has no smoke attestation for tier 'tier-new', so it "
                                "lacks a passing run on CC 9.0 (H100) and 10.0 (B200)"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("run 'orchestrate smoke tier-new --artifact sha256:" + plain + "'"), std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(refused_dir));
  const auto lacking = s_b.run(
      {"fetch", "smoked", "--tier", "tier-new", "--digest", partial, "--require-smoke", "-o", refused_dir.string()});
  EXPECT_EQ(lacking.exit_code, 1) << lacking.output;
  EXPECT_NE(lacking.output.find("refusing sha256:" + partial +
                                "'s smoke attestation for tier 'tier-new' lacks a passing run on CC 10.0 (B200)"),
            std::string::npos)
      << lacking.output;
  EXPECT_FALSE(fs::exists(refused_dir));
  EXPECT_FALSE(has_set(s_b, "smoked"));
  const auto pull_refused = s_b.run({"pull", "smoked", "--tier", "tier-new", "--digest", plain, "--require-smoke"});
  EXPECT_EQ(pull_refused.exit_code, 1) << pull_refused.output;
  const auto pull_lacking = s_b.run({"pull", "smoked", "--tier", "tier-new", "--digest", partial, "--require-smoke"});
  EXPECT_EQ(pull_lacking.exit_code, 1) << pull_lacking.output;
  EXPECT_NE(pull_lacking.output.find("lacks a passing run on CC 10.0 (B200)"), std::string::npos)
      << pull_lacking.output;

  for (const char* where : {"remote", "store"}) {
    std::string err;
    const fs::path out = root() / (std::string("smoke-served-") + where);
    const auto served =
        s_b.run_split({"fetch", "smoked", "--tier", "tier-new", "--require-smoke", "-o", out.string(), "--json"}, err);
    ASSERT_EQ(served.exit_code, 0) << served.output << err;
    const json result = json::parse(served.output);
    EXPECT_EQ(result["digest"], "sha256:" + attested) << where;
    EXPECT_EQ(result["from"], std::string(where) == "store" ? "store" : s_registry->url());
    EXPECT_EQ(result["verified"], (json{{"digest", true}, {"signature", true}, {"archs", true}, {"smoke", true}}));
    EXPECT_EQ(read(out / "data.bin"), read(root() / "data/smoked-1/data.bin"));
  }
  // Without the flag, by tier, into an empty store: the newest set, and no
  // "smoke" key.
  Machine c = s_b;
  c.store = root() / "store-smoke";
  std::string err;
  const auto newest =
      c.run_split({"fetch", "smoked", "--tier", "tier-new", "-o", (root() / "smoke-newest").string(), "--json"}, err);
  ASSERT_EQ(newest.exit_code, 0) << newest.output << err;
  EXPECT_EQ(json::parse(newest.output)["digest"], "sha256:" + partial);
  EXPECT_EQ(json::parse(newest.output)["verified"], (json{{"digest", true}, {"signature", true}, {"archs", true}}));
  expect_store_intact(s_b);
}

// A registry that sends a byte every 0.4 s passes curl's stall check (1 B/s)
// forever; each operation's deadline ends it, saying which operation timed
// out: the layer of a fetch, the manifest of a pull, the upload of a push.
// Exit 3 each time, and nothing is left. The same commands with the same
// deadlines, straight to the registry, succeed.
TEST_F(FetchSuite, ATricklingRegistryTimesOutNamingTheOperation) {
  seed("trickle", "tier-new", {root() / "bin/saxpy.fatbin", data_file("trickle", 256 << 10, 7)});
  const std::string artifact = s_a.push("trickle")["pushed"][0]["artifact"];
  const auto layer = registry::parse_manifest(read(s_registry->blob_data(artifact))).value().layers.at(0);
  const std::vector<std::string> deadline = {"--timeout", "2", "--min-rate", "1MiB"};
  const auto with_deadline = [&](std::vector<std::string> args) {
    args.insert(args.end(), deadline.begin(), deadline.end());
    return args;
  };
  Machine m = s_b;
  m.store = root() / "store-trickle";
  const auto through = [&](const std::string& needle) {
    return std::make_unique<integration::FaultProxy>(s_registry->port(),
                                                     integration::ProxyFault{.trickle_after = needle});
  };
  const auto proxied = [&](const integration::FaultProxy& proxy, const Machine& base) {
    Machine slow = base;
    slow.remote = "http://127.0.0.1:" + std::to_string(proxy.port()) + "/team/artifacts";
    return slow;
  };
  const fs::path out = root() / "out-trickle";
  {
    const auto proxy = through("/blobs/" + layer.digest.to_string());
    const auto fetched =
        proxied(*proxy, m).run(with_deadline({"fetch", "trickle", "--tier", "tier-new", "-o", out.string()}));
    EXPECT_TRUE(proxy->did_trickle());
    EXPECT_EQ(fetched.exit_code, 3) << fetched.output;
    EXPECT_NE(
        fetched.output.find("GET blob " + layer.digest.to_string() + " (" + util::human_size(layer.size) +
                            ") from http://127.0.0.1:" + std::to_string(proxy->port()) + "/team/artifacts timed out: "),
        std::string::npos)
        << fetched.output;
    EXPECT_NE(fetched.output.find(" of " + util::human_size(layer.size) + " came within its deadline of "),
              std::string::npos)
        << fetched.output;
    EXPECT_NE(
        fetched.output.find("(2 s + " + util::human_size(layer.size) + " at 1.0 MiB/s); --timeout and --min-rate"),
        std::string::npos)
        << fetched.output;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(has_set(m, "trickle"));
    expect_store_intact(m);
  }
  {
    const auto proxy = through("/manifests/trickle--tier-new ");
    const auto pulled = proxied(*proxy, m).run(with_deadline({"pull", "trickle", "--tier", "tier-new"}));
    EXPECT_EQ(pulled.exit_code, 3) << pulled.output;
    EXPECT_NE(pulled.output.find("GET manifest trickle--tier-new from http://127.0.0.1:" +
                                 std::to_string(proxy->port()) + "/team/artifacts timed out: "),
              std::string::npos)
        << pulled.output;
    EXPECT_NE(pulled.output.find("within its deadline of 2 s (the budget of a small exchange)"), std::string::npos)
        << pulled.output;
    EXPECT_FALSE(has_set(m, "trickle"));
  }
  seed("trickle-push", "tier-new", {root() / "bin/saxpy.fatbin", data_file("trickle-push", 64 << 10, 8)});
  {
    const auto proxy = through("/blobs/uploads/");
    const auto pushed = proxied(*proxy, s_a).run(with_deadline({"push", "trickle-push", "--tier", "tier-new"}));
    EXPECT_EQ(pushed.exit_code, 3) << pushed.output;
    EXPECT_NE(pushed.output.find("PUT blob sha256:"), std::string::npos) << pushed.output;
    EXPECT_NE(pushed.output.find("/team/artifacts timed out: "), std::string::npos) << pushed.output;
  }
  // At the registry's own pace the same deadlines are plenty.
  const auto pushed = s_a.run(with_deadline({"push", "trickle-push", "--tier", "tier-new"}));
  EXPECT_EQ(pushed.exit_code, 0) << pushed.output;
  const auto fetched = m.run(with_deadline({"fetch", "trickle", "--tier", "tier-new", "-o", out.string()}));
  ASSERT_EQ(fetched.exit_code, 0) << fetched.output;
  EXPECT_EQ(read(out / "data.bin"), read(root() / "data/trickle/data.bin"));
  // A deadline that is not a number of seconds is bad input.
  const auto bad = m.run({"fetch", "trickle", "--tier", "tier-new", "--timeout", "soon"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  expect_store_intact(m);
}

// Last: it stops the suite's registry.
TEST_F(FetchSuite, ZRegistryStoppedLocalHitsStillServed) {
  seed("local-hit", "tier-new", {root() / "bin/saxpy.fatbin"});
  seed("remote-only", "tier-new", {root() / "bin/saxpy.fatbin", data_file("remote-only", 1 << 10, 5)});
  ASSERT_EQ(s_a.run({"push", "local-hit", "--tier", "tier-new"}).exit_code, 0);
  ASSERT_EQ(s_a.run({"push", "remote-only", "--tier", "tier-new"}).exit_code, 0);
  ASSERT_EQ(s_b.run({"fetch", "local-hit", "--tier", "tier-new", "-o", (root() / "hit-1").string()}).exit_code, 0);
  s_registry->stop();
  const auto hit = s_b.run({"fetch", "local-hit", "--tier", "tier-new", "-o", (root() / "hit-2").string()});
  EXPECT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_EQ(read(root() / "hit-2/saxpy.fatbin"), read(root() / "bin/saxpy.fatbin"));
  const auto miss = s_b.run({"fetch", "remote-only", "--tier", "tier-new", "-o", (root() / "miss").string()});
  EXPECT_EQ(miss.exit_code, 3) << miss.output;
  EXPECT_NE(miss.output.find("the remote failed"), std::string::npos) << miss.output;
  EXPECT_FALSE(fs::exists(root() / "miss"));
  const auto push = s_a.run({"push", "local-hit", "--tier", "tier-new"});
  EXPECT_EQ(push.exit_code, 3) << push.output;
  expect_store_intact(s_b);
}

}  // namespace
}  // namespace orc::app
