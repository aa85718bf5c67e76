#include "orchestrator/site/store_error.hpp"

namespace orc::site {

util::ExitCode exit_code_for(const cache::Error& error) {
  switch (error.kind) {
    case cache::ErrorKind::io:
      return util::ExitCode::outside_failure;
    case cache::ErrorKind::corrupt:
      return util::ExitCode::check_failed;
    default:
      return util::ExitCode::bad_input;
  }
}

void fail_with(const cache::Error& error) { throw util::Failure(exit_code_for(error), error.message); }

}  // namespace orc::site
