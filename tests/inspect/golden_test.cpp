// Our listing against real cuobjdump output, byte for byte: the recorded
// goldens (tests/inspect/golden/<toolkit>/, made by
// fixtures/record-goldens.sh), and, where the tool is on this machine, a live
// cuobjdump run over freshly built fixtures.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "tests/inspect/fixtures.hpp"

namespace orc::inspect_test {
namespace {

// Fixtures whose entry headers were patched to disagree with their
// compressed cubins (fatbin-format.md A.2 szx): only the exact (decompressing)
// listing names them as cuobjdump does; the default trusts the header.
const std::set<std::string, std::less<>> k_header_disagrees = {"szx.fatbin"};

// Where an older cuobjdump does what later ones do not and we follow the
// later ones: its output is changed the documented way before comparing, so
// the rest of the listing is still held to it byte for byte.
struct KnownDifference {
  std::string_view toolkit;
  std::string_view fixture;
  std::string_view why;
  void (*adjust)(Listing& theirs, const fs::path& input);
};
const KnownDifference k_known_differences[] = {
    {"11.8", "oldd.o", "cuobjdump 11.8 skips LTO-IR entries silently; 12.4 and 13.0 warn once per entry",
     [](Listing& theirs, const fs::path& input) {
       theirs.err = "cuobjdump warning : Can't deobfuscate entry '" + input.string() + "' without obfuscation key\n" +
                    theirs.err;
     }},
};

void adjust_for_known_differences(std::string_view toolkit, const fs::path& input, Listing& theirs) {
  for (const KnownDifference& d : k_known_differences) {
    if (d.toolkit != toolkit || input.filename() != d.fixture) continue;
    d.adjust(theirs, input);
    std::cout << "[ adjusted ] cuobjdump " << toolkit << " on " << d.fixture << ": " << d.why << "\n";
  }
}

std::string record_hint(std::string_view toolkit) {
  return "record them on a host with CUDA " + std::string(toolkit) +
         ": tests/inspect/fixtures/record-goldens.sh /usr/local/cuda/bin/cuobjdump tests/inspect/golden "
         "/usr/local/cuda/bin/nvcc";
}

void compare_with_goldens(std::string_view toolkit) {
  const fs::path goldens = golden_dir() / toolkit;
  if (!fs::is_directory(goldens))
    GTEST_SKIP() << "no cuobjdump " << toolkit << " goldens: " << goldens << " is missing; " << record_hint(toolkit);
  const FixtureSet& set = fixture_set(toolkit);
  ASSERT_EQ(set.build_error, "");
  if (set.dir.empty()) GTEST_SKIP() << set.missing;

  // Every golden names a fixture that was built, and every fixture has one
  // per mode: a fixture added without goldens is not silently untested.
  const std::vector<std::string> files = set.files();
  const std::set<std::string, std::less<>> built(files.begin(), files.end());
  for (const auto& entry : fs::directory_iterator(goldens)) {
    const std::string name = entry.path().filename().string();
    if (name == "RECORDED_WITH") continue;
    bool known = false;
    for (const Mode& mode : modes()) {
      const std::string suffix = "." + std::string(mode.name) + ".txt";
      if (name.ends_with(suffix) && built.contains(name.substr(0, name.size() - suffix.size()))) known = true;
    }
    EXPECT_TRUE(known) << "golden " << name << " names no fixture that make-fixtures.sh built";
  }

  int compared = 0;
  for (const std::string& fixture : files) {
    for (const Mode& mode : modes()) {
      SCOPED_TRACE(fixture + " (" + std::string(mode.name) + ")");
      const fs::path golden = goldens / (fixture + "." + std::string(mode.name) + ".txt");
      auto expected = read_golden(golden, set.dir);
      if (!expected) {
        ADD_FAILURE() << "no readable golden " << golden << "; " << record_hint(toolkit);
        continue;
      }
      adjust_for_known_differences(toolkit, set.dir / fixture, *expected);
      EXPECT_EQ(describe(list(set.dir / fixture, mode.options)), describe(*expected));
      inspect::ListOptions header_only = mode.options;
      header_only.exact = false;
      if (!k_header_disagrees.contains(fixture)) {
        EXPECT_EQ(describe(list(set.dir / fixture, header_only)), describe(*expected)) << "header-based listing";
      }
      ++compared;
    }
  }
  std::cout << "[ compared ] " << compared << " listings of " << files.size() << " fixtures with the cuobjdump "
            << toolkit << " goldens\n";
}

TEST(Golden, Cuda11_8) { compare_with_goldens("11.8"); }
TEST(Golden, Cuda12_4) { compare_with_goldens("12.4"); }
TEST(Golden, Cuda13_0) { compare_with_goldens("13.0"); }
TEST(Golden, MixedGenerations) { compare_with_goldens("mixed"); }

TEST(Golden, HeaderListingTrustsThePatchedHeaderWhereExactReadsTheCubin) {
  const FixtureSet& set = fixture_set("13.0");
  if (set.dir.empty()) GTEST_SKIP() << set.missing << set.build_error;
  const fs::path szx = set.dir / "szx.fatbin";
  EXPECT_EQ(list(szx, {.elf = true, .exact = true}).out, "ELF file    1: szx.1.sm_80.cubin\n");
  EXPECT_EQ(list(szx, {.elf = true}).out, "ELF file    1: szx.1.sm_86.cubin\n");
}

void compare_live(std::string_view toolkit) {
  const FixtureSet& set = fixture_set(toolkit);
  ASSERT_EQ(set.build_error, "");
  if (set.dir.empty()) GTEST_SKIP() << set.missing;
  if (set.cuobjdump.empty()) GTEST_SKIP() << "no cuobjdump to compare the " << toolkit << " fixtures with live";
  int compared = 0;
  for (const std::string& fixture : set.files()) {
    for (const Mode& mode : modes()) {
      SCOPED_TRACE(fixture + " (" + std::string(mode.name) + ")");
      Listing theirs = run_cuobjdump(set.cuobjdump, mode.flags, set.dir / fixture);
      adjust_for_known_differences(toolkit, set.dir / fixture, theirs);
      EXPECT_EQ(describe(list(set.dir / fixture, mode.options)), describe(theirs));
      ++compared;
    }
  }
  std::cout << "[ compared ] " << compared << " listings with live " << set.cuobjdump.string() << "\n";
}

TEST(Live, Cuda11_8) { compare_live("11.8"); }
TEST(Live, Cuda12_4) { compare_live("12.4"); }
TEST(Live, Cuda13_0) { compare_live("13.0"); }
TEST(Live, MixedGenerations) { compare_live("mixed"); }

// A relative, unnormalised path: 12.4 (like 13.0) prints the current
// directory joined to it, exactly; 11.8 printed it as given. We follow 12.4.
TEST(Live, RelativePathsInMessagesFollowCuobjdump12) {
  const FixtureSet& set = fixture_set("12.4");
  if (set.dir.empty() || set.cuobjdump.empty()) GTEST_SKIP() << "needs the 12.4 fixtures and cuobjdump 12.4";
  const std::string relative = "./../" + set.dir.filename().string() + "/mid2.o";
  const Listing theirs = run_cuobjdump(set.cuobjdump, {"-lelf", "-lptx"}, relative, set.dir);
  const fs::path cwd = fs::current_path();
  fs::current_path(set.dir);
  const Listing ours = list(relative, {.elf = true, .ptx = true, .exact = true});
  fs::current_path(cwd);
  EXPECT_EQ(describe(ours), describe(theirs));
  EXPECT_NE(ours.err.find("'" + set.dir.string() + "/" + relative + "'"), std::string::npos) << ours.err;

  const FixtureSet& old_set = fixture_set("11.8");
  if (old_set.dir.empty() || old_set.cuobjdump.empty()) return;
  const Listing old = run_cuobjdump(old_set.cuobjdump, {"-lptx"}, "./old2.o", old_set.dir);
  EXPECT_EQ(old.err,
            "cuobjdump info    : No PTX file found to extract from './old2.o'. You may try with -all option.\n")
      << "cuobjdump 11.8 changed how it prints relative paths";
}

}  // namespace
}  // namespace orc::inspect_test
