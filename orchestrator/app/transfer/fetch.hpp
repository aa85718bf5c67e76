#pragma once
// `orchestrate fetch RECIPE --tier T [--digest D] [-o DIR]`: the newest
// verified artifact set of recipe x tier (or exactly that digest) from the
// local store, else pulled from the remote into the store; its digests,
// signature and arch coverage checked; unpacked into DIR by the safe
// unpacker; what went where reported (cli/render_transfer.cpp prints it).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/arch/arch_list.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct FetchedFile {
  std::string path;  // inside DIR
  std::string sha256;
  std::uint64_t size = 0;
  arch::ArchList sass;  // embedded: "sm_80"
  arch::ArchList ptx;   // "compute_90"
};

// Digests are hex strings, as the index and the manifest hold them.
struct FetchReport {
  std::string recipe;
  std::string tier;
  digest::Digest manifest;
  std::filesystem::path dir;
  std::string from;  // "store" or the remote's URL (without credentials)
  std::vector<FetchedFile> files;
  bool digest_ok = false;
  bool signature_ok = false;
  bool archs_ok = false;
  std::optional<bool> smoke_ok;  // set only under --require-smoke
  std::string signer;            // key id; empty when unsigned
  std::vector<std::string> jit;  // GPUs that will JIT (allowed by the tier)
  // The tier's GPUs came from the set's signed manifest (no configuration
  // here), not from the configuration.
  bool tier_from_manifest = false;
  // The warnings for stderr (--insecure's), carried in the JSON too.
  std::vector<util::Diagnostic> warnings;
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Exit 0; 1 a check failed (digest, signature, archs, a hostile layer);
// 2 bad input (unknown tier, not found, DIR not empty); 3 the remote (or the
// store's disk) failed when only it could serve.
FetchReport fetch(const TransferRequest& request, const std::filesystem::path& out_dir);

}  // namespace orc::app
