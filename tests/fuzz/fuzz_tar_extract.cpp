// libFuzzer target for the engine's copy-out extractor
// (orchestrator/engine/archive): the tar GET /containers/{id}/archive sends
// holds whatever ran in the container chose. extract_tar must accept or
// refuse, never crash, and write nothing outside its destination; a refusal
// writes nothing at all.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "orchestrator/engine/archive.hpp"
#include "tests/fuzz/unpack_sandbox.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using orc::fuzz::check;
  static const orc::fuzz::UnpackSandbox sandbox;
  sandbox.write_input(data, size);
  const auto stats = orc::engine::extract_tar(sandbox.input(), sandbox.dest());
  if (!stats) {
    check(!stats.error().message.empty());
    // Refused on the headers: before anything was extracted.
    std::error_code ec;
    if (stats.error().kind == orc::engine::ErrorKind::unsafe_archive)
      check(!std::filesystem::exists(sandbox.dest(), ec) || std::filesystem::is_empty(sandbox.dest(), ec));
  }
  sandbox.check_nothing_escaped();
  return 0;
}
