#pragma once
// Unix `ar` archives (static libraries): GNU and BSD member names.
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

struct ArMember {
  std::string name;          // resolved long name, without GNU's trailing '/'
  std::uint64_t offset = 0;  // of the member's data in the archive
  std::uint64_t size = 0;
};

struct ArArchive {
  std::vector<ArMember> members;  // symbol tables ("/", "/SYM64/", "__.SYMDEF") and the "//" name table left out
  std::optional<Damage> damage;   // members before the damage are listed
};

// not_this_format unless the data starts with "!<arch>\n".
std::expected<ArArchive, ParseFailure> parse_ar(Bytes data);

}  // namespace orc::inspect
