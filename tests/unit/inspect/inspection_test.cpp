// inspect_files as the report sees it: formats by magic, SASS/PTX sets,
// counts, digests, members of archives and packages (nested once), damage;
// on synthetic bytes and on real nvcc 13.0 output built at test time.
#include "orchestrator/inspect/inspection.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include "tests/unit/inspect/archive_writer.hpp"
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/process.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"
#include "tests/unit/inspect/nvcc_outputs.hpp"

namespace orc::inspect {
namespace {

namespace fs = std::filesystem;
using arch::ComputeCapability;
using arch::Variant;
using testing::Buffer;
using CCs = std::set<ComputeCapability>;

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("orc-inspection-" + std::to_string(::getpid()) + "-" + name);
  fs::create_directories(dir);
  return dir;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const fs::path& p, std::string_view data) { std::ofstream(p, std::ios::binary) << data; }
void write_all(const fs::path& p, const Buffer& data) { write_all(p, as_text(data)); }

// A zip or (compressed) tar in memory, written by libarchive.
std::string make_archive(int format, int filter, const std::vector<std::pair<std::string, std::string>>& members) {
  return testing::write_archive(format, filter, [&](struct archive* a) {
    for (const auto& [path, data] : members) {
      struct archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, path.c_str());
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, 0755);
      archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
      archive_write_header(a, e);
      archive_write_data(a, data.data(), data.size());
      archive_entry_free(e);
    }
  });
}

// sm_80 SASS, compute_90 PTX (zstd-compressed), sm_90a SASS.
Buffer sample_fatbin() {
  return testing::fatbin_container({
      testing::fatbin_entry({.kind = 2, .arch = 80, .flags = 0x11, .payload = Buffer(40)}),
      testing::fatbin_entry({.kind = 1,
                             .arch = 90,
                             .flags = 0x8011,
                             .payload = Buffer(24),
                             .compressed_size = 20,
                             .uncompressed_size = 100}),
      testing::fatbin_entry({.kind = 2, .arch = 90, .flags = 0x100011, .payload = Buffer(16)}),
  });
}

// ar with GNU names; members are 2-aligned.
std::string make_ar(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out = "!<arch>\n";
  for (const auto& [name, data] : members) {
    char header[61];
    std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", (name + "/").c_str(), "0", "0", "0", "644",
                  data.size());
    out += std::string(header, 60) + data;
    if (data.size() % 2) out += '\n';
  }
  return out;
}

FileReport inspect_one(const fs::path& p, InspectOptions options = {}) {
  auto reports = inspect_files({p}, options);
  EXPECT_EQ(reports.size(), 1u);
  return reports.at(0);
}

class InspectionTest : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST_F(InspectionTest, FatbinFileSetsCountsAndDigest) {
  const Buffer fat = sample_fatbin();
  write_all(m_dir / "k.fatbin", fat);
  const FileReport r = inspect_one(m_dir / "k.fatbin");
  EXPECT_EQ(r.path, (m_dir / "k.fatbin").string());
  EXPECT_EQ(r.format, "fatbin");
  EXPECT_EQ(r.size, fat.size());
  EXPECT_EQ(r.sha256, digest::sha256(fat).hex());
  EXPECT_EQ(r.sass, (CCs{{8, 0}, {9, 0, Variant::arch_specific}}));
  EXPECT_EQ(r.ptx, (CCs{{9, 0}}));
  EXPECT_EQ(r.entries, 3u);
  EXPECT_EQ(r.elf_entries, 2u);
  EXPECT_EQ(r.ptx_entries, 1u);
  EXPECT_TRUE(r.compressed);
  EXPECT_FALSE(r.damage.has_value());
  EXPECT_TRUE(r.device_code());
}

TEST_F(InspectionTest, HostElfCountsBothFatbinSections) {
  const Buffer rel = testing::fatbin_container({testing::fatbin_entry({.kind = 2, .arch = 100, .flags = 0x1200011})});
  const Buffer elf = testing::build_elf({.sections = {{.name = ".text", .data = Buffer(32)},
                                                      {.name = ".nv_fatbin", .data = sample_fatbin()},
                                                      {.name = "__nv_relfatbin", .data = rel}}});
  write_all(m_dir / "libk.so", elf);
  const FileReport r = inspect_one(m_dir / "libk.so");
  EXPECT_EQ(r.format, "elf");
  EXPECT_EQ(r.entries, 4u);
  // The relocatable section's sm_100f is named as a cubin can name it: sm_100.
  EXPECT_EQ(r.sass, (CCs{{8, 0}, {9, 0, Variant::arch_specific}, {10, 0}}));
}

TEST_F(InspectionTest, ArchiveMembersHaveTheirOwnPathSizeAndDigest) {
  const Buffer obj = testing::build_elf({.sections = {{.name = ".nv_fatbin", .data = sample_fatbin()}}});
  const std::string ar = make_ar({{"k.o", std::string(as_text(obj))}, {"host.o", "not an object"}});
  write_all(m_dir / "libk.a", ar);
  const FileReport r = inspect_one(m_dir / "libk.a");
  EXPECT_EQ(r.format, "ar");
  ASSERT_EQ(r.members.size(), 2u);
  EXPECT_EQ(r.members[0].path, (m_dir / "libk.a").string() + ":k.o");
  EXPECT_EQ(r.members[0].size, obj.size());
  EXPECT_EQ(r.members[0].sha256, digest::sha256(obj).hex());
  EXPECT_EQ(r.members[0].format, "elf");
  EXPECT_EQ(r.members[1].format, "other");
  EXPECT_FALSE(r.members[1].device_code());
  // The archive's row sums up its members.
  EXPECT_EQ(r.entries, 3u);
  EXPECT_EQ(r.ptx, (CCs{{9, 0}}));
  EXPECT_EQ(r.sha256, digest::sha256(as_bytes(ar)).hex());
}

TEST_F(InspectionTest, NestedPackagesReportDeviceCodeMembersOnly) {
  const std::string fat(as_text(sample_fatbin()));
  const std::string wheel =
      make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, {{"k/__init__.py", "x = 1\n"}, {"k/lib/k.fatbin", fat}});
  const std::string tarball = make_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD,
                                           {{"README", "hi\n"}, {"dist/k-1.0-py3-none-any.whl", wheel}});
  write_all(m_dir / "rel.tar.zst", tarball);
  const FileReport r = inspect_one(m_dir / "rel.tar.zst");
  EXPECT_EQ(r.format, "tar.zst");
  ASSERT_EQ(r.members.size(), 1u);
  const FileReport& whl = r.members[0];
  EXPECT_EQ(whl.path, (m_dir / "rel.tar.zst").string() + "!/dist/k-1.0-py3-none-any.whl");
  EXPECT_EQ(whl.format, "zip");
  EXPECT_EQ(whl.sha256, digest::sha256(as_bytes(wheel)).hex());
  ASSERT_EQ(whl.members.size(), 1u);
  EXPECT_EQ(whl.members[0].path, whl.path + "!/k/lib/k.fatbin");
  EXPECT_EQ(whl.members[0].entries, 3u);
  EXPECT_EQ(r.entries, 3u);
  EXPECT_EQ(r.sass, whl.members[0].sass);
}

TEST_F(InspectionTest, PackagesDeeperThanOneLevelAreNotOpened) {
  const std::string fat(as_text(sample_fatbin()));
  const std::string inner = make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, {{"k.fatbin", fat}});
  const std::string middle = make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, {{"inner.zip", inner}});
  write_all(m_dir / "outer.tar", make_archive(ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_NONE, {{"middle.zip", middle}}));
  const FileReport r = inspect_one(m_dir / "outer.tar");
  EXPECT_EQ(r.format, "tar");
  EXPECT_FALSE(r.damage.has_value());
  // The third level is named, so the user knows it went unread, but not opened.
  ASSERT_EQ(r.members.size(), 1u);
  ASSERT_EQ(r.members[0].members.size(), 1u);
  const FileReport& unopened = r.members[0].members[0];
  EXPECT_EQ(unopened.path, (m_dir / "outer.tar").string() + "!/middle.zip!/inner.zip");
  EXPECT_EQ(unopened.format, "package");
  EXPECT_TRUE(unopened.members.empty());
  EXPECT_EQ(r.entries, 0u);
}

TEST_F(InspectionTest, DamageKeepsWhatCameBeforeIt) {
  Buffer fat = sample_fatbin();
  const std::size_t good = fat.size();
  const Buffer junk = testing::bytes_of("JUNKJUNK");
  fat.insert(fat.end(), junk.begin(), junk.end());
  write_all(m_dir / "junk.fatbin", fat);
  const FileReport r = inspect_one(m_dir / "junk.fatbin");
  EXPECT_EQ(r.entries, 3u);
  ASSERT_TRUE(r.damage.has_value());
  EXPECT_EQ(r.damage->offset, good);
  EXPECT_FALSE(r.damage->what.empty());

  // A host ELF cut in half loses its section table: damage, no crash.
  const Buffer elf = testing::build_elf({.sections = {{.name = ".nv_fatbin", .data = sample_fatbin()}}});
  write_all(m_dir / "cut.so", std::string_view(as_text(elf)).substr(0, elf.size() / 2));
  const FileReport cut = inspect_one(m_dir / "cut.so");
  EXPECT_EQ(cut.format, "elf");
  EXPECT_TRUE(cut.damage.has_value());
}

TEST_F(InspectionTest, OtherFilesAndEmptyFilesAreNotDamage) {
  write_all(m_dir / "notes.txt", "hello\n");
  write_all(m_dir / "empty", "");
  const auto reports = inspect_files({m_dir / "notes.txt", m_dir / "empty"}, {});
  for (const auto& r : reports) {
    EXPECT_EQ(r.format, "other") << r.path;
    EXPECT_FALSE(r.damage.has_value()) << r.path;
    EXPECT_FALSE(r.device_code()) << r.path;
  }
  EXPECT_EQ(reports[1].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Issue 11: one unreadable file among several used to fail the whole call.
TEST_F(InspectionTest, UnreadableFilesAreReportedBesideTheOthers) {
  write_all(m_dir / "ok.fatbin", sample_fatbin());
  fs::create_directory(m_dir / "dir");
  const auto reports = inspect_files({m_dir / "nope1", m_dir / "ok.fatbin", m_dir / "dir"}, {});
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].path, (m_dir / "nope1").string());
  EXPECT_EQ(reports[0].error, "cannot read: No such file or directory");
  EXPECT_FALSE(reports[1].error.has_value());
  EXPECT_EQ(reports[1].format, "fatbin");
  EXPECT_EQ(reports[1].entries, 3u);
  EXPECT_EQ(reports[2].error, "cannot read: Is a directory");
  try {
    require_readable(reports);
    FAIL() << "expected util::Failure";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.code(), util::ExitCode::bad_input);
    ASSERT_EQ(f.diagnostics().size(), 2u);
    EXPECT_EQ(f.diagnostics()[0].where.file, (m_dir / "nope1").string());
    EXPECT_EQ(f.diagnostics()[1].message, "cannot read: Is a directory");
  }
  EXPECT_NO_THROW(require_readable({reports[1]}));
}

TEST_F(InspectionTest, ManyFilesInParallelKeepTheirOrder) {
  std::vector<fs::path> paths;
  for (int i = 0; i < 12; ++i) {
    const Buffer fat = testing::fatbin_container({testing::fatbin_entry({.kind = 1, .arch = 70u + i})});
    paths.push_back(m_dir / ("f" + std::to_string(i) + ".fatbin"));
    write_all(paths.back(), fat);
  }
  const auto reports = inspect_files(paths, {.threads = 4});
  ASSERT_EQ(reports.size(), paths.size());
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(reports[i].path, paths[i].string());
    EXPECT_EQ(reports[i].ptx, (CCs{{(70 + i) / 10, (70 + i) % 10}}));
    EXPECT_EQ(reports[i].sha256, digest::sha256(as_bytes(read_all(paths[i]))).hex());
  }
}

// Real nvcc 13.0 output, built once for the suite: a shared object (sm_80
// SASS + compute_90 PTX), an object with sm_90a SASS in a static library, and
// the shared object packed into a wheel inside a tar.zst.
class NvccFixtures : public ::testing::Test {
 protected:
  static constexpr const char* k_nvcc = "/usr/local/cuda/bin/nvcc";

  static void SetUpTestSuite() {
    if (!fs::exists(k_nvcc)) return;
    s_dir = temp_dir("nvcc");
    write_all(s_dir / "k.cu",
              "__global__ void k(int* p) { *p = 42; }\n"
              "extern \"C\" void launch(int* p) { k<<<1, 1>>>(p); }\n");
    const std::string d = s_dir.string();
    const std::string cmd =
        "cd '" + d + "' && " + k_nvcc +
        " -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 -Xcompiler -fPIC -shared"
        " -o libk.so k.cu > build.log 2>&1 && " +
        k_nvcc +
        " -gencode arch=compute_90a,code=sm_90a -c -o k.o k.cu >> build.log 2>&1 && ar rcs libk.a k.o >> build.log "
        "2>&1";
    const auto ran = util::run_process({.argv = {"sh", "-c", cmd}});
    s_built = ran && ran->ok();
    if (!s_built) return;
    const std::string so = read_all(s_dir / "libk.so");
    const std::string wheel =
        make_archive(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, {{"k/__init__.py", ""}, {"k/lib/libk.so", so}});
    write_all(s_dir / "k-1.0-py3-none-any.whl", wheel);
    write_all(s_dir / "rel.tar.zst", make_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_ZSTD,
                                                  {{"dist/k-1.0-py3-none-any.whl", wheel}}));
    write_all(s_dir / "cut.so", std::string_view(so).substr(0, so.size() / 3));
  }
  static void TearDownTestSuite() {
    if (!s_dir.empty()) fs::remove_all(s_dir);
  }
  void SetUp() override {
    if (!fs::exists(k_nvcc)) GTEST_SKIP() << k_nvcc << " is missing: nvcc 13.0 fixtures cannot be built";
    ASSERT_TRUE(s_built) << "nvcc failed; see " << (s_dir / "build.log") << ":\n" << read_all(s_dir / "build.log");
  }

  static inline fs::path s_dir;
  static inline bool s_built = false;
};

TEST_F(NvccFixtures, SharedObject) {
  const FileReport r = inspect_one(s_dir / "libk.so");
  EXPECT_EQ(r.format, "elf");
  EXPECT_EQ(r.sass, (CCs{{8, 0}}));
  EXPECT_EQ(r.ptx, (CCs{{9, 0}}));
  // k.cu's cubin and the nvlink dlink image (cuobjdump's libk.1/libk.2.sm_80.cubin).
  EXPECT_GE(r.elf_entries, 1u);
  EXPECT_EQ(r.ptx_entries, 1u);
  EXPECT_FALSE(r.damage.has_value()) << r.damage->what;
  EXPECT_EQ(r.sha256, digest::sha256(as_bytes(read_all(s_dir / "libk.so"))).hex());
}

TEST_F(NvccFixtures, StaticLibrary) {
  const FileReport r = inspect_one(s_dir / "libk.a");
  EXPECT_EQ(r.format, "ar");
  ASSERT_EQ(r.members.size(), 1u);
  EXPECT_EQ(r.members[0].path, (s_dir / "libk.a").string() + ":k.o");
  EXPECT_EQ(r.members[0].sass, (CCs{{9, 0, Variant::arch_specific}}));
  EXPECT_TRUE(r.members[0].ptx.empty());
}

TEST_F(NvccFixtures, WheelAndWheelInsideTarZst) {
  const FileReport whl = inspect_one(s_dir / "k-1.0-py3-none-any.whl");
  EXPECT_EQ(whl.format, "zip");
  ASSERT_EQ(whl.members.size(), 1u);
  EXPECT_EQ(whl.members[0].path, (s_dir / "k-1.0-py3-none-any.whl").string() + "!/k/lib/libk.so");
  EXPECT_EQ(whl.members[0].sha256, digest::sha256(as_bytes(read_all(s_dir / "libk.so"))).hex());

  const FileReport tar = inspect_one(s_dir / "rel.tar.zst");
  EXPECT_EQ(tar.format, "tar.zst");
  ASSERT_EQ(tar.members.size(), 1u);
  ASSERT_EQ(tar.members[0].members.size(), 1u);
  const FileReport& so = tar.members[0].members[0];
  EXPECT_EQ(so.path, (s_dir / "rel.tar.zst").string() + "!/dist/k-1.0-py3-none-any.whl!/k/lib/libk.so");
  EXPECT_EQ(so.sass, (CCs{{8, 0}}));
  EXPECT_EQ(so.ptx, (CCs{{9, 0}}));
  EXPECT_EQ(tar.sass, so.sass);
}

// The 'a' and 'f' variants as the report names them: a cubin keeps 'a' and
// cannot say 'f'; PTX keeps both (fatbin-format.md 2.5, 3.5).
TEST(NvccOutputs, VariantsAndCompression) {
  ORC_NVCC_OUTPUT(multi, "multi.fatbin");
  const FileReport r = inspect_one(multi);
  EXPECT_EQ(r.sass, (CCs{{7, 5}, {9, 0, Variant::arch_specific}, {10, 0}, {12, 0}}));
  EXPECT_EQ(r.ptx, (CCs{{9, 0, Variant::arch_specific}, {10, 0, Variant::family}, {12, 0}}));
  EXPECT_EQ(r.entries, 7u);
  EXPECT_TRUE(r.compressed);  // nvcc 13 compresses PTX by default
  ORC_NVCC_OUTPUT(plain, "nocompress.fatbin");
  EXPECT_FALSE(inspect_one(plain).compressed);
}

TEST_F(NvccFixtures, TruncatedSharedObjectIsDamageNotACrash) {
  const FileReport r = inspect_one(s_dir / "cut.so");
  EXPECT_TRUE(r.damage.has_value());
}

// Issue 11: 14,000 nested ar archives overflowed the stack. Nesting stops at
// 8 levels with damage that says so, and what came before is reported.
TEST_F(InspectionTest, ArchivesInsideArchivesStopAtEightLevels) {
  const Buffer obj = testing::build_elf({.sections = {{.name = ".nv_fatbin", .data = sample_fatbin()}}});
  std::string nested = make_ar({{"k.o", std::string(as_text(obj))}});
  for (int i = 0; i < 2000; ++i) nested = make_ar({{"n.a", nested}});
  write_all(m_dir / "deep.a", nested);
  const FileReport r = inspect_one(m_dir / "deep.a");
  EXPECT_EQ(r.format, "ar");
  const FileReport* at = &r;
  int levels = 1;
  while (!at->members.empty()) at = &at->members[0], ++levels;
  EXPECT_EQ(levels, 9);  // the top archive, seven opened inside it, and the one refused
  ASSERT_TRUE(at->damage);
  EXPECT_EQ(at->damage->what, "ar archive nested 9 levels deep inside ar archives (at most 8 are opened)");
  EXPECT_FALSE(r.device_code());
}

// The heap this process holds now (VmData: private writable memory), bytes.
std::uint64_t heap_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmData:")) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

// A zip written in 1 MiB chunks: an ELF followed by `padding` zero bytes,
// and a member of `padding` zeros alone. Returns the ELF member's SHA-256.
std::string write_big_wheel(const fs::path& path, Bytes elf, std::uint64_t padding) {
  struct archive* a = archive_write_new();
  archive_write_set_format_zip(a);
  archive_write_open_filename(a, path.c_str());
  const Buffer zeros(1 << 20);
  digest::Sha256 elf_hash;
  const auto add = [&](const char* name, Bytes head, digest::Sha256* hash) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(head.size() + padding));
    archive_write_header(a, e);
    archive_write_data(a, head.data(), head.size());
    if (hash) hash->update(head);
    for (std::uint64_t left = padding; left > 0; left -= std::min<std::uint64_t>(left, zeros.size())) {
      const Bytes chunk = Bytes(zeros).first(std::min<std::uint64_t>(left, zeros.size()));
      archive_write_data(a, chunk.data(), chunk.size());
      if (hash) hash->update(chunk);
    }
    archive_entry_free(e);
  };
  add("pkg/lib/libbig.so", elf, &elf_hash);
  add("pkg/data/zeros.bin", {}, nullptr);
  archive_write_close(a);
  archive_write_free(a);
  return elf_hash.digest().hex();
}

// Issue 11: a 2 GiB member of a 9 MB wheel made inspect hold it twice over
// (4.2 GB). A child process whose heap may grow by 96 MiB inspects a wheel
// with two 256 MiB members, an ELF padded with zeros and a run of zeros:
// the ELF goes through a temporary file and is reported in full, the zeros
// are read through and dropped. Before, the 256 MiB buffer did not fit.
TEST_F(InspectionTest, MembersLargerThanTheHeapMayGrowAreInspected) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "RLIMIT_DATA cannot bound an ASan process: its shadow memory counts as data";
#else
  const Buffer elf = testing::build_elf({.sections = {{.name = ".nv_fatbin", .data = sample_fatbin()}}});
  const std::uint64_t padding = 256ull << 20;
  const fs::path wheel = m_dir / "big-1.0-py3-none-any.whl";
  const std::string elf_sha = write_big_wheel(wheel, elf, padding);
  ASSERT_LT(fs::file_size(wheel), 4u << 20);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes: 0 the report as expected, 1 another report, 2 out of memory.
    const rlimit limit{.rlim_cur = heap_now() + (96ull << 20), .rlim_max = RLIM_INFINITY};
    if (::setrlimit(RLIMIT_DATA, &limit) != 0) ::_exit(3);
    int code = 1;
    try {
      const auto reports = inspect_files({wheel}, {.threads = 1});
      const FileReport& r = reports.at(0);
      const bool as_expected = r.format == "zip" && !r.damage && r.members.size() == 1 &&
                               r.members[0].path == wheel.string() + "!/pkg/lib/libbig.so" &&
                               r.members[0].format == "elf" && r.members[0].size == elf.size() + padding &&
                               r.members[0].sha256 == elf_sha && r.members[0].entries == 3 &&
                               r.members[0].sass == CCs{{8, 0}, {9, 0, Variant::arch_specific}};
      code = as_expected ? 0 : 1;
    } catch (const std::bad_alloc&) {
      code = 2;
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a report other than expected; 2: out of memory; 3: setrlimit failed";
#endif
}

// Issue 11: `inspect FIFO` waited for a writer forever.
TEST_F(InspectionTest, AFifoIsRefusedAtOnceNotReadFrom) {
  const fs::path fifo = m_dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto reports = inspect_files({fifo}, {});
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].error, "cannot read: not a regular file");
}

}  // namespace
}  // namespace orc::inspect
