// Issue 11: a file truncated while `inspect` read it killed the binary with
// SIGBUS (3 runs out of 3). The real binary runs here as a child process
// with truncate_after_map preloaded, which truncates the named file right
// after the binary maps it: the reads past its new end happen on every run.
// It must exit 2 with the file's name and what happened, report the other
// files, and never die of a signal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/util/process.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"

namespace orc::inspect {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Buffer;

constexpr std::uint64_t k_cut_to = 4096;

struct Exited {
  int exit_code = -1;  // -1 when it died of a signal
  int signal = 0;
  std::string out, err;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const fs::path& p, const Buffer& data) { std::ofstream(p, std::ios::binary) << as_text(data); }

// An ELF with device code and a megabyte of other section data behind it,
// so that most of its pages lie past the 4096 bytes the shim leaves.
Buffer padded_elf() {
  const Buffer fatbin = testing::fatbin_container({testing::fatbin_entry({.kind = 2, .arch = 80})});
  return testing::build_elf(
      {.sections = {{.name = ".nv_fatbin", .data = fatbin}, {.name = ".pad", .data = Buffer(1 << 20, std::byte{1})}}});
}

class InspectBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short, as a user's paths are: inspect's table lays out at 100 columns
    // (a path too long for them turns it into a block per file).
    std::string pattern = (fs::temp_directory_path() / "orc-binary-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_dir = pattern;
    m_elf = padded_elf();
    write_all(m_dir / "libcut.so", m_elf);
    write_all(m_dir / "ok.fatbin", testing::fatbin_container({testing::fatbin_entry({.kind = 2, .arch = 90})}));
  }
  void TearDown() override { fs::remove_all(m_dir); }

  // Runs the binary with `args`; with `cut`, that file is truncated to
  // k_cut_to bytes as soon as the binary maps it.
  Exited run(const std::vector<std::string>& args, const fs::path& cut = {}) const {
    util::ProcessSpec spec{.argv = {ORC_BINARY}};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    if (!cut.empty()) {
      const char* asan = std::getenv("ASAN_OPTIONS");
      spec.env = {{"LD_PRELOAD", ORC_TRUNCATE_SHIM},
                  {"ORC_TRUNCATE_AFTER_MAP", cut.string()},
                  {"ORC_TRUNCATE_TO", std::to_string(k_cut_to)},
                  // A sanitizer build wants its runtime first among the libraries.
                  {"ASAN_OPTIONS", std::string(asan ? asan : "") + ":verify_asan_link_order=0"}};
    }
    const auto ran = util::run_process(spec);
    Exited r;
    if (!ran) {
      r.err = ran.error().message;
      return r;
    }
    if (ran->exit_code) r.exit_code = *ran->exit_code;
    if (ran->signal) r.signal = *ran->signal;
    r.out = ran->out;
    r.err = ran->err;
    return r;
  }

  std::string cut_message(const fs::path& file, std::uint64_t was) const {
    return "orchestrate: error: " + file.string() + ": changed while being read (truncated to " +
           std::to_string(k_cut_to) + " bytes, from " + std::to_string(was) + " bytes when opened)\n";
  }

  fs::path m_dir;
  Buffer m_elf;
};

TEST_F(InspectBinary, UntouchedTheFilesAreFine) {
  const Exited r = run({"inspect", (m_dir / "libcut.so").string(), (m_dir / "ok.fatbin").string()});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sm_80"), std::string::npos) << r.out;
}

TEST_F(InspectBinary, AFileTruncatedWhileReadIsAnErrorWithItsNameNotASignal) {
  const fs::path cut = m_dir / "libcut.so", ok = m_dir / "ok.fatbin";
  const Exited r = run({"inspect", cut.string(), ok.string()}, cut);
  ASSERT_EQ(fs::file_size(cut), k_cut_to);  // the shim did truncate it
  EXPECT_EQ(r.signal, 0) << "died of signal " << r.signal;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, cut_message(cut, m_elf.size()));
  // The other file is reported; the truncated one has no row.
  EXPECT_NE(r.out.find(ok.string() + " "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(cut.string()), std::string::npos) << r.out;
}

TEST_F(InspectBinary, JsonHasAnErrorEntryForTheTruncatedFile) {
  const fs::path cut = m_dir / "libcut.so", ok = m_dir / "ok.fatbin";
  const Exited r = run({"inspect", "--json", cut.string(), ok.string(), "--cc", "8.0"}, cut);
  EXPECT_EQ(r.signal, 0) << "died of signal " << r.signal;
  EXPECT_EQ(r.exit_code, 2);
  const json files = json::parse(r.out)["files"];
  ASSERT_EQ(files.size(), 2u) << r.out;
  EXPECT_EQ(files[0], json({{"path", cut.string()},
                            {"error", "changed while being read (truncated to 4096 bytes, from " +
                                          std::to_string(m_elf.size()) + " bytes when opened)"}}));
  EXPECT_EQ(files[1]["sass"], json({"sm_90"}));
}

// A package is read through libarchive from the mapping: the truncation
// lands inside libarchive's reads, and the package is the error all the same.
TEST_F(InspectBinary, APackageTruncatedWhileReadIsAnErrorToo) {
  const fs::path tar = m_dir / "release.tar";
  Buffer bytes = testing::ustar_member("lib/libcut.so", m_elf);
  bytes.resize(bytes.size() + 1024);  // the end-of-archive blocks
  write_all(tar, bytes);
  ASSERT_EQ(run({"inspect", tar.string()}).exit_code, 0);
  const Exited r = run({"inspect", tar.string()}, tar);
  EXPECT_EQ(r.signal, 0) << "died of signal " << r.signal;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, cut_message(tar, bytes.size()));
}

// The cuobjdump listing reads the same mapping: its fatal error, not a signal.
TEST_F(InspectBinary, TheListingOfATruncatedFileIsCuobjdumpsFatalError) {
  const fs::path cut = m_dir / "libcut.so";
  const Exited r = run({"inspect", "--list-elf", cut.string()}, cut);
  EXPECT_EQ(r.signal, 0) << "died of signal " << r.signal;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cuobjdump fatal   : File '" + cut.string() +
                       "' changed while being read (truncated to 4096 bytes, from " + std::to_string(m_elf.size()) +
                       " bytes when opened)\n");
}

}  // namespace
}  // namespace orc::inspect
