#pragma once
// Where a package member's bytes go while it is visited (private to the
// inspect module, for package.cpp): memory up to `in_memory` bytes
// (reserved at the declared size, so a truthful header costs no regrowth),
// an unnamed temporary file past it ($TMPDIR, else /var/tmp; runs of zeros
// left as holes), or from the start when the member declares more. The
// file is mapped once complete, so only the pages a parser touches are
// resident.
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"

namespace orc::inspect {

class SpillFile;

class MemberStore {
 public:
  MemberStore(std::uint64_t declared, std::uint64_t in_memory);
  ~MemberStore();
  MemberStore(const MemberStore&) = delete;
  MemberStore& operator=(const MemberStore&) = delete;

  std::expected<void, std::string> append(Bytes chunk);
  // Valid while the store lives.
  std::expected<Bytes, std::string> bytes();

 private:
  std::uint64_t m_in_memory;
  std::vector<std::byte> m_memory;
  std::unique_ptr<SpillFile> m_spill;
};

}  // namespace orc::inspect
