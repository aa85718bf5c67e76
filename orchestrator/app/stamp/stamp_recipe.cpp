// `orchestrate stamp --recipe R --tier T`: the image a recipe's `image:` key
// makes for a tier (REPO:T, app/build/build_image.cpp), stamped only when it
// holds the current set of R x T (cache/current.hpp), the set push, fetch
// --tier and k8s render hand out. The image names its set in the label
// org.orchestrate.set; an image remade from another set (a newer build by
// time, a set promoted since) is refused, naming the build that remakes it.
#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/engine/discovery.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

using util::ExitCode;
using util::Failure;

namespace {

constexpr std::string_view k_set_label = "org.orchestrate.set";

}  // namespace

RecipeImage recipe_image(const StampRequest& request) {
  const std::optional<recipe::Config> config = site::load_config_file(request.config, true);
  const recipe::Recipe& recipe = site::recipe_or_fail(*config, request.recipe);
  (void)site::tier_or_fail(*config, request.tier);
  if (recipe.image.empty())
    util::fail_input(util::SourceLocation{.file = config->file.string()},
                     "recipe '" + recipe.name +
                         "' makes no image: give it 'image: REPO' (the build then makes REPO:TIER), or stamp an "
                         "image by name (orchestrate stamp docker://REF --tier " +
                         request.tier + ")");
  auto store = cache::Store::open(site::store_root(request.store_root));
  if (!store) site::fail_with(store.error());
  auto current = cache::current_set(*store, recipe.name, request.tier);
  if (!current) site::fail_with(current.error());
  const std::string build = "orchestrate build " + request.tier + " --recipe " + recipe.name;
  if (!current->entry)
    util::fail_input("no verified artifact set of " + recipe.name + " for tier " + request.tier + " in " +
                     store->root().string() + ": build it first (" + build + ")");
  RecipeImage out{.image = "docker://" + recipe.image + ":" + request.tier, .set = current->entry->manifest};
  if (current->newer) out.newer = current->newer->manifest;

  const std::string reference = recipe.image + ":" + request.tier;
  const auto found = engine::discover_engine(std::nullopt);
  if (!found || found->kind == engine::EngineKind::host)
    throw Failure(ExitCode::outside_failure, reference +
                                                 ": no container engine socket found; start dockerd "
                                                 "(scripts/start-dockerd.sh) or set DOCKER_HOST=unix://PATH");
  auto client = engine::DockerClient::connect(engine::make_unix_socket_transport(found->socket));
  if (!client) throw Failure(ExitCode::outside_failure, reference + ": " + client.error().message);
  auto info = client->inspect_image(reference);
  if (!info && info.error().kind == engine::ErrorKind::not_found)
    util::fail_input("the engine has no image " + reference + " (recipe '" + recipe.name +
                     "' makes it when it builds in a container engine): " + build);
  if (!info) throw Failure(ExitCode::outside_failure, reference + ": " + info.error().message);
  const auto label = info->labels.find(std::string(k_set_label));
  const std::string held = label == info->labels.end() ? std::string() : label->second;
  if (held != out.set.to_string())
    util::fail_input(reference + " holds " + (held.empty() ? "no labelled set" : "the set " + held) +
                     ", not the current set of " + recipe.name + " for " + request.tier + " (" + out.set.to_string() +
                     "): " + build + " makes the image of the set it answers");
  return out;
}

}  // namespace orc::app
