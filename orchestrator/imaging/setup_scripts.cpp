#include "orchestrator/imaging/setup_scripts.hpp"

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::imaging {

namespace fs = std::filesystem;
using util::ExitCode;
using util::Failure;

namespace {

std::string read_script(const fs::path& file, std::string_view given_as) {
  auto text = util::read_file(file);
  if (!text)
    throw Failure(ExitCode::bad_input, "no " + file.string() + " (" + std::string(given_as) +
                                           " names the images/ folder, which holds offline/common.sh and "
                                           "offline/NAME/setup.sh; leave it unset to use the scripts built in)");
  return std::move(*text);
}

std::string_view embedded(std::string_view path) {
  for (const EmbeddedScript& script : embedded_scripts())
    if (script.path == path) return script.content;
  throw Failure(ExitCode::bad_input, "this binary was built without images/offline/" + std::string(path) +
                                         ": pass --images-dir to the images/ folder that has it");
}

}  // namespace

SetupScripts setup_scripts(const compat::OfflineImage& image, const fs::path& images_dir) {
  const std::string setup = std::string(image.name) + "/setup.sh";
  fs::path dir = images_dir;
  std::string given_as = "--images-dir";
  if (dir.empty())
    if (auto env = util::env_get("ORCHESTRATE_IMAGES_DIR"); env && !env->empty()) {
      dir = *env;
      given_as = "ORCHESTRATE_IMAGES_DIR";
    }
  if (dir.empty())
    return SetupScripts{
        .common = std::string(embedded("common.sh")), .setup = std::string(embedded(setup)), .origin = "compiled in"};
  const fs::path offline = fs::absolute(dir / "offline");
  return SetupScripts{.common = read_script(offline / "common.sh", given_as),
                      .setup = read_script(offline / setup, given_as),
                      .origin = offline.string()};
}

}  // namespace orc::imaging
