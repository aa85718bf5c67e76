#include "orchestrator/site/store_root.hpp"

#include "orchestrator/cache/files.hpp"

namespace orc::site {

std::filesystem::path store_root(const std::filesystem::path& given) {
  return given.empty() ? cache::default_store_root() : given;
}

}  // namespace orc::site
