// The registry side of bench/registry_fetch.sh: pushes a file as a blob, or
// fetches one through orc::registry::Client (streamed to disk, sha256
// verified while reading) and prints the seconds it took.
//   bench_registry_fetch push URL FILE          -> prints "sha256:... SIZE"
//   bench_registry_fetch fetch URL DIGEST SIZE OUT [nosync] -> prints seconds
// "nosync" leaves out the fsync before the rename, as curl -o does.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/client.hpp"

int main(int argc, char** argv) {
  using namespace orc::registry;
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "push" && argc == 4) || (mode == "fetch" && (argc == 6 || argc == 7)))) {
    std::fprintf(stderr, "usage: %s push URL FILE | fetch URL DIGEST SIZE OUT [nosync]\n", argv[0]);
    return 2;
  }
  Client client(ClientOptions{.url = argv[2]}, make_curl_transport());
  if (mode == "push") {
    orc::digest::Sha256 hasher;
    const auto size = orc::digest::hash_file(argv[3], hasher);
    if (!size) {
      std::fprintf(stderr, "%s\n", size.error().c_str());
      return 1;
    }
    const orc::digest::Digest digest = hasher.digest();
    const auto pushed = client.push_blob(digest, std::filesystem::path(argv[3]));
    if (!pushed) {
      std::fprintf(stderr, "%s\n", pushed.error().message.c_str());
      return 1;
    }
    std::printf("%s %llu\n", digest.to_string().c_str(), static_cast<unsigned long long>(*size));
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto durability = argc == 7 && std::string(argv[6]) == "nosync" ? Durability::caller_syncs : Durability::fsync;
  const auto wanted = orc::digest::Digest::parse(argv[3]);
  if (!wanted) {
    std::fprintf(stderr, "%s\n", wanted.error().c_str());
    return 2;
  }
  const auto fetched = client.fetch_blob(*wanted, std::stoull(argv[4]), argv[5], durability);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  if (!fetched) {
    std::fprintf(stderr, "%s\n", fetched.error().message.c_str());
    return 1;
  }
  std::printf("%.3f\n", took.count());
  return 0;
}
