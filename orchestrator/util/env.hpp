#pragma once
// The one table of the environment variables orchestrate reads: its own
// ORCHESTRATE_* and the standard ones. `orchestrate --help` prints
// it, docs/environment.md's table is checked against it by a unit test, and every
// read goes through env_get(), which refuses a name the table lacks.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace orc::util {

struct EnvVariable {
  std::string_view name;
  std::string_view meaning;        // one sentence, as docs/environment.md says it
  std::string_view default_value;  // what holds when it is unset
  std::string_view read_by;        // the commands that read it
};

std::span<const EnvVariable> environment_variables();

// The value of `name` when set and not empty. `name` must be in the table
// (a std::logic_error otherwise: a read the table and docs/environment.md would not
// show).
std::optional<std::string> env_get(std::string_view name);
// The value, or "" when unset.
std::string env_value(std::string_view name);

// The table as `orchestrate --help` ends with it, aligned, wrapped to `width`.
std::string render_environment_help(std::size_t width = 100);

}  // namespace orc::util
