#include "orchestrator/app/cluster/k8s_deploy.hpp"

#include "orchestrator/app/build/build_source.hpp"
#include "orchestrator/app/cluster/source_snapshot.hpp"
#include "orchestrator/app/images/images_push.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/site/machine_key.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

registry::Client& DeployContext::sources() {
  if (!sources_client) sources_client = site::make_client(sources_url(*remote_url));
  return *sources_client;
}

const cache::SigningKey& DeployContext::key() {
  if (!signing_key) {
    std::string why;
    signing_key = site::machine_signing_key([&](const std::string& line) { why += line; });
    if (!signing_key)
      throw util::Failure(util::ExitCode::outside_failure,
                          "a source snapshot is signed with this machine's key, and there is none: " + why);
  }
  return *signing_key;
}

namespace {

std::string pair_name(const PlanEntry& entry) { return entry.recipe->name + "/" + entry.tier->name; }

}  // namespace

std::optional<std::string> deployable_image(const PlanEntry& entry, DeployContext& context) {
  const compat::ImageChoice& image = *entry.image;
  if (image.source == compat::ImageSource::official) return image.reference;
  if (!image.mounts.empty()) {
    context.problems.push_back(pair_name(entry) + ": its build image " + image.reference + " takes CUDA " +
                               image.toolkit.str() +
                               " from the host's mounts, which a pod does not have; require a toolkit an offline "
                               "image carries (orchestrate images list) in the recipe's `requires: {cuda: ...}`");
    return std::nullopt;
  }
  const compat::OfflineImage* offline = compat::find_offline_image(image.reference);
  const std::string name = offline ? std::string(offline->name) : image.reference;
  const auto record = site::find_built_image(image.reference, context.image_state);
  if (!record) {
    context.problems.push_back(pair_name(entry) + ": its build image " + image.reference +
                               " is not built here: run `orchestrate images build " + name +
                               "`, then `orchestrate images push " + name + "`");
    return std::nullopt;
  }
  if (!context.remote_url) {
    context.problems.push_back(pair_name(entry) + ": its build image " + image.reference +
                               " reaches a pod through the remote, and none is configured: set ORCHESTRATE_REMOTE "
                               "or `remote:`, then run `orchestrate images push " +
                               name + "`");
    return std::nullopt;
  }
  const std::string repository = pushed_repository(*context.remote_url, image.reference);
  if (!record->pushed.starts_with(repository + "@")) {
    context.problems.push_back(pair_name(entry) + ": its build image " + image.reference + " is not pushed to " +
                               site::display_remote(*context.remote_url) + " as built: run `orchestrate images push " +
                               name + "`");
    return std::nullopt;
  }
  return record->pushed;
}

std::optional<std::string> deployable_source(const PlanEntry& entry, DeployContext& context) {
  const recipe::Source& source = entry.recipe->source;
  if (source.kind != recipe::Source::Kind::path) return std::string();
  auto revision = tree_hash(source.path);
  if (!revision) {
    context.problems.push_back(pair_name(entry) + ": " + revision.error());
    return std::nullopt;
  }
  const std::string fix = "run `orchestrate k8s render " + context.tier +
                          " --push` to ship it as a signed snapshot, or give the recipe a git source";
  if (!context.remote_url) {
    context.problems.push_back(pair_name(entry) + ": its source " + source.path.string() +
                               " reaches a pod through the remote, and none is configured: set ORCHESTRATE_REMOTE "
                               "or `remote:`, then " +
                               fix);
    return std::nullopt;
  }
  if (auto found = find_source(context.sources(), *revision)) return found->to_string();
  if (!context.push) {
    context.problems.push_back(pair_name(entry) + ": its source " + source.path.string() + " (" +
                               revision->substr(0, 17) + "...) is not on " + site::display_remote(*context.remote_url) +
                               ": " + fix);
    return std::nullopt;
  }
  const ShippedSource shipped = ship_source(context.sources(), source.path, *revision, context.key(), context.temp_dir);
  context.shipped.push_back(entry.recipe->name + "'s source " + source.path.string() + " shipped as " +
                            shipped.manifest.to_string() + " (" + std::to_string(shipped.bytes) + " bytes" +
                            (shipped.uploaded ? "" : ", the remote had them") + ")");
  return shipped.manifest.to_string();
}

std::string comment_lines(std::string_view text, std::size_t width) {
  std::string out;
  std::string line = "#";
  bool first = true;
  for (const auto& word : util::split_any(text, " ")) {
    if (word.empty()) continue;
    if (line.size() + 1 + word.size() > width && line.size() > (first ? 1u : 3u)) {
      out += line + "\n";
      line = "#  ";
      first = false;
    }
    line += " " + word;
  }
  return out + line + "\n";
}

}  // namespace orc::app
