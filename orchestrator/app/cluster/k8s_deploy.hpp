#pragma once
// What a build Job of `k8s render` needs from outside the cluster, made
// reachable from a pod or refused: its build image (an offline image
// pushed by `images push`, named by digest; an official tag as it is; the
// host-mount image never, a pod has no host CUDA to mount) and a local
// source (a signed snapshot on the remote, source_snapshot.hpp; a git
// source is cloned by the Job itself). Each refusal says the command that
// fixes it; k8s render reports them all at once (exit 2).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/cache/signing.hpp"
#include "orchestrator/registry/client.hpp"

namespace orc::app {

struct DeployContext {
  std::string tier;
  std::optional<std::string> remote_url;  // ORCHESTRATE_REMOTE or `remote:`; may hold credentials
  std::filesystem::path image_state;      // site/image_state.hpp's file
  bool push = false;                      // ship local sources the remote lacks
  std::filesystem::path temp_dir;         // where a snapshot's tar is made
  std::vector<std::string> problems;      // what cannot reach a pod, with its fix
  std::vector<std::string> shipped;       // "recipe: sha256:... (N bytes sent)", for the header

  // The snapshot repository's client and this machine's key, made on first
  // use (a render with nothing to ship reads no key).
  registry::Client& sources();
  const cache::SigningKey& key();
  std::unique_ptr<registry::Client> sources_client;
  std::optional<cache::SigningKey> signing_key;
};

// The image a pod pulls for `entry`'s build; nullopt with a problem added
// when there is none.
std::optional<std::string> deployable_image(const PlanEntry& entry, DeployContext& context);

// For a recipe with a local source: the digest of its snapshot on the
// remote (shipped now with `push`); empty for a git source; nullopt with a
// problem added when it is not there. Throws util::Failure (exit 3) when the
// registry fails.
std::optional<std::string> deployable_source(const PlanEntry& entry, DeployContext& context);

// `text` as YAML comment lines of at most `width` columns, wrapped between
// words ("# " first, "#   " after); a word longer than a line is kept whole.
std::string comment_lines(std::string_view text, std::size_t width = 100);

}  // namespace orc::app
