// `orchestrate build` (app::build) on the host engine with the real nvcc at
// /usr/local/cuda and real CMake: no container engine, no root. The
// nested-project fixture writes its library two directories deep
// (build/lib/libx.so, as a CMake project with its library in a subdirectory
// does); `artifacts: ["**/libx.so"]` must collect and verify it, and a glob
// that misses it must fail naming the roots and the file it meant.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/cache/cache_cmd.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "tests/integration/host_build.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_nvcc = "/usr/local/cuda/bin/nvcc";

std::string recipe(const std::string& name, const std::string& artifact, const std::string& extra_step = {},
                   const std::string& source = std::string(ORC_SOURCE_DIR) + "/tests/integration/nested-project") {
  return "  - name: " + name + "\n    framework: cmake\n    source: {path: " + source +
         "}\n    tiers: [tier-h]\n    build:\n"
         "      - cmake -S . -B build -DCMAKE_BUILD_TYPE=Release\n"
         "      - cmake --build build --parallel\n" +
         (extra_step.empty() ? "" : "      - " + extra_step + "\n") + "    artifacts: [\"" + artifact + "\"]\n";
}

std::string errors(const app::BuildResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e + "\n";
  return out;
}

class BuildOnHost : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(k_nvcc, X_OK) != 0) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda here";
    if (run_process({"cmake", "--version"}).exit_code != 0) GTEST_SKIP() << "cmake is not installed";
    // Only the 13.0 at /usr/local/cuda: the plan must not depend on which
    // other toolkits this machine happens to hold.
    ::setenv("ORCHESTRATE_HOST_TOOLKITS", "/usr/local/cuda", 1);
    ::setenv("ORCHESTRATE_CACHE_DIR", (m_dir.path() / "cache").c_str(), 1);
    ::setenv("ORCHESTRATE_KEYS_DIR", (m_dir.path() / "keys").c_str(), 1);
    std::ofstream(m_dir.path() / "orchestrate.yaml")
        << "toolkits: [\"13.0\"]\ntiers:\n  tier-h:\n    gpus: [\"H100\"]\nrecipes:\n"
        << recipe("nested", "**/libx.so")
        << recipe("nested-typo", "lib/libx.so")
        // A library whose name is the bytes libx<0xff>.so (steps take no shell syntax: sh does it).
        << recipe("nested-bytes", "**/*.so", R"([sh, -c, 'cp build/lib/libx.so "build/lib/libx$(printf "\377").so"'])")
        << recipe("nested-gone", "**/libx.so", {}, (m_dir.path() / "no-such-source").string())
        << recipe("edited", "**/libx.so", {}, (m_dir.path() / "edited").string());
  }

  app::BuildReport build_report(const std::string& name) {
    std::ostringstream progress;
    const app::BuildReport report = build_on_host(m_dir.path(), "tier-h", name, progress);
    std::cout << cli::render_build_text(report, false);
    EXPECT_EQ(report.builds.size(), 1u) << progress.str();
    if (!report.builds.empty() && report.builds.front().status == app::BuildStatus::failed) std::cout << progress.str();
    return report;
  }

  app::BuildResult build(const std::string& name) {
    const app::BuildReport report = build_report(name);
    if (report.builds.empty()) return {};
    return report.builds.front();
  }

  TempDir m_dir{"orc-build-host"};
};

TEST_F(BuildOnHost, DoubleStarGlobCollectsTheLibraryTwoDirectoriesDeep) {
  const app::BuildResult built = build("nested");
  ASSERT_EQ(built.status, app::BuildStatus::built) << errors(built);
  EXPECT_EQ(built.exit_code, util::ExitCode::ok);
  ASSERT_EQ(built.artifacts.size(), 1u);
  // Found under the source tree, where `cmake -B build` wrote it.
  EXPECT_EQ(built.artifacts[0].name, "build/lib/libx.so");
  EXPECT_EQ(built.artifacts[0].sass.names(), (std::vector<std::string>{"sm_90"}));
  EXPECT_EQ(built.artifacts[0].ptx.names(), (std::vector<std::string>{"compute_90"}));
  EXPECT_TRUE(fs::exists(built.artifacts[0].path)) << built.artifacts[0].path;
  EXPECT_TRUE(built.manifest.has_value());
}

// Issue 29: a source edited (a new set, newer by time), then reverted (a
// hit on the first set): the first set is current again, and the newer one
// is known as newer, which push, fetch --tier and k8s render read.
TEST_F(BuildOnHost, AnEditRevertedMakesTheFirstSetCurrentAgain) {
  const fs::path src = m_dir.path() / "edited";
  fs::copy(fs::path(ORC_SOURCE_DIR) / "tests/integration/nested-project", src, fs::copy_options::recursive);
  const fs::path kernel = src / "lib/kernel.cu";
  std::string original;
  {
    std::ifstream in(kernel);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  const app::BuildResult first = build("edited");
  ASSERT_EQ(first.status, app::BuildStatus::built) << errors(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // sets are dated in whole seconds
  std::ofstream(kernel, std::ios::app) << "// an edit\n";
  const app::BuildResult edited = build("edited");
  ASSERT_EQ(edited.status, app::BuildStatus::built) << errors(edited);
  ASSERT_NE(edited.manifest, first.manifest);
  std::ofstream(kernel, std::ios::trunc) << original;
  const app::BuildResult reverted = build("edited");
  ASSERT_EQ(reverted.status, app::BuildStatus::cached) << errors(reverted);
  EXPECT_EQ(reverted.manifest, first.manifest);

  auto store = cache::Store::open(m_dir.path() / "store");
  ASSERT_TRUE(store) << store.error().message;
  auto current = cache::current_set(*store, "edited", "tier-h");
  ASSERT_TRUE(current && current->entry) << (current ? "no set" : current.error().message);
  EXPECT_TRUE(current->recorded);
  EXPECT_EQ(current->entry->manifest, *first.manifest);
  ASSERT_TRUE(current->newer.has_value());
  EXPECT_EQ(current->newer->manifest, *edited.manifest);
  // The signed manifest records the tier it was built for (fetch without a
  // configuration judges the set against it).
  auto bytes = store->read_blob(*first.manifest);
  ASSERT_TRUE(bytes) << bytes.error().message;
  auto manifest = cache::parse_manifest(*bytes);
  ASSERT_TRUE(manifest && manifest->built_for);
  EXPECT_EQ(manifest->built_for->ptx, "highest");
  ASSERT_EQ(manifest->built_for->gpus.size(), 1u);
  EXPECT_EQ(manifest->built_for->gpus[0].name, "H100");
  EXPECT_EQ(manifest->built_for->gpus[0].cc, "9.0");
}

TEST_F(BuildOnHost, AGlobThatMissesNamesTheRootsAndTheFileItMeant) {
  const app::BuildResult missed = build("nested-typo");
  EXPECT_EQ(missed.status, app::BuildStatus::failed);
  EXPECT_EQ(missed.exit_code, util::ExitCode::check_failed) << errors(missed);
  ASSERT_EQ(missed.errors.size(), 1u) << errors(missed);
  // The build's scratch directory holds both roots: its build/ and src/.
  const std::regex expected(R"(artifact glob 'lib/libx\.so' matched no file under (/\S+)/build or \1/src )"
                            R"(\(did you mean 'build/lib/libx\.so'\?\))");
  EXPECT_TRUE(std::regex_match(missed.errors[0], expected)) << missed.errors[0];
  EXPECT_FALSE(missed.manifest.has_value());
}

std::size_t count_blobs(const fs::path& store) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(store / "blobs.v1")) n += e.is_regular_file() ? 1 : 0;
  return n;
}

void set_schema_version(const fs::path& index, const std::string& version) {
  const auto done =
      run_process({"python3", "-c",
                   "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); "
                   "db.execute(\"UPDATE meta SET value=? WHERE key='schema_version'\", (sys.argv[2],)); db.commit()",
                   index.string(), version});
  ASSERT_EQ(done.exit_code, 0) << done.output;
}

// A cache report as the command line prints it (cli renders app's reports).
struct Rendered {
  std::string out, err;
  int exit_code = 0;
};
template <typename Report>
Rendered rendered(const Report& report, cli::Format format) {
  std::ostringstream out, err;
  cli::Io io{.out = out, .err = err};
  cli::emit(io, report, format);
  return {out.str(), err.str(), static_cast<int>(io.exit_code)};
}

// Issue 11: a store `orchestrate build` filled, then its index deleted, made
// random bytes, or given a newer schema version. gc refuses (exit 2, saying
// what to run) and deletes nothing; `cache verify --rebuild-index` gives back
// the rows `cache ls` showed; gc then keeps every blob, and the next build is
// a hit. The store holds the library once: no pack beside it.
TEST_F(BuildOnHost, ADamagedIndexIsNeverCollectedAndIsRebuiltFromTheManifests) {
  ASSERT_EQ(build("nested").status, app::BuildStatus::built);
  const fs::path store = m_dir.path() / "store";
  const fs::path index = store / "index.v1.sqlite";
  const app::CacheRequest ls{.store_root = store, .json = true};
  const std::string listed = rendered(app::cache_ls(ls), cli::Format::json).out;
  const std::size_t blobs = count_blobs(store);
  EXPECT_EQ(blobs, 4u) << "the library, the build log, the manifest and its signature";
  const std::vector<std::pair<std::string, std::function<void()>>> damages = {
      {"deleted", [&] { fs::remove(index); }},
      {"random bytes",
       [&] {
         std::string bytes(fs::file_size(index), '\0');
         std::mt19937 random(11);
         for (char& c : bytes) c = static_cast<char>(random());
         std::ofstream(index, std::ios::binary | std::ios::trunc) << bytes;
       }},
      {"schema version 3", [&] { set_schema_version(index, "3"); }}};
  for (const auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    damage();
    try {
      app::cache_gc({.store_root = store});
      ADD_FAILURE() << "gc ran on an index that is " << what;
    } catch (const util::Failure& refused) {
      EXPECT_EQ(refused.code(), util::ExitCode::bad_input);
      EXPECT_NE(std::string(refused.what()).find("orchestrate cache verify --rebuild-index"), std::string::npos)
          << refused.what();
    }
    // Nor does a build start over with an empty index beside the old blobs.
    try {
      build("nested");
      ADD_FAILURE() << "build ran on an index that is " << what;
    } catch (const util::Failure& refused) {
      EXPECT_EQ(refused.code(), util::ExitCode::bad_input) << refused.what();
      EXPECT_NE(std::string(refused.what()).find("cannot open the local store"), std::string::npos) << refused.what();
    }
    EXPECT_EQ(count_blobs(store), blobs);
    EXPECT_EQ(fs::exists(index), what != "deleted") << "an index was made";
    const Rendered rebuilt = rendered(
        app::cache_verify({.store_root = store, .rebuild_index = true, .config = m_dir.path() / "orchestrate.yaml"}),
        cli::Format::text);
    EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.out << rebuilt.err;
    EXPECT_NE(rebuilt.out.find("1 artifact set(s), 1 verified, 0 left out"), std::string::npos) << rebuilt.out;
    EXPECT_EQ(rendered(app::cache_ls(ls), cli::Format::json).out, listed);
    EXPECT_EQ(rendered(app::cache_gc({.store_root = store}), cli::Format::text)
                  .out.find("removed 0 artifact set(s), 0 blob(s)"),
              0u);
    EXPECT_EQ(count_blobs(store), blobs);
  }
  EXPECT_EQ(build("nested").status, app::BuildStatus::cached);
}

// Issue 11: such a name made the store fail (exit 3, "an outside system
// failed") and `build --json` die of json type_error 316. A manifest names
// files in UTF-8, so the artifact is refused as bad input, before anything
// is stored, and the report says which, escaped.
TEST_F(BuildOnHost, AnArtifactNamedByBytesThatAreNotUtf8IsRefusedAsBadInput) {
  const app::BuildReport report = build_report("nested-bytes");
  ASSERT_EQ(report.builds.size(), 1u);
  const app::BuildResult& refused = report.builds.front();
  EXPECT_EQ(refused.status, app::BuildStatus::failed);
  EXPECT_EQ(refused.exit_code, util::ExitCode::bad_input) << errors(refused);
  ASSERT_EQ(refused.errors.size(), 1u) << errors(refused);
  EXPECT_TRUE(refused.errors[0].starts_with("artifact 'build/lib/libx\\xff.so' has a name that is not UTF-8"))
      << refused.errors[0];
  EXPECT_FALSE(refused.manifest.has_value());
  EXPECT_EQ(report.exit_code(), util::ExitCode::bad_input);
  const auto json = nlohmann::json::parse(cli::render_build_json(report));
  EXPECT_EQ(json["builds"][0]["errors"][0], refused.errors[0]);
  EXPECT_EQ(cli::render_build_text(report, false).find('\xff'), std::string::npos);
}

// A `source: {path: ...}` that is not there is the configuration's fault:
// exit 2, not 3.
TEST_F(BuildOnHost, ASourcePathThatIsNotThereIsBadInput) {
  const app::BuildResult gone = build("nested-gone");
  EXPECT_EQ(gone.status, app::BuildStatus::failed);
  EXPECT_EQ(gone.exit_code, util::ExitCode::bad_input) << errors(gone);
  ASSERT_EQ(gone.errors.size(), 1u);
  EXPECT_NE(gone.errors[0].find("no-such-source is not a directory"), std::string::npos) << gone.errors[0];
}

}  // namespace
}  // namespace orc::integration
