#pragma once
// For the fuzz targets of the two hostile-archive unpackers (the store's
// pack unpacker, the engine's copy-out extractor): one private directory per
// process; each input is written to a file there and unpacked into a fresh
// destination below it, and afterwards nothing but that destination may
// exist beside the input: an entry that escaped is a crash.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_support.hpp"

namespace orc::fuzz {

class UnpackSandbox {
 public:
  UnpackSandbox() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/orc-fuzz-unpack.XXXXXX";
    check(::mkdtemp(pattern.data()) != nullptr);
    m_root = pattern;
  }
  ~UnpackSandbox() {
    std::error_code ec;
    std::filesystem::remove_all(m_root, ec);
  }

  std::filesystem::path input() const { return m_root / "input"; }
  std::filesystem::path out() const { return m_root / "out"; }
  std::filesystem::path dest() const { return m_root / "out" / "dest"; }

  void write_input(const std::uint8_t* data, std::size_t size) const {
    std::ofstream file(input(), std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    check(file.good());
    std::error_code ec;
    std::filesystem::remove_all(out(), ec);
    std::filesystem::create_directory(out());
  }

  // Only `dest` (or nothing) under out/, and out/ emptied for the next input.
  void check_nothing_escaped() const {
    for (const auto& entry : std::filesystem::directory_iterator(out())) check(entry.path() == dest());
    std::error_code ec;
    std::filesystem::remove_all(out(), ec);
  }

 private:
  std::filesystem::path m_root;
};

}  // namespace orc::fuzz
