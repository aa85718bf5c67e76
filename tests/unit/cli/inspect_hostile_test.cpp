// Issue 11, as `orchestrate inspect` prints it (in-process, through
// cli::run): names that are not UTF-8 or hold terminal escapes, in files and
// in package members; one unreadable file among readable ones.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/cli/cli.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"

namespace orc::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "orchestrate");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// A fatbin container with one sm_80 SASS entry.
std::string sm80_fatbin() {
  return std::string(inspect::as_text(inspect::testing::fatbin_container({inspect::testing::fatbin_entry({})})));
}

std::string ustar_member(std::string_view name, const std::string& data) {
  return std::string(inspect::as_text(inspect::testing::ustar_member(name, inspect::as_bytes(data))));
}

bool has_raw_byte(const std::string& text, char byte) { return text.find(byte) != std::string::npos; }

class InspectHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-hostile-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(m_dir / name, std::ios::binary) << bytes;
    return (m_dir / name).string();
  }
  fs::path m_dir;
};

// `inspect --json` died with json.exception.type_error.316 (exit 3, nothing
// on stdout) on a name with a byte that is not UTF-8; the table printed ESC
// sequences raw, so a file name could clear the terminal.
TEST_F(InspectHostile, FileNamesThatAreNotUtf8OrHoldEscapesArePrintedEscaped) {
  const std::string bad = write("bad\xff.fatbin", sm80_fatbin());
  const std::string esc = write("esc\x1b[2Jx.fatbin", sm80_fatbin());
  const Result j = run_cli({"inspect", "--json", bad, esc});
  ASSERT_EQ(j.code, 0) << j.err;
  const json report = json::parse(j.out);
  EXPECT_EQ(report["files"][0]["path"], m_dir.string() + "/bad\\xff.fatbin");
  EXPECT_EQ(report["files"][0]["sass"], json({"sm_80"}));
  // Valid UTF-8 stays as it is; JSON writes the ESC as \u001b itself.
  EXPECT_EQ(report["files"][1]["path"], esc);
  EXPECT_FALSE(has_raw_byte(j.out, '\x1b')) << j.out;

  const Result t = run_cli({"inspect", bad, esc});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find(m_dir.string() + "/bad\\xff.fatbin "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(m_dir.string() + "/esc\\x1b[2Jx.fatbin "), std::string::npos) << t.out;
  for (const std::string* s : {&t.out, &t.err}) {
    EXPECT_FALSE(has_raw_byte(*s, '\x1b')) << *s;
    EXPECT_FALSE(has_raw_byte(*s, '\xff')) << *s;
  }
}

// Members: their names are the package's bytes, and libarchive's messages
// about them quote them.
TEST_F(InspectHostile, PackageMemberNamesAreEscapedInTheReportAndInDamage) {
  // The last member is cut short: its damage names it.
  std::string tar = ustar_member("lib\xff.fatbin", sm80_fatbin()) + ustar_member("e\x1b[2J.fatbin", sm80_fatbin()) +
                    ustar_member("cut\xfe\x1b[1A.bin", std::string(4096, 'z'));
  tar.resize(tar.size() - 2048);
  const std::string file = write("hostile.tar", tar);

  const Result j = run_cli({"inspect", "--json", file});
  EXPECT_EQ(j.code, 2) << j.err;  // the cut member is damage
  const json report = json::parse(j.out);
  const json& members = report["files"][0]["members"];
  ASSERT_EQ(members.size(), 3u) << report.dump(2);
  EXPECT_EQ(members[0]["path"], file + "!/lib\\xff.fatbin");
  EXPECT_EQ(members[0]["sass"], json({"sm_80"}));
  EXPECT_EQ(members[1]["path"], file + "!/e\x1b[2J.fatbin");
  EXPECT_EQ(members[2]["path"], file + "!/cut\\xfe\x1b[1A.bin");
  EXPECT_NE(members[2]["damage"]["what"].get<std::string>().find("member 'cut\\xfe\x1b[1A.bin' cannot be read"),
            std::string::npos)
      << members[2]["damage"];
  EXPECT_FALSE(has_raw_byte(j.out, '\x1b'));

  const Result t = run_cli({"inspect", file});
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(t.out.find("  lib\\xff.fatbin "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("  e\\x1b[2J.fatbin "), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("member 'cut\\xfe\\x1b[1A.bin' cannot be read"), std::string::npos) << t.err;
  for (const std::string* s : {&t.out, &t.err}) {
    EXPECT_FALSE(has_raw_byte(*s, '\x1b')) << *s;
    EXPECT_FALSE(has_raw_byte(*s, '\xff')) << *s;
    EXPECT_FALSE(has_raw_byte(*s, '\xfe')) << *s;
  }
}

// One unreadable argument among several printed no report at all.
TEST_F(InspectHostile, EveryReadableFileIsReportedAndEachOtherIsAnErrorEntry) {
  const std::string ok = write("ok.fatbin", sm80_fatbin());
  const std::string missing = (m_dir / "missing.so").string();
  const std::string dir = (m_dir / "adir").string();
  fs::create_directory(dir);
  const std::string fifo = (m_dir / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string other = write("notes.txt", "hello\n");

  const Result j = run_cli({"inspect", "--json", ok, missing, dir, fifo, other});
  EXPECT_EQ(j.code, 2);
  const json files = json::parse(j.out)["files"];
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(files[0]["sass"], json({"sm_80"}));
  EXPECT_EQ(files[1], json({{"path", missing}, {"error", "cannot read: No such file or directory"}}));
  EXPECT_EQ(files[2], json({{"path", dir}, {"error", "cannot read: Is a directory"}}));
  EXPECT_EQ(files[3], json({{"path", fifo}, {"error", "cannot read: not a regular file"}}));
  EXPECT_EQ(files[4]["format"], "other");
  EXPECT_EQ(j.err, "orchestrate: error: " + missing + ": cannot read: No such file or directory\n" +
                       "orchestrate: error: " + dir + ": cannot read: Is a directory\n" +
                       "orchestrate: error: " + fifo + ": cannot read: not a regular file\n");

  const Result t = run_cli({"inspect", ok, missing, other});
  EXPECT_EQ(t.code, 2);
  EXPECT_EQ(t.err, "orchestrate: error: " + missing + ": cannot read: No such file or directory\n");
  std::vector<std::string> lines;
  for (std::istringstream in(t.out); std::getline(in, lines.emplace_back());) {
  }
  lines.pop_back();
  ASSERT_EQ(lines.size(), 3u) << t.out;  // the header, ok.fatbin, notes.txt
  EXPECT_TRUE(lines[1].starts_with(ok + " ")) << t.out;
  EXPECT_TRUE(lines[2].starts_with(other + " ")) << t.out;
}

// The exit code is the worst of all inputs: an unreadable file (2) over a
// GPU without a kernel image (1), with the verdicts still reported.
TEST_F(InspectHostile, AnUnreadableFileOutranksAFailedVerdict) {
  const std::string sm80 = write("sm80.fatbin", sm80_fatbin());
  const std::string missing = (m_dir / "missing.so").string();
  EXPECT_EQ(run_cli({"inspect", sm80, "--cc", "7.5"}).code, 1);
  const Result j = run_cli({"inspect", sm80, missing, "--cc", "7.5", "--json"});
  EXPECT_EQ(j.code, 2);
  const json files = json::parse(j.out)["files"];
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["verdicts"][0]["outcome"], "none");
  EXPECT_EQ(files[1]["error"], "cannot read: No such file or directory");
}

}  // namespace
}  // namespace orc::cli
