// libFuzzer target for container images read as streams (issue 16): the
// input as one layer of an image (ImageScanner: a tar, compressed or not,
// read through a pull callback in odd-sized pieces, then the layers merged
// and the bill of materials made from what survived), and the input as an
// image archive the way the Engine API's export writes one
// (scan_image_archive: manifest.json, OCI index, nested layer tars).
// Whatever the bytes, a scan ends in content or in an explained error;
// refused names never reach the content.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "orchestrator/inspect/bom.hpp"
#include "orchestrator/inspect/image.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using orc::fuzz::check;
using namespace orc::inspect;

// Pieces of 1, 7, 512, 4093 bytes in turn: the walk must not assume a read
// fills its buffer or ends on a block boundary.
StreamRead pieces(std::span<const std::uint8_t> data) {
  return [data, at = std::size_t{0},
          turn = std::size_t{0}](std::span<std::byte> buffer) mutable -> std::expected<std::size_t, std::string> {
    static constexpr std::size_t k_sizes[] = {1, 7, 512, 4093};
    const std::size_t n = std::min({buffer.size(), data.size() - at, k_sizes[turn++ % 4]});
    std::memcpy(buffer.data(), data.data() + at, n);
    at += n;
    return n;
  };
}

void check_content(const ImageContent& content) {
  for (const auto& path : content.paths) {
    check(path.starts_with("/"));
    check(path.find("/../") == std::string::npos && !path.ends_with("/.."));
  }
  for (const auto& f : content.files) check(f.path.starts_with("/"));
  for (const auto& [link, target] : content.dangling) check(content.links.contains(link));
  for (const auto& c : bill_of_materials(content)) {
    check(!c.key.empty() && !c.name.empty() && !c.source.empty());
    check(!c.files.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const InspectOptions options{.exact = false, .threads = 1, .modules = true};
  {
    ImageScanner scanner(options);
    if (auto added = scanner.add_layer("sha256:layer", pieces(bytes)); added) {
      // The same layer twice, as an image may list it: the merge must hold.
      auto content = scanner.finish({"sha256:layer", "sha256:layer"});
      if (content) {
        check(content->layers == 2);
        check_content(*content);
      } else {
        check(!content.error().message.empty());
      }
    } else {
      check(!added.error().message.empty());
    }
  }
  if (auto archive = scan_image_archive(pieces(bytes), options); archive)
    check_content(archive->content);
  else
    check(!archive.error().message.empty());
  return 0;
}
