// libFuzzer target for the store's pack unpacker (orchestrator/cache/pack):
// a pack comes from a registry, so every byte is hostile. unpack must accept
// or refuse, never crash, and write nothing outside its directory; what it
// reports unpacked must be there, with the size it reports.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "orchestrator/cache/pack.hpp"
#include "tests/fuzz/unpack_sandbox.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using orc::fuzz::check;
  static const orc::fuzz::UnpackSandbox sandbox;
  sandbox.write_input(data, size);
  orc::cache::UnpackOptions options{.sync = false, .hash = true, .max_bytes = 64 << 20};
  const auto files = orc::cache::unpack(sandbox.input(), sandbox.dest(), options);
  if (files) {
    for (const auto& f : *files) {
      std::error_code ec;
      const auto path = sandbox.dest() / f.name;
      const auto status = std::filesystem::symlink_status(path, ec);
      check(std::filesystem::exists(status));
      if (std::filesystem::is_regular_file(status)) check(std::filesystem::file_size(path, ec) == f.size);
      check(f.sha256.size() == 64 || !std::filesystem::is_regular_file(status));
    }
  } else {
    check(!files.error().message.empty());
    // A refusal leaves nothing behind.
    std::error_code ec;
    check(!std::filesystem::exists(sandbox.dest(), ec) || std::filesystem::is_empty(sandbox.dest(), ec));
  }
  sandbox.check_nothing_escaped();
  return 0;
}
