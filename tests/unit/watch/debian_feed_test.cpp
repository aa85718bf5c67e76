// The Debian feed over a scripted transport (issue 28): the index streams
// through the reader in the pieces the transport hands on, so a 2.6 MB
// Packages.xz of 17.5M tiny stanzas is read in bounded memory (a child
// process under RLIMIT_AS), and an index that lists none of an image's
// packages is a failed poll that says what was expected.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "orchestrator/watch/debian.hpp"
#include "tests/unit/net/fake_transport.hpp"
#include "tests/unit/watch/compress.hpp"

namespace orc::watch {
namespace {

using net::testing::FakeTransport;
using net::testing::Reply;

const std::string k_mirror = "http://mirror.test/debian";
const std::string k_index = k_mirror + "/dists/trixie/main/binary-amd64/Packages";

WatchedImage trixie() {
  return WatchedImage{.name = "12.4-trixie",
                      .reference = "orchestrate/cuda:12.4-trixie",
                      .suite = "trixie",
                      .components = {"main"},
                      .packages = {"nvidia-cuda-toolkit", "g++-13"}};
}

// Serves `body` as Packages.xz in pieces of 64 KiB (as curl hands them on).
std::shared_ptr<FakeTransport> serving_xz(const std::string& body) {
  auto transport = std::make_shared<FakeTransport>();
  transport->handle_with([body](const net::Request& request) {
    if (request.url != k_index + ".xz") return Reply{.status = 404, .chunks = {"not here"}};
    Reply reply{.status = 200};
    for (std::size_t at = 0; at < body.size(); at += 64 << 10) reply.chunks.push_back(body.substr(at, 64 << 10));
    return reply;
  });
  return transport;
}

// The address space this process holds now (VmSize), in bytes.
std::uint64_t address_space_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmSize:")) return std::stoull(line.substr(7)) << 10;
  return 0;
}

// Issue 28: the text (402 MB), a vector of 17.5M stanzas and a map of every
// name were held, and the watcher ran out of memory. A child whose address
// space may grow by 128 MiB polls the feed; before, the text alone did not fit.
TEST(DebianFeedMemory, AManyStanzaIndexIsReadInBoundedMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "RLIMIT_AS cannot bound an ASan process: its shadow memory is address space";
#else
  constexpr std::uint64_t k_stanzas = 17'500'000;
  const std::string stanza = "Package: a\nVersion: 1\n\n";
  std::string piece;
  while (piece.size() + stanza.size() <= (1u << 20)) piece += stanza;
  // One xz stream of 1 MiB of stanzas, repeated: xz -d reads concatenated
  // streams as one file, and so does the reader (encoding 402 MB as one
  // stream would take the test seconds).
  const std::uint64_t per_piece = piece.size() / stanza.size();
  const std::string stream = testing::xz_of(piece);
  std::string xz;
  std::uint64_t left = k_stanzas;
  for (; left >= per_piece; left -= per_piece) xz += stream;
  std::string tail;
  for (; left > 0; --left) tail += stanza;
  xz += testing::xz_of(tail + "Package: nvidia-cuda-toolkit\nVersion: 12.4.131~12.4.1-9\nArchitecture: amd64\n");
  ASSERT_LT(xz.size(), 4u << 20);  // the was 2.6 MB
  const auto transport = serving_xz(xz);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes: 0 the offer as expected, 1 another answer, 2 out of memory, 3 setrlimit failed.
    const rlimit limit{.rlim_cur = address_space_now() + (128ull << 20), .rlim_max = RLIM_INFINITY};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(3);
    int code = 1;
    try {
      const auto offers = debian_feed(k_mirror, {trixie()}, transport)->poll();
      if (!offers) std::cerr << "poll failed: " << offers.error() << "\n";
      code = offers && offers->size() == 1 &&
                     offers->front().packages == std::vector<std::string>{"nvidia-cuda-toolkit=12.4.131~12.4.1-9"} &&
                     offers->front().missing == std::vector<std::string>{"g++-13"} &&
                     offers->front().toolkit == util::Version(std::vector<int>{12, 4, 1})
                 ? 0
                 : 1;
    } catch (const std::bad_alloc&) {
      code = 2;
    }
    // The limit must bite: half the text (402 MB) does not fit under it.
    try {
      std::vector<char> text(std::size_t{200} << 20);
      text.back() = 1;
      if (code == 0) code = 4;
    } catch (const std::bad_alloc&) {
    }
    ::_exit(code);
  }
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: another answer; 2: out of memory; 3: setrlimit failed; 4: the limit would not have bitten";
  // Figures for bench notes, not assertions.
  std::cout << "Packages.xz of " << k_stanzas + 1 << " stanzas: " << xz.size() << " bytes, read in " << took
            << " s under RLIMIT_AS of +128 MiB\n";
#endif
}

TEST(DebianFeedEmpty, AnIndexWithoutTheImagesPackagesIsAFailedPoll) {
  // An empty component: a valid index of nothing.
  auto offers = debian_feed(k_mirror, {trixie()}, serving_xz(testing::xz_of("")))->poll();
  ASSERT_FALSE(offers);
  EXPECT_EQ(offers.error(),
            "debian " + k_mirror +
                ": the indexes of trixie (main) list no package at all; expected Debian Packages indexes that hold "
                "nvidia-cuda-toolkit, g++-13: check that 'debian: mirror' names a Debian archive (the directory "
                "that holds dists/)");
  // Packages, but none of ours.
  offers = debian_feed(k_mirror, {trixie()},
                       serving_xz(testing::xz_of("Package: libfoo1\nVersion: 1\nArchitecture: amd64\n\n"
                                                 "Package: libbar1\nVersion: 2\nArchitecture: amd64\n")))
               ->poll();
  ASSERT_FALSE(offers);
  EXPECT_NE(offers.error().find(": the indexes of trixie (main) list 2 packages, none of 12.4-trixie's; expected "),
            std::string::npos)
      << offers.error();
  // One of them is enough: the rest are named as missing.
  offers = debian_feed(k_mirror, {trixie()},
                       serving_xz(testing::xz_of("Package: g++-13\nVersion: 13.3.0-16\nArchitecture: amd64\n")))
               ->poll();
  ASSERT_TRUE(offers) << offers.error();
  EXPECT_EQ(offers->front().missing, std::vector<std::string>{"nvidia-cuda-toolkit"});
}

TEST(DebianFeedEmpty, ABodyThatBreaksMidStreamNamesTheUrl) {
  std::string xz = testing::xz_of(std::string(200000, 'x') + "\n");
  xz[xz.size() / 2] = static_cast<char>(xz[xz.size() / 2] ^ 0x55);
  const auto offers = debian_feed(k_mirror, {trixie()}, serving_xz(xz))->poll();
  ASSERT_FALSE(offers);
  EXPECT_TRUE(
      offers.error().starts_with("debian " + k_mirror + ": " + k_index + ".xz: the xz data is damaged at byte "))
      << offers.error();
}

}  // namespace
}  // namespace orc::watch
