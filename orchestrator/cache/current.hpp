#pragma once
// The current artifact set of a recipe x tier (issue 29): the set the last
// `build` answered for it, built or a hit, or the one `promote` named. A
// source edited and then reverted gives a newer set by time and then a hit
// on the older one: the older one is current again, and push, fetch --tier,
// k8s render and the watcher hand it out, not the newest.
//
// Kept as <store>/current/<recipe>--<tier>, one line "sha256:<hex>", each
// written whole (temporary file and rename); a store without the folder
// (older, or never built) has no current sets and the newest verified set
// stands in.
#include <expected>
#include <optional>
#include <string_view>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/index.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/digest/digest.hpp"

namespace orc::cache {

// The recorded digest; nullopt when none is. A name that is not a recipe or
// tier name, or a record that is not a digest, is invalid.
std::expected<std::optional<digest::Digest>, Error> read_current(const Store& store, std::string_view recipe,
                                                                 std::string_view tier);
std::expected<void, Error> write_current(const Store& store, std::string_view recipe, std::string_view tier,
                                         const digest::Digest& manifest);

// The set a command uses when it is not given a digest.
struct CurrentSet {
  std::optional<IndexEntry> entry;  // none when the store has no verified set of recipe x tier
  bool recorded = false;            // entry is the recorded current set (else the newest stands in)
  std::optional<IndexEntry> newer;  // a verified set newer by time than the current one
  // A record that names no verified set of recipe x tier any more (removed
  // by gc or a prune): then the newest stands in, and this says so.
  std::optional<digest::Digest> stale;
};
std::expected<CurrentSet, Error> current_set(const Store& store, std::string_view recipe, std::string_view tier);
// current_set's entry alone: where Index::newest_verified was used.
std::expected<std::optional<IndexEntry>, Error> current_verified(const Store& store, std::string_view recipe,
                                                                 std::string_view tier);

}  // namespace orc::cache
