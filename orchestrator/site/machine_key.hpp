#pragma once
// This machine's signing key, made on first use (like an ssh host key) so
// that every manifest it stores is signed; `orchestrate key export` prints
// the public half other machines trust. Used by build (every artifact set)
// and smoke (every attestation).
#include <functional>
#include <optional>
#include <string>

#include "orchestrator/cache/signing.hpp"

namespace orc::site {

// nullopt, said through `say`, when there is none and none can be made:
// what is stored is then unsigned.
std::optional<cache::SigningKey> machine_signing_key(const std::function<void(const std::string&)>& say);

// This machine's hostname, which names it in the smoke runs it signs
// ("localhost" when the system will not say).
std::string node_hostname();

}  // namespace orc::site
