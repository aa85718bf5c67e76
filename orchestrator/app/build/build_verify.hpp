#pragma once
// After a build: which files the recipe's `artifacts:` globs name, and
// whether what they embed matches the plan.
#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app {

struct CollectedArtifact {
  std::string name;            // relative to the root it was found under: "build/saxpy"
  std::filesystem::path path;  // on the host
};

// Expands each glob (util/glob.hpp: * ? [..] per path component, ** for any
// number of directories, dotfiles only when written) under the first root
// where it matches anything, regular files only (a symlink counts when it
// leads to a regular file; a symlinked directory only when it stays inside
// the root). A glob that matches nothing under any root is an error naming
// it, the roots, and up to three files elsewhere with the name it asked for.
std::expected<std::vector<CollectedArtifact>, std::string> collect_artifacts(
    const std::vector<std::string>& globs, const std::vector<std::filesystem::path>& roots);

// The artifacts a manifest cannot name: it is JSON, which holds UTF-8 text,
// so an artifact whose name is not UTF-8 is refused (one message each, the
// name written with \xNN for its stray bytes) before anything is stored.
std::vector<std::string> unstorable_names(const std::vector<CollectedArtifact>& files);

struct Verification {
  std::vector<std::string> errors;    // the build is not stored when any
  std::vector<std::string> warnings;  // stored, and said
  bool ok() const { return errors.empty(); }
};

// Per artifact holding device code: every planned SASS and PTX present in a
// module the runtime registers; every GPU of the tier native (JIT is
// accepted only for a GPU the plan gave no SASS to: the plan then meant it);
// an embedded arch the plan did not ask for is a warning. A planned arch
// found only in relocatable modules (-rdc) is named so, with the change that
// fixes it: an error for SASS (the device link can make it), a warning for
// PTX (the device link cannot; the runtime JIT-links the relocatable PTX).
// No artifact with device code at all is an error.
Verification verify_artifacts(const arch::ArchSet& planned, const std::vector<recipe::TierGpu>& gpus,
                              const std::vector<inspect::FileReport>& reports);

}  // namespace orc::app
