// The image-catalog feed's pure parts: dpkg's version order, the CUDA
// release a Debian nvidia-cuda-toolkit version packages, and the archive's
// Packages index as the mirrors serve it (tests/integration/debian-archive:
// stanzas copied from Debian's bookworm and trixie indexes).
#include "orchestrator/watch/debian.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

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
  const auto xz = decompress_index(read_fixture("dists/bookworm/non-free/binary-amd64/Packages.xz"));
  ASSERT_TRUE(xz) << xz.error();
  auto packages = parse_packages_index(*xz);
  ASSERT_EQ(packages.size(), 1u);
  EXPECT_EQ(packages[0].name, "nvidia-cuda-toolkit");
  EXPECT_EQ(packages[0].version, "11.8.89~11.8.0-5~deb12u1");
  EXPECT_EQ(packages[0].architecture, "amd64");

  const auto gz = decompress_index(read_fixture("dists/trixie/main/binary-amd64/Packages.gz"));
  ASSERT_TRUE(gz) << gz.error();
  packages = parse_packages_index(*gz);
  std::vector<std::string> seen;
  for (const auto& p : packages) seen.push_back(p.name + "=" + p.version);
  std::ranges::sort(seen);
  EXPECT_EQ(seen, (std::vector<std::string>{"cmake=3.31.6-2", "g++-13=13.3.0-16", "make=4.4.1-2",
                                            "ninja-build=1.12.1-1", "python3=3.13.5-1"}));
  // An empty component (contrib holds none of these) is an empty index.
  const auto empty = decompress_index(read_fixture("dists/trixie/contrib/binary-amd64/Packages.gz"));
  ASSERT_TRUE(empty) << empty.error();
  EXPECT_TRUE(parse_packages_index(*empty).empty());
}

TEST(DebianIndex, PlainTextPassesAndBrokenCompressionIsAnError) {
  const std::string plain =
      "Package: a\r\nVersion: 1\r\nDescription: one\r\n two\r\nVersion-Like: 9\r\n\r\n"
      "Package: no-version\n\nVersion: 2\n\n"
      "Package: b\nArchitecture: all\nVersion: 2.0\n";
  const auto text = decompress_index(plain);
  ASSERT_TRUE(text) << text.error();
  const auto packages = parse_packages_index(*text);
  ASSERT_EQ(packages.size(), 2u);
  EXPECT_EQ(packages[0].name, "a");
  EXPECT_EQ(packages[0].version, "1");
  EXPECT_EQ(packages[1].name, "b");
  EXPECT_EQ(packages[1].architecture, "all");
  // An xz stream cut short.
  const std::string xz = read_fixture("dists/bookworm/main/binary-amd64/Packages.xz");
  const auto cut = decompress_index(std::string_view(xz).substr(0, xz.size() / 2));
  EXPECT_FALSE(cut);
}

}  // namespace
}  // namespace orc::watch
