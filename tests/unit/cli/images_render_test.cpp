// `images build`'s report says what the build left on disk: the engine's
// image and its size, and the rootfs files kept or removed, each with its size.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/app/images/images.hpp"
#include "orchestrator/cli/render.hpp"

namespace orc::cli {
namespace {

app::ImageBuildResult imported() {
  app::ImageBuildResult r;
  r.record = site::ImageRecord{.name = "12.4-trixie",
                               .reference = "orchestrate/cuda:12.4-trixie",
                               .id = "sha256:" + std::string(64, 'b'),
                               .toolkit = "12.4.131"};
  r.scripts = "compiled in";
  r.imported = true;
  r.debootstrap_s = 81.3;
  r.setup_s = 402.0;
  r.tar_s = 30.5;
  r.import_s = 60.0;
  r.nvcc_s = 2.0;
  r.total_s = 580.0;
  r.engine_bytes = 5'368'709'120;  // 5 GiB
  r.tar_bytes = 5'476'083'302;
  r.cache_dir = "/c/rootfs.v1";
  return r;
}

TEST(ImagesRender, ABuildThatKeepsNothingSaysSoAndWhatItRemoved) {
  app::ImageBuildResult r = imported();
  r.cache.removed = {{.path = "/c/rootfs.v1/12.4-trixie-0123456789abcdef.setup.log", .bytes = 30 * 1024},
                     {.path = "/c/rootfs.v1/12.4-trixie-0123456789abcdef.tar", .bytes = r.tar_bytes}};
  EXPECT_EQ(render(r, Format::text),
            "orchestrate/cuda:12.4-trixie  sha256:" + std::string(64, 'b') +
                "  nvcc 12.4.131\n"
                "  setup scripts: compiled in\n"
                "  rootfs: debootstrap 81.3 s, setup 402.0 s, tar 30.5 s\n"
                "  import: 5.1 GiB in 60.0 s\n"
                "  nvcc --version in a container: 2.0 s\n"
                "  engine: orchestrate/cuda:12.4-trixie, 5.0 GiB\n"
                "  kept beside it: nothing (--keep-rootfs keeps the rootfs tar in /c/rootfs.v1)\n"
                "  removed from /c/rootfs.v1: 2 rootfs file(s), 5.1 GiB\n"
                "  total: 580.0 s\n");
  const auto j = nlohmann::json::parse(render(r, Format::json));
  EXPECT_EQ(j["scripts"], "compiled in");
  EXPECT_EQ(j["disk"]["engine_bytes"], 5'368'709'120u);
  EXPECT_EQ(j["disk"]["tar_bytes"], 5'476'083'302u);
  EXPECT_EQ(j["disk"]["kept"], nlohmann::json::array());
  EXPECT_EQ(j["disk"]["removed"][1]["path"], "/c/rootfs.v1/12.4-trixie-0123456789abcdef.tar");
  EXPECT_EQ(j["disk"]["removed"][1]["bytes"], 5'476'083'302u);
}

TEST(ImagesRender, KeptFilesAreListedOnePerLineWithTheirSizes) {
  app::ImageBuildResult r = imported();
  r.rootfs_cached = true;
  r.cache.kept = {{.path = "/c/rootfs.v1/12.4-trixie-0123456789abcdef.tar", .bytes = r.tar_bytes},
                  {.path = "/c/rootfs.v1/12.4-trixie-0123456789abcdef.tar.packages", .bytes = 900}};
  const std::string text = render(r, Format::text);
  EXPECT_NE(text.find("  rootfs: the kept tar\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  kept in /c/rootfs.v1 (5.1 GiB):\n"
                      "    12.4-trixie-0123456789abcdef.tar (5.1 GiB)\n"
                      "    12.4-trixie-0123456789abcdef.tar.packages (900 B)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("removed from"), std::string::npos) << text;

  // The engine had the image: nothing was made or imported.
  r.imported = false;
  EXPECT_NE(render(r, Format::text).find("  rootfs: none needed (the engine has this image)\n  nvcc"),
            std::string::npos);
}

}  // namespace
}  // namespace orc::cli
