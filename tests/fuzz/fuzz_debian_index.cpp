// libFuzzer target for a Debian Packages index as the watcher's Debian feed
// reads it (watch/packages_index.hpp), and dpkg version strings: the input
// as xz, as gzip and as plain text, whole and in pieces whose size its
// first byte picks. The reader must return (an answer or an error) for
// every input, never throw, crash or hang; the split never changes the
// answer; only wanted packages are kept, each with a version; dpkg's order
// is antisymmetric.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "orchestrator/watch/debian.hpp"
#include "orchestrator/watch/packages_index.hpp"

using orc::fuzz::check;
using orc::watch::IndexCompression;
using orc::watch::PackagesIndexReader;

namespace {

const std::vector<std::string> k_wanted = {"a", "b", "g++", "nvidia-cuda-toolkit"};

struct Answer {
  bool ok = false;
  std::map<std::string, std::string, std::less<>> newest;
  std::uint64_t stanzas = 0;
};

Answer read(std::string_view bytes, IndexCompression compression, std::size_t piece) {
  PackagesIndexReader reader(compression, k_wanted);
  Answer out;
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    if (!reader.feed(bytes.substr(at, piece))) {
      check(!reader.error().empty());
      return out;
    }
  if (!reader.finish()) {
    check(!reader.error().empty());
    return out;
  }
  out.ok = true;
  out.newest = reader.newest();
  out.stanzas = reader.stanzas();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t piece = size == 0 ? 1 : 1 + data[0] % 64;
  for (const auto compression : {IndexCompression::xz, IndexCompression::gzip, IndexCompression::none}) {
    const Answer whole = read(text, compression, size == 0 ? 1 : size);
    const Answer pieces = read(text, compression, piece);
    check(whole.ok == pieces.ok);
    check(whole.newest == pieces.newest && whole.stanzas == pieces.stanzas);
    check(whole.newest.size() <= whole.stanzas);
    for (const auto& [name, version] : whole.newest) {
      check(std::ranges::binary_search(k_wanted, name));
      check(!version.empty());
    }
  }
  // Two halves as two versions.
  const std::string_view a = text.substr(0, size / 2), b = text.substr(size / 2);
  const auto ab = orc::watch::compare_debian_versions(a, b);
  const auto ba = orc::watch::compare_debian_versions(b, a);
  check((ab < 0) == (ba > 0) && (ab == 0) == (ba == 0));
  (void)orc::watch::cuda_release_of(text);
  return 0;
}
