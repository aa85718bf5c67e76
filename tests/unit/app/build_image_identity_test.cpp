// What identifies a build image: one field per kind, and the one text the
// cache key hashes and the manifest signs.
#include <gtest/gtest.h>

#include "orchestrator/app/build/build_job.hpp"

namespace orc::app::detail {
namespace {

const std::string k_id = "sha256:" + std::string(64, 'a');
const std::string k_pulled = "sha256:" + std::string(64, 'b');

TEST(BuildImageIdentity, EachKindSaysWhatItIs) {
  BuildImage host{.reference = "host", .on_host = true, .cuda_home = "/usr/local/cuda"};
  host.toolkit = util::Version::parse("13.0.88").value();
  EXPECT_EQ(host.identity(), "cuda 13.0.88 at /usr/local/cuda");

  BuildImage pulled{.reference = "127.0.0.1:5000/nvidia/cuda:13.0.2-devel-ubuntu24.04"};
  EXPECT_EQ(pulled.identity(), "") << "nothing known: the key says unknown";
  pulled.registry_digest = digest::Digest::parse(k_pulled).value();
  EXPECT_EQ(pulled.identity(), k_pulled);

  BuildImage made{.reference = "orchestrate/cuda:12.4-trixie", .engine_id = k_id};
  EXPECT_EQ(made.identity(), k_id);
  // An image built here is named by its engine ID even where a registry
  // digest is known.
  made.registry_digest = digest::Digest::parse(k_pulled).value();
  EXPECT_EQ(made.identity(), k_id);

  BuildImage mounted{.reference = "orchestrate/cuda:host-bookworm", .engine_id = k_id};
  mounted.borrowed_toolkit = util::Version::parse("12.4").value();
  EXPECT_EQ(mounted.identity(), k_id + " + host cuda 12.4");
  mounted.engine_id.clear();
  EXPECT_EQ(mounted.identity(), "host cuda 12.4");
}

}  // namespace
}  // namespace orc::app::detail
