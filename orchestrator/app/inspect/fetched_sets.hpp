#pragma once
// The fetched sets a directory holds, for `orchestrate inspect DIR`: the
// directory itself, or each folder directly in it, that holds the record
// fetch leaves (cache/set_record.hpp). Each set is judged against its own
// tier: the configuration's tier of the name its manifest records, when a
// configuration here declares it (with its driver:), else the GPUs its
// signed manifest records (built_for). A set whose record does not verify
// against the trusted keys, or whose tier neither gives, has none: its
// files are judged as plain files are (against every tier).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/cache/signing.hpp"
#include "orchestrator/digest/digest.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::app {

enum class TierFrom { configuration, manifest, none };

struct FetchedSet {
  std::string dir;     // relative to the directory given: "saxpy-tier-new"; "." for the directory itself
  std::string prefix;  // its files' paths in the scan begin so: "/saxpy-tier-new/", "/"
  std::string recipe;  // as its manifest records them (empty when the record cannot be read)
  std::string tier;
  std::optional<digest::Digest> manifest;
  cache::Verification signature;
  TierFrom from = TierFrom::none;
  std::optional<recipe::Tier> judged;  // the tier judged against; none: plain files
  std::string why;                     // for TierFrom::none: why it has no tier
  // For TierFrom::configuration: the GPUs of the configuration's tier the
  // set was not built for, by its manifest ("B200 (10.0)"); empty when none
  // or when the manifest does not record them.
  std::vector<std::string> added_since;
};

// Whether `dir` or a folder directly in it holds a record (read no further).
bool holds_fetched_sets(const std::filesystem::path& dir);

// `config` may be null (no configuration here); `config_path` names it in
// messages. Sorted by `dir`. Throws nothing: a record that cannot be read is
// a set without a tier, with the reason.
std::vector<FetchedSet> find_fetched_sets(const std::filesystem::path& dir, const recipe::Config* config,
                                          const cache::TrustedKeys& trusted);

}  // namespace orc::app
