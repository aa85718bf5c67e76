#pragma once
// A build image's root file system: debootstrap (minbase, the image's suite
// and components, from a Debian mirror) -> setup.sh in a chroot with proc
// mounted -> the package versions -> `tar --numeric-owner` of the tree,
// written and synced before its rename. The system tools run through
// util's process runner, their output appended to a log beside the tar.
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/imaging/setup_scripts.hpp"
#include "orchestrator/imaging/tool_progress.hpp"

namespace orc::imaging {

// The last `n` non-blank lines of `text`, each indented by two spaces and
// joined by newlines (none after the last), for messages.
std::string last_lines(std::string_view text, std::size_t n);

// Seconds with one decimal: "65.3".
std::string seconds(std::chrono::milliseconds duration);

// The Debian mirror: ORCHESTRATE_DEBIAN_MIRROR, else the first URIs: line of
// /etc/apt/sources.list.d/debian.sources, else the first `deb` URL of
// /etc/apt/sources.list. Read at run time, never stored in the repository.
std::optional<std::string> debian_mirror();

// What make_rootfs_tar needs: the catalog entry, its setup scripts, where
// to work, and the tar to write.
struct RootfsJob {
  const compat::OfflineImage* image = nullptr;
  std::string mirror;
  const SetupScripts* scripts = nullptr;
  std::filesystem::path work;  // scratch (the rootfs itself), removed after
  std::filesystem::path tar;   // written under a temporary name, then renamed
  // The tar outlives the import (--keep-rootfs): synced before its rename,
  // so a crash never leaves a truncated one that a later build would take.
  bool keep = false;
  ProgressOptions progress;  // how debootstrap's and apt's progress is shown
};

struct RootfsResult {
  std::vector<std::string> packages;  // "name=version" of the catalog's packages
  std::chrono::milliseconds debootstrap{0};
  std::chrono::milliseconds setup{0};
  std::chrono::milliseconds tar{0};
};

// The steps above; progress lines go to `progress`. A failed step throws
// util::Failure (outside_failure) naming the step, with the last lines of
// its log (kept beside the tar). The scratch tree goes on every path out.
RootfsResult make_rootfs_tar(const RootfsJob& job, std::ostream& progress);

}  // namespace orc::imaging
