#pragma once
// How a use case fails on a store error (cache::Error): the one mapping to
// an exit code that cache, key, build, smoke, push, pull and fetch share.
#include "orchestrator/cache/error.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::site {

// io -> 3 (the file system failed), corrupt -> 1 (a stored digest no longer
// matches), not_found, ambiguous and invalid -> 2 (the user's input).
util::ExitCode exit_code_for(const cache::Error& error);

// Throws util::Failure with exit_code_for(error) and the error's message.
[[noreturn]] void fail_with(const cache::Error& error);

}  // namespace orc::site
