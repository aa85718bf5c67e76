#pragma once
// Which public keys a command trusts when it checks a signature: those in
// the keys dir's trusted/ (ORCHESTRATE_KEYS_DIR, else the default) plus the
// configuration's `trusted_keys:`. fetch and pull check with them; `cache
// verify --rebuild-index` re-checks every set in the store with them.
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/recipe/config.hpp"

namespace orc::site {

// `config` may be null (no configuration file). A key dir that cannot be
// read is a store failure (site::fail_with); a `trusted_keys:` entry that is
// not a public key throws util::Failure (bad input) naming the file.
cache::TrustedKeys trusted_keys(const recipe::Config* config);

}  // namespace orc::site
