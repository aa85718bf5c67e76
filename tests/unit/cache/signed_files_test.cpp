// A set's layer against its signed manifest's modes: a pack entry whose mode
// the signature does not cover is refused, nothing is left of the unpack,
// and a manifest of before modes were signed gets 0755 or 0644.
#include "orchestrator/cache/signed_files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "orchestrator/cache/pack.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "raw_tar.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;
using testing::RawEntry;
using testing::write_tar;

std::string sha256_of(std::string_view s) { return digest::sha256(std::as_bytes(std::span(s.data(), s.size()))).hex(); }

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

Manifest manifest_of(std::vector<std::pair<std::string, std::optional<unsigned>>> files) {
  Manifest m;
  for (auto& [path, mode] : files)
    m.files.push_back({.path = path, .sha256 = sha256_of(path), .size = path.size(), .mode = mode});
  return m;
}

TEST(FileModes, LandingModes) {
  const ManifestFile signed_0600{.path = "key", .mode = 0600u};
  EXPECT_EQ(landing_mode(signed_0600, 0777), 0600u);
  // Before modes were signed: the owner's x bit decides, nothing else.
  const ManifestFile old{.path = "old"};
  EXPECT_EQ(landing_mode(old, 0777), 0755u);
  EXPECT_EQ(landing_mode(old, 04755), 0755u);
  EXPECT_EQ(landing_mode(old, 0666), 0644u);
  EXPECT_EQ(landing_mode(old, 0600), 0644u);
  EXPECT_EQ(mode_problem(old, 0777), "");
  EXPECT_EQ(mode_problem(signed_0600, 0600), "");
  EXPECT_EQ(mode_problem(signed_0600, 0644), "'key' has mode 0644 in the layer; the signed manifest says 0600");
  const ManifestFile tool{.path = "bin/tool", .mode = 0755u};
  EXPECT_EQ(mode_problem(tool, 04755), "'bin/tool' has mode 4755 in the layer; the signed manifest says 0755");
}

TEST(FileModes, AdmitChecksNameSizeAndMode) {
  const Manifest m = manifest_of({{"bin/tool", 0755u}, {"lib/a.so", 0644u}, {"old", std::nullopt}});
  const SignedFiles files(m);
  EXPECT_EQ(files.total_size(), 8u + 8u + 3u);
  EXPECT_EQ(files.admit("bin/tool", 8, 0755), 0755u);
  EXPECT_EQ(files.admit("lib/a.so", 8, 0777).error().message,
            "'lib/a.so' has mode 0777 in the layer; the signed manifest says 0644");
  EXPECT_EQ(files.admit("lib/a.so", 9, 0644).error().message, "'lib/a.so' holds 9 bytes; the signed manifest says 8");
  EXPECT_EQ(files.admit("extra", 3, 0644).error().message, "'extra' is not a file of the signed manifest");
  EXPECT_EQ(files.admit("old", 3, 0777), 0755u);
  EXPECT_EQ(files.admit("old", 3, 0666), 0644u);
}

// The one check of written files against the manifest that fetch and pull
// word each in their own way: in the manifest's order, missing or differing.
TEST(FileModes, CheckSaysWhichFilesAreMissingOrDifferInTheManifestsOrder) {
  const Manifest m = manifest_of({{"a", 0644u}, {"b", 0644u}, {"c", 0644u}});
  const SignedFiles files(m);
  const std::vector<UnpackedFile> right{{.name = "c", .size = 1, .sha256 = sha256_of("c")},
                                        {.name = "a", .size = 1, .sha256 = sha256_of("a")},
                                        {.name = "b", .size = 1, .sha256 = sha256_of("b")}};
  EXPECT_TRUE(files.check(right).ok());
  const std::vector<UnpackedFile> wrong{{.name = "c", .size = 1, .sha256 = sha256_of("x")},
                                        {.name = "b", .size = 2, .sha256 = sha256_of("b")}};
  const SignedFiles::Check check = files.check(wrong);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.written, 2u);
  EXPECT_EQ(check.named, 3u);
  ASSERT_EQ(check.mismatches.size(), 3u);
  EXPECT_EQ(check.mismatches[0].expected->path, "a");
  EXPECT_EQ(check.mismatches[0].written, nullptr);
  EXPECT_EQ(check.mismatches[1].written->size, 2u);
  EXPECT_EQ(check.mismatches[2].written->sha256, sha256_of("x"));
}

class SwappedLayer : public testing::TempDirTest {
 protected:
  // Unpacks `entries` as a fetch does: the store's tree and DIR from one
  // pass, only what `manifest` admits.
  std::expected<std::vector<UnpackedFile>, Error> fetch(const std::vector<RawEntry>& entries,
                                                        const Manifest& manifest) {
    write_tar(m_dir / "layer.tar.zst", entries);
    const SignedFiles files(manifest);
    return unpack(m_dir / "layer.tar.zst", m_dir / "staging",
                  {.sync = false,
                   .hash = true,
                   .mirror = m_dir / "DIR",
                   .max_bytes = files.total_size(),
                   .admit = [&](std::string_view name, std::uint64_t size, unsigned mode) {
                     return files.admit(name, size, mode);
                   }});
  }
  std::vector<std::string> left() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(m_dir))
      if (e.path().filename() != "layer.tar.zst") out.push_back(e.path().filename());
    return out;
  }
};

// The layer says 0777 where the signed manifest says 0644: refused at the
// entry's header, before any byte is written, and neither tree appears.
TEST_F(SwappedLayer, AModeTheSignatureDoesNotCoverIsRefused) {
  const Manifest m = manifest_of({{"bin/tool", 0755u}, {"lib/a.so", 0644u}});
  const auto got = fetch(
      {{.name = "bin/tool", .data = "bin/tool", .perm = 0755}, {.name = "lib/a.so", .data = "lib/a.so", .perm = 0777}},
      m);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().kind, ErrorKind::invalid);
  EXPECT_EQ(got.error().message,
            "refused archive entry 'lib/a.so': 'lib/a.so' has mode 0777 in the layer; the signed manifest says 0644");
  EXPECT_TRUE(left().empty()) << left().front();
  // setuid is a mode too.
  const auto setuid =
      fetch({{.name = "bin/tool", .data = "bin/tool", .perm = 04755}}, manifest_of({{"bin/tool", 0755u}}));
  ASSERT_FALSE(setuid);
  EXPECT_NE(setuid.error().message.find("has mode 4755 in the layer"), std::string::npos) << setuid.error().message;
  EXPECT_TRUE(left().empty()) << left().front();
}

TEST_F(SwappedLayer, TheSignedModesLandInBothTrees) {
  const Manifest m = manifest_of({{"bin/tool", 0755u}, {"lib/a.so", 0644u}, {"lib/shared", 0664u}});
  const auto got = fetch({{.name = "bin/tool", .data = "bin/tool", .perm = 0755},
                          {.name = "lib/a.so", .data = "lib/a.so", .perm = 0644},
                          {.name = "lib/shared", .data = "lib/shared", .perm = 0664}},
                         m);
  ASSERT_TRUE(got) << got.error().message;
  for (const char* tree : {"staging", "DIR"}) {
    EXPECT_EQ(mode_of(m_dir / tree / "bin/tool"), 0755u) << tree;
    EXPECT_EQ(mode_of(m_dir / tree / "lib/a.so"), 0644u) << tree;
    EXPECT_EQ(mode_of(m_dir / tree / "lib/shared"), 0664u) << tree;  // the manifest says so
  }
}

// A manifest of before modes were signed still unpacks; its files land
// 0755 or 0644, whatever the layer says.
TEST_F(SwappedLayer, AManifestWithoutModesGetsOwnerExecOrNot) {
  const Manifest m = manifest_of({{"bin/tool", std::nullopt}, {"lib/a.so", std::nullopt}, {"lib/b.so", std::nullopt}});
  const auto got = fetch({{.name = "bin/tool", .data = "bin/tool", .perm = 04777},
                          {.name = "lib/a.so", .data = "lib/a.so", .perm = 0666},
                          {.name = "lib/b.so", .data = "lib/b.so", .perm = 0600}},
                         m);
  ASSERT_TRUE(got) << got.error().message;
  for (const char* tree : {"staging", "DIR"}) {
    EXPECT_EQ(mode_of(m_dir / tree / "bin/tool"), 0755u) << tree;
    EXPECT_EQ(mode_of(m_dir / tree / "lib/a.so"), 0644u) << tree;
    EXPECT_EQ(mode_of(m_dir / tree / "lib/b.so"), 0644u) << tree;
  }
  EXPECT_EQ((*got)[0].mode, 0755u);
}

}  // namespace
}  // namespace orc::cache
