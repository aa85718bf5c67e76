#include "orchestrator/site/trust.hpp"

#include "orchestrator/cache/files.hpp"
#include "orchestrator/site/store_error.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::site {

cache::TrustedKeys trusted_keys(const recipe::Config* config) {
  auto keys = cache::load_trusted_keys(cache::default_keys_dir());
  if (!keys) fail_with(keys.error());
  if (config)
    if (auto added = cache::add_trusted_keys(config->trusted_keys, *keys); !added)
      throw util::Failure(util::ExitCode::bad_input,
                          config->file.string() + ": trusted_keys: " + added.error().message);
  return std::move(*keys);
}

}  // namespace orc::site
