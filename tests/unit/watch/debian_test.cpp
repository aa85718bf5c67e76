// The image-catalog feed's pure parts: dpkg's version order, the CUDA
// release a Debian nvidia-cuda-toolkit version packages, and the archive's
// Packages index as the mirrors serve it (tests/integration/debian-archive:
// stanzas copied from Debian's bookworm and trixie indexes).
#include "orchestrator/watch/debian.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "orchestrator/watch/packages_index.hpp"

namespace orc::watch {
namespace {

std::string read_fixture(const std::string& relative) {
  std::ifstream in(std::string(ORC_SOURCE_DIR) + "/tests/integration/debian-archive/" + relative, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool less(std::string_view a, std::string_view b) { return compare_debian_versions(a, b) < 0; }

TEST(DebianVersions, FollowDpkgsOrder) {
  // Digits as numbers, not text.
  EXPECT_TRUE(less("1.2.3", "1.2.10"));
  // '~' sorts before the end: a pre-release, and a stable update's suffix.
  EXPECT_TRUE(less("1.0~rc1", "1.0"));
  EXPECT_TRUE(less("11.8.89~11.8.0-5~deb12u1", "11.8.89~11.8.0-5"));
  EXPECT_TRUE(less("1.11.1-2~deb12u1", "1.11.1-2"));
  // A binNMU (+b1) is newer; letters sort before other symbols.
  EXPECT_TRUE(less("12.4.131~12.4.1-2", "12.4.131~12.4.1-2+b1"));
  EXPECT_TRUE(less("3.11.2-1", "3.11.2-1+b1"));
  EXPECT_TRUE(less("1.0a", "1.0+"));
  EXPECT_TRUE(less("1.0", "1.0a"));
  // The epoch first: g++'s 4:12.2.0-3 is newer than any epoch-less version.
  EXPECT_TRUE(less("13.3.0-16", "4:12.2.0-3"));
  EXPECT_TRUE(less("1:0.1", "2:0.0"));
  // A missing revision is revision 0; leading zeros do not count.
  EXPECT_EQ(compare_debian_versions("1.0", "1.0-0"), std::strong_ordering::equal);
  EXPECT_EQ(compare_debian_versions("1.01", "1.1"), std::strong_ordering::equal);
  EXPECT_EQ(compare_debian_versions("4:12.2.0-3", "4:12.2.0-3"), std::strong_ordering::equal);
  EXPECT_FALSE(less("12.4.131~12.4.1-2", "12.4.131~12.4.1-2"));
  EXPECT_TRUE(less("12.4.131~12.4.1-2", "12.4.131~12.4.1-10"));
}

TEST(DebianVersions, TheCudaReleaseIsAfterTheTilde) {
  EXPECT_EQ(cuda_release_of("11.8.89~11.8.0-5~deb12u1"), util::Version::parse("11.8.0").value());
  EXPECT_EQ(cuda_release_of("12.4.131~12.4.1-2"), util::Version::parse("12.4.1").value());
  EXPECT_EQ(cuda_release_of("1:12.5.82~12.5.1-1"), util::Version::parse("12.5.1").value());
  // Without a release after '~': the upstream version's leading number.
  EXPECT_EQ(cuda_release_of("11.2.2-3+deb11u3"), util::Version::parse("11.2.2").value());
  EXPECT_FALSE(cuda_release_of("experimental-1"));
}

TEST(DebianIndex, TheMirrorsCompressedIndexesParse) {
  const auto xz = read_packages_index(read_fixture("dists/bookworm/non-free/binary-amd64/Packages.xz"),
                                      IndexCompression::xz, {"nvidia-cuda-toolkit", "g++-11"});
  ASSERT_TRUE(xz) << xz.error();
  EXPECT_EQ(xz->stanzas, 1u);
  EXPECT_EQ(xz->newest,
            (std::map<std::string, std::string, std::less<>>{{"nvidia-cuda-toolkit", "11.8.89~11.8.0-5~deb12u1"}}));

  const auto gz =
      read_packages_index(read_fixture("dists/trixie/main/binary-amd64/Packages.gz"), IndexCompression::gzip,
                          {"cmake", "g++-13", "make", "ninja-build", "python3", "nvidia-cuda-toolkit"});
  ASSERT_TRUE(gz) << gz.error();
  EXPECT_EQ(gz->stanzas, 5u);
  EXPECT_EQ(gz->newest, (std::map<std::string, std::string, std::less<>>{{"cmake", "3.31.6-2"},
                                                                         {"g++-13", "13.3.0-16"},
                                                                         {"make", "4.4.1-2"},
                                                                         {"ninja-build", "1.12.1-1"},
                                                                         {"python3", "3.13.5-1"}}));
  // An empty component (contrib holds none of these) is an empty index.
  const auto empty = read_packages_index(read_fixture("dists/trixie/contrib/binary-amd64/Packages.gz"),
                                         IndexCompression::gzip, {"cmake"});
  ASSERT_TRUE(empty) << empty.error();
  EXPECT_EQ(empty->stanzas, 0u);
  EXPECT_TRUE(empty->newest.empty());
}

TEST(DebianIndex, PlainTextPassesAndBrokenCompressionIsAnError) {
  const std::string plain =
      "Package: a\r\nVersion: 1\r\nArchitecture: amd64\r\nDescription: one\r\n two\r\nVersion-Like: 9\r\n\r\n"
      "Package: no-version\n\nVersion: 2\n\n"
      "Package: no-architecture\nVersion: 3\n\n"
      "Package: b\nArchitecture: all\nVersion: 2.0\n";
  const auto text = read_packages_index(plain, IndexCompression::none, {"a", "b", "no-version", "no-architecture"});
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(text->stanzas, 3u);
  EXPECT_EQ(text->newest, (std::map<std::string, std::string, std::less<>>{{"a", "1"}, {"b", "2.0"}}));
  // An xz stream cut short.
  const std::string xz = read_fixture("dists/bookworm/main/binary-amd64/Packages.xz");
  const auto cut = read_packages_index(std::string_view(xz).substr(0, xz.size() / 2), IndexCompression::xz, {"g++"});
  ASSERT_FALSE(cut);
  EXPECT_TRUE(cut.error().starts_with("the xz stream is cut short (it ends at byte ")) << cut.error();
  // Bytes that are not in the compression the name says.
  const auto not_xz = read_packages_index("\xfd\x37zXZ broken", IndexCompression::xz, {"g++"});
  ASSERT_FALSE(not_xz);
  EXPECT_EQ(not_xz.error(), "not xz-compressed");
  const auto not_gz = read_packages_index(xz, IndexCompression::gzip, {"g++"});
  ASSERT_FALSE(not_gz);
  EXPECT_EQ(not_gz.error(), "not gz-compressed");
}

}  // namespace
}  // namespace orc::watch
