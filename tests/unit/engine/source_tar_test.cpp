// Source snapshots as tars: the same tree makes the same bytes whatever its
// timestamps, .git is left out, and what unpacks is the tree (modes by the
// owner's execute bit, links as links, empty directories kept); image
// archives taken apart entry by entry with their digests.
#include "orchestrator/engine/source_tar.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/engine/archive.hpp"
#include "orchestrator/engine/image_spool.hpp"

namespace orc::engine {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SourceTar : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/orc-source-tar-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    m_dir = dir;
    const fs::path tree = m_dir / "tree";
    fs::create_directories(tree / "src" / "empty");
    fs::create_directories(tree / ".git" / "objects");
    fs::create_directories(tree / "sub" / ".git");
    std::ofstream(tree / "CMakeLists.txt") << "project(x)\n";
    std::ofstream(tree / "src" / "k.cu") << "__global__ void k() {}\n";
    std::ofstream(tree / "run.sh") << "#!/bin/sh\n";
    fs::permissions(tree / "run.sh", fs::perms::owner_all | fs::perms::group_read);
    fs::permissions(tree / "CMakeLists.txt", fs::perms::owner_read | fs::perms::owner_write);
    std::ofstream(tree / ".git" / "HEAD") << "ref: refs/heads/main\n";
    std::ofstream(tree / "sub" / ".git" / "config") << "[core]\n";
    fs::create_symlink("src/k.cu", tree / "link.cu");
  }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST_F(SourceTar, TheSameTreeMakesTheSameBytesWhateverItsTimes) {
  ASSERT_TRUE(write_source_tar(m_dir / "tree", m_dir / "a.tar"));
  fs::last_write_time(m_dir / "tree" / "src" / "k.cu", fs::file_time_type::clock::now() - std::chrono::hours(30));
  const auto entries = write_source_tar(m_dir / "tree", m_dir / "b.tar");
  ASSERT_TRUE(entries);
  // CMakeLists.txt link.cu run.sh src src/empty src/k.cu sub: no .git.
  EXPECT_EQ(*entries, 7u);
  EXPECT_EQ(slurp(m_dir / "a.tar"), slurp(m_dir / "b.tar"));
  std::ofstream(m_dir / "tree" / "src" / "k.cu", std::ios::app) << "// changed\n";
  ASSERT_TRUE(write_source_tar(m_dir / "tree", m_dir / "c.tar"));
  EXPECT_NE(slurp(m_dir / "a.tar"), slurp(m_dir / "c.tar"));
}

TEST_F(SourceTar, UnpacksToTheTreeWithoutGit) {
  ASSERT_TRUE(write_source_tar(m_dir / "tree", m_dir / "a.tar"));
  ASSERT_TRUE(extract_tar(m_dir / "a.tar", m_dir / "out"));
  const fs::path out = m_dir / "out";
  EXPECT_EQ(slurp(out / "src" / "k.cu"), "__global__ void k() {}\n");
  EXPECT_TRUE(fs::is_directory(out / "src" / "empty"));
  EXPECT_TRUE(fs::is_symlink(out / "link.cu"));
  EXPECT_EQ(fs::read_symlink(out / "link.cu"), "src/k.cu");
  EXPECT_FALSE(fs::exists(out / ".git"));
  EXPECT_FALSE(fs::exists(out / "sub" / ".git"));
  EXPECT_TRUE(fs::is_directory(out / "sub"));
  EXPECT_NE(fs::status(out / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_EQ(fs::status(out / "CMakeLists.txt").permissions() & fs::perms::owner_exec, fs::perms::none);
}

TEST_F(SourceTar, AnImageArchiveComesApartWithItsDigests) {
  // A tar standing for `docker save`'s: its entries spooled, hashed, named.
  fs::create_directories(m_dir / "save" / "abc");
  std::ofstream(m_dir / "save" / "abc" / "layer.tar") << "layer bytes";
  std::ofstream(m_dir / "save" / "manifest.json") << R"([{"Config":"c.json","Layers":["abc/layer.tar"]}])";
  ASSERT_TRUE(write_context_tar(m_dir / "save", m_dir / "save.tar"));
  std::ifstream in(m_dir / "save.tar", std::ios::binary);
  const ArchiveSource source = [&](std::span<std::byte> out) -> std::expected<std::size_t, std::string> {
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    return static_cast<std::size_t>(in.gcount());
  };
  const auto spooled = spool_image_archive(source, m_dir / "spool");
  ASSERT_TRUE(spooled) << spooled.error().message;
  ASSERT_EQ(spooled->size(), 2u);  // directories are not spooled
  EXPECT_EQ((*spooled)[0].name, "abc/layer.tar");
  EXPECT_EQ((*spooled)[0].digest, digest::sha256(std::string_view("layer bytes")));
  EXPECT_EQ((*spooled)[0].size, 11u);
  EXPECT_EQ(slurp((*spooled)[0].path), "layer bytes");
  EXPECT_EQ((*spooled)[1].name, "manifest.json");
  // More entries than allowed: refused.
  in.clear();
  in.seekg(0);
  EXPECT_FALSE(spool_image_archive(source, m_dir / "spool2", 1));
}

}  // namespace
}  // namespace orc::engine
