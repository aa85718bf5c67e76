// The store at its edges, with the real orchestrate binary as users run it
// (issue 28): builds killed with SIGKILL (their scratch trees freed by
// `cache gc`, a live build's left alone), a store on a real 50 MiB tmpfs
// filled to ENOSPC (every command says so, gc frees it), and a populated
// store bind-mounted read-only (ls, verify, fetch and inspect work; what
// must write says so and writes nothing). The mounts need root (or
// CAP_SYS_ADMIN): without it those cases skip with the reason. Sets are
// stored by bench_fetch_seed from a fatbin nvcc 13.0 makes, signed with a
// key `orchestrate key generate` makes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "orchestrator/util/process.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* k_nvcc = "/usr/local/cuda/bin/nvcc";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A mount the test made, unmounted when the object goes.
class Mount {
 public:
  // An empty string, or why the mount could not be made (the case skips).
  static std::string tmpfs(const fs::path& at, const std::string& size, std::unique_ptr<Mount>& out) {
    fs::create_directories(at);
    if (::mount("tmpfs", at.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0)
      return "cannot mount a tmpfs at " + at.string() + ": " + std::strerror(errno);
    out.reset(new Mount(at));
    return {};
  }
  // `from` again at `at`, read-only (a bind mount, then remounted ro).
  static std::string read_only_bind(const fs::path& from, const fs::path& at, std::unique_ptr<Mount>& out) {
    fs::create_directories(at);
    if (::mount(from.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return "cannot bind-mount " + from.string() + ": " + std::strerror(errno);
    out.reset(new Mount(at));
    if (::mount(nullptr, at.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      return "cannot remount " + at.string() + " read-only: " + std::strerror(errno);
    return {};
  }
  ~Mount() {
    if (::umount2(m_at.c_str(), 0) != 0) ::umount2(m_at.c_str(), MNT_DETACH);
  }

 private:
  explicit Mount(fs::path at) : m_at(std::move(at)) {}
  fs::path m_at;
};

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
  json parsed() const { return json::parse(out, nullptr, false); }
};

// Every file under `dir` with its size: what "nothing written" compares.
std::map<std::string, std::uintmax_t> listing(const fs::path& dir) {
  std::map<std::string, std::uintmax_t> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code size_ec;
    out[it->path().lexically_relative(dir).string()] = it->is_regular_file(size_ec) ? it->file_size(size_ec) : 0;
  }
  return out;
}

// Fills the file system of `dir` until a write fails with ENOSPC: the rest
// of the disk, whatever the store holds.
void fill_to_enospc(const fs::path& dir) {
  std::ofstream out(dir / "filler", std::ios::binary | std::ios::app);
  const std::string block(1 << 16, 'f');
  while (out.write(block.data(), static_cast<std::streamsize>(block.size())) && out.flush()) {
  }
}

class StoreEdges : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_dir = new TempDir("orc-store-edges");
    const fs::path root = s_dir->path();
    write(root / "k.cu",
          "__global__ void saxpy(float a, float* x, float* y) { y[threadIdx.x] += a * x[threadIdx.x]; }\n");
    fs::create_directories(root / "bin");
    s_nvcc = run_process({k_nvcc, "-fatbin", "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o",
                          (root / "bin/saxpy.fatbin").string(), (root / "k.cu").string()});
    write(root / "orchestrate.yaml", R"(toolkits: ["13.0"]
tiers:
  tier-h:
    gpus: ["H100"]
recipes:
  - name: saxpy
    framework: nvcc
    source: {path: .}
    tiers: [tier-h]
  - name: slow
    framework: cmake
    source: {path: src}
    tiers: [tier-h]
    build:
      - [sh, -c, 'head -c 20000000 /dev/zero > blob.bin; echo $$ > pid; touch started; exec sleep 300']
    artifacts: ["blob.bin"]
  - name: slow-too
    framework: cmake
    source: {path: src}
    tiers: [tier-h]
    build:
      - [sh, -c, 'head -c 1000 /dev/zero > blob.bin; echo $$ > pid; touch started; exec sleep 300']
    artifacts: ["blob.bin"]
trusted_keys: [keys/signing.pub.pem]
)");
    write(root / "src" / "README", "a source tree\n");
    run({"key", "generate"}, root / "unused-store");
  }
  static void TearDownTestSuite() { delete s_dir; }
  void SetUp() override {
    if (s_nvcc.exit_code != 0) GTEST_SKIP() << "nvcc (" << k_nvcc << ") failed: " << s_nvcc.output;
  }

  static fs::path root() { return s_dir->path(); }

  static CommandRun run(const std::vector<std::string>& args, const fs::path& store) {
    std::vector<std::string> argv{ORC_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r =
        util::run_process({.argv = argv, .env = env(store), .working_dir = root(), .timeout = std::chrono::minutes(5)});
    if (!r) return {.exit_code = -1, .out = {}, .err = r.error().message};
    return {.exit_code = r->status(), .out = r->out, .err = r->err};
  }
  static std::vector<std::pair<std::string, std::string>> env(const fs::path& store) {
    return {{"ORCHESTRATE_CACHE_DIR", store.string()},
            {"ORCHESTRATE_KEYS_DIR", (root() / "keys").string()},
            {"ORCHESTRATE_CONFIG", (root() / "orchestrate.yaml").string()},
            {"ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda"},
            {"ORCHESTRATE_REMOTE", ""}};
  }
  // The signed saxpy set in `store`; its manifest hex.
  static std::string seed(const fs::path& store) {
    const auto seeded = run_process({ORC_SEED, store.string(), (root() / "keys").string(), "saxpy", "tier-h",
                                     (root() / "bin/saxpy.fatbin").string()});
    EXPECT_EQ(seeded.exit_code, 0) << seeded.output;
    return seeded.output.substr(0, 64);
  }

  static inline TempDir* s_dir = nullptr;
  static inline ProcessResult s_nvcc;
};

// ---- killed builds -------------------------------------------------------

// A background `orchestrate build tier-h --recipe R`, and the scratch tree
// its step announced itself in.
struct BackgroundBuild {
  pid_t pid = -1;
  fs::path tree;
  pid_t step = -1;  // the step's process (its own group): a kill -9 of orchestrate leaves it
};

BackgroundBuild start_build(const std::string& recipe, const fs::path& store,
                            const std::vector<std::pair<std::string, std::string>>& env, const fs::path& cwd) {
  BackgroundBuild b;
  fs::create_directories(store / "tmp");
  std::set<fs::path> before;
  for (const auto& e : fs::directory_iterator(store / "tmp")) before.insert(e.path());
  b.pid = util::start_process({.argv = {ORC_BINARY, "build", "tier-h", "--recipe", recipe},
                               .env = env,
                               .working_dir = cwd,
                               .output = util::OutputMode::discard})
              .value_or(-1);
  // Bound the wait (the build plans, copies its source, starts the step).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : fs::directory_iterator(store / "tmp"))
      if (!before.contains(e.path()) && fs::exists(e.path() / "src" / "started")) {
        b.tree = e.path();
        b.step = std::stoi(read(e.path() / "src" / "pid"));
        return b;
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return b;
}

// Waits for `pid` at most `limit`; its wait status, or nullopt on a hang.
std::optional<int> wait_at_most(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

// Whatever a case leaves running when it fails: each build, and the step a
// kill -9 of its orchestrate orphans (it has a process group of its own).
struct Reaper {
  std::vector<pid_t> pids;
  std::vector<pid_t> groups;
  ~Reaper() {
    for (const pid_t g : groups)
      if (g > 0) ::kill(-g, SIGKILL);
    for (const pid_t p : pids)
      if (p > 0 && ::kill(p, SIGKILL) == 0) ::waitpid(p, nullptr, 0);
  }
};

TEST_F(StoreEdges, GcFreesTheTreeOfABuildKilledWithSigkillAndLeavesALiveOne) {
  const fs::path store = root() / "store-kill";
  Reaper reaper;
  BackgroundBuild killed = start_build("slow", store, env(store), root());
  reaper.pids.push_back(killed.pid);
  reaper.groups.push_back(killed.step);
  ASSERT_FALSE(killed.tree.empty()) << "the build's step never started";
  EXPECT_TRUE(killed.tree.filename().string().starts_with("build-slow-tier-h-")) << killed.tree;
  BackgroundBuild live = start_build("slow-too", store, env(store), root());
  reaper.pids.push_back(live.pid);
  reaper.groups.push_back(live.step);
  ASSERT_FALSE(live.tree.empty()) << "the second build's step never started";

  ::kill(killed.pid, SIGKILL);
  ASSERT_TRUE(wait_at_most(killed.pid, std::chrono::seconds(10)));
  reaper.pids.front() = -1;
  // What the issue saw: the tree outlives its build.
  ASSERT_TRUE(fs::exists(killed.tree / "src" / "blob.bin"));

  const CommandRun gc = run({"cache", "gc", "--json"}, store);
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  const json r = gc.parsed();
  EXPECT_EQ(r["removed_build_trees"], 1) << gc.out;
  EXPECT_GE(r["removed_build_tree_bytes"].get<std::uint64_t>(), 20'000'000u) << gc.out;
  EXPECT_EQ(r["build_trees_in_use"], json::array({live.tree.string()})) << gc.out;
  EXPECT_FALSE(fs::exists(killed.tree));
  EXPECT_TRUE(fs::exists(live.tree / "src" / "started"));

  const CommandRun text = run({"cache", "gc"}, store);
  EXPECT_NE(text.out.find("0 abandoned build tree(s) (0 B)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("left " + live.tree.string() + ": a running build owns it"), std::string::npos) << text.out;

  // The live build honours SIGTERM, and takes its own tree away.
  ::kill(live.pid, SIGTERM);
  const auto status = wait_at_most(live.pid, std::chrono::seconds(10));
  ASSERT_TRUE(status) << "the build did not stop within 10 s of SIGTERM";
  reaper.pids.back() = -1;
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3) << *status;
  EXPECT_FALSE(fs::exists(live.tree));
}

// ---- a full file system ------------------------------------------------

TEST_F(StoreEdges, FullFileSystemIsSaidAsSuchAndGcFreesIt) {
  std::unique_ptr<Mount> mount;
  const fs::path disk = root() / "full";
  if (const std::string why = Mount::tmpfs(disk, "50m", mount); !why.empty()) GTEST_SKIP() << why;
  const fs::path store = disk / "store";
  const std::string set = seed(store);
  // What a killed put leaves: a 10 MB temporary. Then the rest of the disk.
  write(store / "tmp" / "blob.4242.0.tmp", std::string(10'000'000, 'b'));
  fill_to_enospc(disk);
  const auto before = listing(store);

  // A command that must write says the file system is full, where, how much
  // is free, and what to do; it writes nothing.
  const CommandRun build = run({"build", "tier-h", "--recipe", "saxpy"}, store);
  EXPECT_EQ(build.exit_code, 3) << build.err;
  EXPECT_NE(build.err.find("orchestrate: error: cannot open the local store at " + store.string() +
                           ": the store's file system is full: "),
            std::string::npos)
      << build.err;
  EXPECT_NE(build.err.find("(No space left on device); " + store.string() +
                           " has 0 B free of 50.0 MiB: run "
                           "'orchestrate cache gc' (it works on a full disk) or free space there"),
            std::string::npos)
      << build.err;
  // Reading works on a full disk.
  const CommandRun ls = run({"cache", "ls", "--json"}, store);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  ASSERT_EQ(ls.parsed()["sets"].size(), 1u) << ls.out;
  EXPECT_EQ(ls.parsed()["sets"][0]["manifest"], "sha256:" + set) << ls.out;
  // SQLite may leave an empty -wal and a -shm stub from its failed open; nothing else changed.
  auto after = listing(store);
  after.erase("index.v1.sqlite-wal");
  after.erase("index.v1.sqlite-shm");
  auto expected = before;
  expected.erase("index.v1.sqlite-wal");
  expected.erase("index.v1.sqlite-shm");
  EXPECT_EQ(after, expected);

  // gc opens the index without writing, frees the temporary first, and then
  // finds room to do the rest.
  const CommandRun gc = run({"cache", "gc", "--json"}, store);
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_EQ(gc.parsed()["removed_temporaries"], 1) << gc.out;
  EXPECT_TRUE(gc.parsed()["index_untouched"].is_null()) << gc.out;
  EXPECT_FALSE(fs::exists(store / "tmp" / "blob.4242.0.tmp"));
  EXPECT_EQ(run({"cache", "verify"}, store).exit_code, 0);

  // Full again with nothing left to free: gc still runs and says the index
  // was only read; --keep, which must write it, fails with exit 3.
  fill_to_enospc(disk);
  const CommandRun still = run({"cache", "gc"}, store);
  EXPECT_EQ(still.exit_code, 0) << still.err;
  EXPECT_NE(still.err.find("orchestrate: warning: the index was read, not written (no pack dropped): the store's "
                           "file system is still full after these removals (" +
                           store.string() +
                           " has 0 B free of "
                           "50.0 MiB): free space there, then run 'orchestrate cache gc' again"),
            std::string::npos)
      << still.err;
  const CommandRun keep = run({"cache", "gc", "--keep", "0"}, store);
  EXPECT_EQ(keep.exit_code, 3) << keep.err;
  EXPECT_NE(keep.err.find("orchestrate: error: --keep needs the index written, and it could not be"), std::string::npos)
      << keep.err;
  EXPECT_EQ(run({"cache", "ls", "--json"}, store).parsed()["sets"].size(), 1u);
  fs::remove(disk / "filler");
  const CommandRun kept = run({"cache", "gc", "--keep", "0", "--json"}, store);
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(kept.parsed()["removed_sets"], json::array({set})) << kept.out;
}

// ---- a read-only store ---------------------------------------------------

TEST_F(StoreEdges, ReadOnlyStoreCanBeListedVerifiedFetchedAndInspected) {
  const fs::path writable = root() / "ro-source";
  const std::string set = seed(writable / "store");
  std::unique_ptr<Mount> mount;
  const fs::path mounted = root() / "ro";
  if (const std::string why = Mount::read_only_bind(writable, mounted, mount); !why.empty()) GTEST_SKIP() << why;
  const fs::path store = mounted / "store";
  const auto before = listing(writable);

  const CommandRun ls = run({"cache", "ls", "--json"}, store);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  ASSERT_EQ(ls.parsed()["sets"].size(), 1u) << ls.out;
  EXPECT_EQ(ls.parsed()["sets"][0]["manifest"], "sha256:" + set);

  const CommandRun verify = run({"cache", "verify", "--json"}, store);
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_EQ(verify.parsed()["read_only"], true) << verify.out;
  EXPECT_EQ(verify.parsed()["corrupt"].size(), 0u) << verify.out;

  const fs::path out = root() / "ro-fetched";
  const CommandRun fetched = run({"fetch", "saxpy", "--tier", "tier-h", "-o", out.string()}, store);
  ASSERT_EQ(fetched.exit_code, 0) << fetched.err;
  EXPECT_EQ(read(out / "saxpy.fatbin"), read(root() / "bin/saxpy.fatbin"));

  const std::string file_hex = ls.parsed()["sets"][0]["files"][0]["sha256"].get<std::string>();
  const fs::path blob = store / "blobs.v1" / "sha256" / file_hex.substr(0, 2) / file_hex;
  const CommandRun inspected = run({"inspect", blob.string(), "--json"}, store);
  EXPECT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("sm_90"), std::string::npos) << inspected.out;

  // What must write says the store is read-only, and writes nothing.
  const CommandRun gc = run({"cache", "gc"}, store);
  EXPECT_EQ(gc.exit_code, 3);
  EXPECT_NE(gc.err.find("orchestrate: error: gc cannot remove anything: the store is on a read-only file system: "),
            std::string::npos)
      << gc.err;
  const CommandRun build = run({"build", "tier-h", "--recipe", "saxpy"}, store);
  EXPECT_EQ(build.exit_code, 3);
  EXPECT_NE(build.err.find(": the store is on a read-only file system: opening " + store.string() +
                           "/locks.v1/store.lock: Read-only file system; " + store.string() +
                           " can be read (cache ls, cache verify, fetch of a stored set, inspect of its files); to "
                           "write it, remount it read-write, or point ORCHESTRATE_CACHE_DIR at a writable store"),
            std::string::npos)
      << build.err;
  const CommandRun missing =
      run({"fetch", "saxpy", "--tier", "tier-h", "--digest", "sha256:00000000", "-o", (root() / "ro-none").string()},
          store);
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_NE(missing.err.find("pulling it from the remote needs to write the store: the store is on a read-only "
                             "file system"),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(root() / "ro-none"));
  EXPECT_EQ(listing(writable), before);

  // A corrupt blob is found and said, left where it is.
  const fs::path source_blob = writable / "store" / "blobs.v1" / "sha256" / file_hex.substr(0, 2) / file_hex;
  const std::string bytes = read(source_blob);
  write(source_blob, bytes.substr(0, bytes.size() / 2));
  const CommandRun damaged = run({"cache", "verify"}, store);
  EXPECT_EQ(damaged.exit_code, 1) << damaged.out << damaged.err;
  EXPECT_NE(damaged.out.find("corrupt: sha256:" + file_hex + " now hashes to "), std::string::npos) << damaged.out;
  EXPECT_NE(damaged.out.find("; left in place (the store is read-only)"), std::string::npos) << damaged.out;
  EXPECT_TRUE(fs::exists(source_blob));
}

}  // namespace
}  // namespace orc::integration
