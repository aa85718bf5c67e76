#pragma once
// A version literal of one of flags' compiled-in tables: one that does not
// parse is a bug in the table, so it fails loudly (the first test that reads
// the table fails) instead of dropping the row.
#include <string>
#include <string_view>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::flags::detail {

inline util::Version table_version(std::string_view table, std::string_view row, std::string_view text) {
  auto v = util::Version::parse(text);
  if (!v)
    throw util::Failure(util::ExitCode::check_failed,
                        std::string(table) + ", row " + std::string(row) + ": " + v.error());
  return *v;
}

}  // namespace orc::flags::detail
