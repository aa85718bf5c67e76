#pragma once
// The setup scripts of the offline images (images/offline/common.sh and
// images/offline/NAME/setup.sh). They are compiled into the binary
// (imaging/CMakeLists.txt), so `images build` from an installed or copied
// binary needs no source tree; a folder given on the command line or in
// ORCHESTRATE_IMAGES_DIR is read instead, for trying edited scripts. The
// key of an image's inputs hashes the scripts' bytes, so the same scripts
// give the same key whichever way they were found.
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "orchestrator/compat/image_catalog.hpp"

namespace orc::imaging {

// One file of images/offline as compiled in: "common.sh", "12.4-trixie/setup.sh".
struct EmbeddedScript {
  std::string_view path;
  std::string_view content;
};

// Every script of images/offline at build time, sorted by path.
std::span<const EmbeddedScript> embedded_scripts();

// The two scripts one image's setup runs, and where they came from.
struct SetupScripts {
  std::string common;  // common.sh
  std::string setup;   // NAME/setup.sh
  // "compiled in", or the images/offline folder they were read from.
  std::string origin;
};

// `images_dir` (the images/ folder holding offline/), else
// ORCHESTRATE_IMAGES_DIR, else the compiled-in scripts. Throws util::Failure
// (bad_input) when a folder was named and lacks one of the two, or when the
// binary was built without the image's script.
SetupScripts setup_scripts(const compat::OfflineImage& image, const std::filesystem::path& images_dir);

}  // namespace orc::imaging
