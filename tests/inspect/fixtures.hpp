#pragma once
// Shared by the integration_inspect suites: the nvcc-built fixtures (made
// once per run by a GoogleTest Environment with fixtures/make-fixtures.sh),
// the recorded goldens, and a real cuobjdump run with its streams apart.
//
// Toolkits are looked for where tests/integration looks for them:
//   11.8, 12.4: $ORC_TOOLCHAINS/cuda-X.Y/bin (default <repo>/toolchains)
//   13.0:       $ORC_CUDA13 (default /usr/local/cuda), when its nvcc says 13.x
// "mixed" is built from the 11.8 and 13.0 fixtures when both exist.
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/inspect/listing.hpp"

namespace orc::inspect_test {

namespace fs = std::filesystem;

// One cuobjdump invocation the goldens record, and the same as ListOptions.
struct Mode {
  std::string_view name;  // in golden file names: "<fixture>.<name>.txt"
  std::vector<std::string> flags;
  inspect::ListOptions options;
};
const std::array<Mode, 4>& modes();

// What a listing tool printed.
struct Listing {
  std::string out;
  std::string err;
  int exit_code = 0;
  bool operator==(const Listing&) const = default;
};
std::string describe(const Listing& listing);

// A golden file: "--- stdout ---\n...--- stderr ---\n...--- rc ---\nN\n", the
// fixture directory written as @DIR@.
std::optional<Listing> read_golden(const fs::path& file, const fs::path& fixture_dir);

// A set of fixtures built by one nvcc (or "mixed").
struct FixtureSet {
  std::string toolkit;                     // "11.8", "12.4", "13.0", "mixed"
  fs::path dir;                            // where they were built; empty when not built
  std::string missing;                     // why not built: the nvcc is absent (skip)
  std::string build_error;                 // make-fixtures.sh failed (a test failure)
  fs::path cuobjdump;                      // a real cuobjdump for live comparison, if any
  std::vector<std::string> files() const;  // fixture file names, sorted
};

// The fixture set of a toolkit, built on first use by the Environment.
const FixtureSet& fixture_set(std::string_view toolkit);

fs::path source_dir();
fs::path golden_dir();

// Runs a real cuobjdump with stdout and stderr kept apart, in `cwd` when set.
Listing run_cuobjdump(const fs::path& cuobjdump, const std::vector<std::string>& flags, const fs::path& input,
                      const fs::path& cwd = {});

// Our listing in the same shape.
Listing list(const fs::path& input, inspect::ListOptions options);

}  // namespace orc::inspect_test
