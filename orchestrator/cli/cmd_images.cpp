#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <memory>
#include <ostream>

#include "orchestrator/app/images/images.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/env.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Offline images are built from Debian packages through the engine API (no
registry, no docker CLI): debootstrap from the host's Debian mirror (or
ORCHESTRATE_DEBIAN_MIRROR), the image's setup script (compiled in; --images-dir
reads edited ones) in a chroot, then the tree is imported. The rootfs tar is
removed after the import unless --keep-rootfs. What was built is recorded in
$ORCHESTRATE_CACHE_DIR (else $XDG_CACHE_HOME/orchestrate)/images.v1.json.

Exit codes: 0 ok; 1 nvcc in the image is not the catalog's toolkit; 2 bad usage
or an unknown image; 3 no engine, the mirror or debootstrap failed, the
import failed.)";

// A live line on a terminal, cut to $COLUMNS or its width; plain lines
// for a log or a pipe.
imaging::ProgressOptions progress_options() {
  if (::isatty(STDERR_FILENO) != 1) return {.style = imaging::ProgressStyle::lines};
  std::size_t width = 100;
  winsize size{};
  if (const auto columns = util::env_get("COLUMNS");
      columns && std::from_chars(columns->data(), columns->data() + columns->size(), width).ec == std::errc())
    return {.style = imaging::ProgressStyle::live, .width = width};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) width = size.ws_col;
  return {.style = imaging::ProgressStyle::live, .width = width};
}

}  // namespace

void attach_images(CLI::App& sub, Io& io) {
  sub.require_subcommand(1);
  sub.footer(k_footer);

  struct ListOptions {
    std::string socket;
    bool json = false;
  };
  auto list_opt = std::make_shared<ListOptions>();
  CLI::App* list = sub.add_subcommand("list", "The image catalog, and which offline images the engine has");
  list->add_option("--engine-socket", list_opt->socket, "The engine's API socket (default: discovered)");
  list->add_flag("--json", list_opt->json, "Print {\"engine\", \"offline\": [...], \"official\": [...]} as JSON");
  list->callback([list_opt, &io] {
    app::ImagesListRequest request{.json = list_opt->json};
    if (!list_opt->socket.empty()) request.engine_socket = list_opt->socket;
    emit(io, app::list_images(request), list_opt->json ? Format::json : Format::text);
  });

  struct BuildOptions {
    std::string name;
    std::string socket;
    std::string cache;
    std::string images_dir;
    std::string mirror;
    bool rebuild = false;
    bool keep_rootfs = false;
    bool json = false;
  };
  auto build_opt = std::make_shared<BuildOptions>();
  CLI::App* build = sub.add_subcommand("build", "Build an offline image (11.8-bookworm, 12.4-trixie, host-bookworm)");
  build->add_option("name", build_opt->name, "The image: its name or reference")->required();
  build->add_option("--engine-socket", build_opt->socket, "The engine's API socket (default: discovered)");
  build->add_option("--cache", build_opt->cache, "Where the rootfs tar is written (default: <cache>/rootfs.v1)");
  build->add_option("--images-dir", build_opt->images_dir,
                    "An images/ folder whose offline/*/setup.sh replace the compiled-in scripts");
  build->add_option("--mirror", build_opt->mirror,
                    "Debian mirror URL (default: ORCHESTRATE_DEBIAN_MIRROR, else the host's)");
  build->add_flag("--rebuild", build_opt->rebuild, "Make the rootfs again and re-import, ignoring the cache");
  build->add_flag("--keep-rootfs", build_opt->keep_rootfs,
                  "Keep the rootfs tar (GBs) after the import: importing it again (a new engine) skips debootstrap");
  build->add_flag("--json", build_opt->json, "Print the record and the step timings as JSON");
  build->callback([build_opt, &io] {
    app::ImageBuildRequest request{.name = build_opt->name,
                                   .images_dir = build_opt->images_dir,
                                   .mirror = build_opt->mirror,
                                   .rebuild = build_opt->rebuild,
                                   .keep_rootfs = build_opt->keep_rootfs,
                                   .progress = progress_options()};
    if (!build_opt->socket.empty()) request.engine_socket = build_opt->socket;
    if (!build_opt->cache.empty()) request.cache_dir = build_opt->cache;
    emit(io, app::build_image(request, io.err), build_opt->json ? Format::json : Format::text);
  });

  attach_images_push(sub, io);
}

}  // namespace orc::cli
