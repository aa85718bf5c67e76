// What k8s render's build Jobs need from outside, in the pure parts: how
// long comments wrap, where pushed images and source snapshots live on a
// remote, and the image record that remembers a push.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "orchestrator/app/cluster/k8s_deploy.hpp"
#include "orchestrator/app/cluster/source_snapshot.hpp"
#include "orchestrator/app/images/images_push.hpp"
#include "orchestrator/site/image_state.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

TEST(K8sComments, WrapBetweenWordsAtOneHundredColumns) {
  const std::string text =
      "Needs: ConfigMap orchestrate-config (kubectl create configmap orchestrate-config "
      "--from-file=orchestrate.yaml), Secret orchestrate-registry with key remote (the remote URL, credentials "
      "in it), Secret orchestrate-keys (the signing keys a job signs with and trusts)";
  const std::string wrapped = comment_lines(text);
  const auto lines = util::split_any(wrapped, "\n");
  ASSERT_GE(lines.size(), 3u);
  std::string words;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    EXPECT_LE(lines[i].size(), 100u) << lines[i];
    EXPECT_TRUE(lines[i].starts_with(i == 0 ? "# " : "#   ")) << lines[i];
    words += (words.empty() ? "" : " ") + lines[i].substr(i == 0 ? 2 : 4);
  }
  EXPECT_EQ(words, text);  // nothing cut, nothing lost
  EXPECT_EQ(comment_lines("short"), "# short\n");
  // A word longer than a line stays whole on a line of its own.
  const std::string digest = "sha256:" + std::string(120, 'a');
  EXPECT_EQ(comment_lines("set " + digest), "# set\n#   " + digest + "\n");
}

TEST(K8sRemoteNames, ImagesGoBesideTheArtifactsAndSnapshotsUnderSources) {
  EXPECT_EQ(pushed_repository("http://robot:pw@127.0.0.1:5000/team/artifacts", "orchestrate/cuda:12.4-trixie"),
            "127.0.0.1:5000/team/artifacts/orchestrate/cuda");
  EXPECT_EQ(pushed_repository("https://registry.example/a", "orchestrate/cuda:11.8-bookworm"),
            "registry.example/a/orchestrate/cuda");
  EXPECT_THROW(pushed_repository("http://127.0.0.1:5000/team/artifacts", "Orchestrate/CUDA:x"), util::Failure);
  EXPECT_EQ(sources_url("http://robot:pw@127.0.0.1:5000/team/artifacts/"),
            "http://robot:pw@127.0.0.1:5000/team/artifacts/sources");
  EXPECT_EQ(source_tag("tree:" + std::string(64, 'f')), "tree-" + std::string(64, 'f'));
}

TEST(ImageRecords, RememberWhereAnImageWasPushedAndARebuildForgetsIt) {
  char dir[] = "/tmp/orc-image-state-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const fs::path file = fs::path(dir) / "images.v1.json";
  site::ImageRecord record{.name = "12.4-trixie", .reference = "orchestrate/cuda:12.4-trixie", .id = "sha256:1"};
  record.pushed = "127.0.0.1:5000/team/artifacts/orchestrate/cuda@sha256:" + std::string(64, '2');
  site::save_image_record(file, record);
  EXPECT_EQ(site::find_built_image("12.4-trixie", file)->pushed, record.pushed);
  // `images build` writes a new record: the push was of the old image.
  site::save_image_record(file, {.name = "12.4-trixie", .reference = "orchestrate/cuda:12.4-trixie", .id = "sha256:3"});
  EXPECT_EQ(site::find_built_image("12.4-trixie", file)->pushed, "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orc::app
