#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "orchestrator/engine/answers.hpp"
#include "orchestrator/engine/docker.hpp"
#include "tests/unit/engine/test_support.hpp"

namespace orc::engine {
namespace {

using net::Request;

namespace fs = std::filesystem;
using testing::answer;
using testing::CollectingLog;
using testing::FakeTransport;
using testing::Reply;

class DockerImages : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("orc-engine-images-" + std::to_string(::getpid()));
    fs::create_directories(m_dir / "context");
    std::ofstream(m_dir / "rootfs.tar") << "pretend this is a tar";
    std::ofstream(m_dir / "context/Dockerfile") << "FROM orc/base:1\nRUN true\n";
  }
  void TearDown() override { fs::remove_all(m_dir); }

  DockerClient connect(std::vector<Reply> script, const char* version = testing::k_docker_version) {
    script.insert(script.begin(), answer("GET", "/version", 200, version));
    auto owned = std::make_unique<FakeTransport>(std::move(script));
    m_fake = owned.get();
    auto client = DockerClient::connect(std::move(owned));
    if (!client) throw std::runtime_error(client.error().message);
    return std::move(*client);
  }

  // Drains a streamed request body, as the real transport would.
  static std::string drain(const Request& request) {
    const auto& streamed = std::get<net::StreamedBody>(request.body);
    std::string out;
    char buffer[7];
    for (;;) {
      auto n = streamed.source(std::span<char>(buffer, sizeof buffer));
      if (!n || *n == 0) break;
      out.append(buffer, *n);
    }
    return out;
  }

  fs::path m_dir;
  FakeTransport* m_fake = nullptr;
};

constexpr const char* k_image = R"({"Id":"sha256:feed","RepoTags":["orc/base:1"],"RepoDigests":[],"Size":117000000})";

TEST_F(DockerImages, ImportStreamsTheTarAndInspectsTheResult) {
  auto client = connect(
      {answer("POST", "/v1.41/images/create?fromSrc=-&repo=orc%2Fbase&tag=1", 200, "{\"status\":\"sha256:feed\"}\r\n"),
       answer("GET", "/v1.41/images/orc/base:1/json", 200, k_image)});
  auto info = client.import_image(m_dir / "rootfs.tar", "orc/base", "1");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->id, "sha256:feed");
  EXPECT_EQ(info->tags, std::vector<std::string>{"orc/base:1"});
  EXPECT_EQ(info->size, 117000000u);
  const Request sent = m_fake->requests()[1];
  EXPECT_EQ(net::find_header(sent.headers, "Content-Type"), "application/x-tar");
  EXPECT_EQ(std::get<net::StreamedBody>(sent.body).size, 21u);
  EXPECT_EQ(drain(sent), "pretend this is a tar");
}

// Labels come from Config.Labels (`stamp --recipe` reads the set an image
// holds from them); a label whose value is not a string is left out.
TEST_F(DockerImages, InspectReadsTheConfigsLabels) {
  auto client = connect({answer(
      "GET", "/v1.41/images/app:tier-new/json", 200,
      R"({"Id":"sha256:feed","RepoTags":["app:tier-new"],"Config":{"Labels":{"org.orchestrate.set":"sha256:ab","n":1}}})")});
  auto info = client.inspect_image("app:tier-new");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->labels, (std::map<std::string, std::string>{{"org.orchestrate.set", "sha256:ab"}}));
  auto none = read_image_info(k_image);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->labels.empty());
}

// Podman ignores `tag` on import (it tags <repo>:latest), so the image is
// tagged again by its ID.
// An import is bounded by a time that grows with its tar: two minutes, plus
// the tar at 4 MiB/s.
TEST_F(DockerImages, ImportHasADeadlineThatScalesWithTheTar) {
  auto client = connect(
      {answer("POST", "/v1.41/images/create?fromSrc=-&repo=orc%2Fbase&tag=1", 200, "{\"status\":\"sha256:feed\"}\r\n"),
       answer("GET", "/v1.41/images/orc/base:1/json", 200, k_image)});
  fs::resize_file(m_dir / "rootfs.tar", 40u << 20);
  ASSERT_TRUE(client.import_image(m_dir / "rootfs.tar", "orc/base", "1"));
  const auto requests = m_fake->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].timeout, std::chrono::milliseconds(120'000 + 10'000));
}

TEST_F(DockerImages, ImportRetagsWhenTheEngineIgnoredTheTag) {
  auto client = connect(
      {answer("POST", "/v1.41/images/create?fromSrc=-&repo=orc%2Fbase&tag=1", 200, "{\"status\":\"sha256:feed\"}\n"),
       answer("GET", "/v1.41/images/orc/base:1/json", 404, R"({"message":"no such image"})"),
       answer("POST", "/v1.41/images/sha256:feed/tag?repo=orc%2Fbase&tag=1", 201),
       answer("GET", "/v1.41/images/orc/base:1/json", 200, k_image)},
      testing::k_podman_version);
  auto info = client.import_image(m_dir / "rootfs.tar", "orc/base", "1");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->id, "sha256:feed");
  EXPECT_EQ(m_fake->left(), 0u);
}

TEST_F(DockerImages, ImportOfAMissingFileFailsBeforeSending) {
  auto client = connect({});
  auto info = client.import_image(m_dir / "absent.tar", "orc/base", "1");
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().kind, ErrorKind::io);
  EXPECT_NE(info.error().message.find("absent.tar"), std::string::npos);
  EXPECT_EQ(m_fake->requests().size(), 1u);  // only /version
}

TEST_F(DockerImages, ImportErrorInTheProgressStream) {
  auto client = connect({answer(
      "POST", "/v1.41/images/create?fromSrc=-&repo=orc%2Fbase&tag=1", 200,
      R"({"errorDetail":{"message":"archive/tar: invalid tar header"},"error":"archive/tar: invalid tar header"})")});
  auto info = client.import_image(m_dir / "rootfs.tar", "orc/base", "1");
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().message,
            "importing " + (m_dir / "rootfs.tar").string() + " as orc/base:1: archive/tar: invalid tar header");
}

TEST_F(DockerImages, BuildStreamsOutputAndSurfacesAFailedStep) {
  Reply build =
      answer("POST", "/v1.41/build?t=orc%2Fgxx%3A1&dockerfile=Dockerfile&networkmode=host&rm=1&forcerm=1", 200);
  build.chunks = {
      "{\"stream\":\"Step 1/2 : FROM orc/base:1\\n\"}\n{\"stre", "am\":\"Step 2/2 : RUN exit 9\\n\"}\n",
      R"({"errorDetail":{"code":9,"message":"The command '/bin/sh -c exit 9' returned a non-zero code: 9"},"error":"The command '/bin/sh -c exit 9' returned a non-zero code: 9"})"
      "\n"};
  auto client = connect({build});
  CollectingLog log;
  auto info = client.build_image(m_dir / "context", "orc/gxx:1", {.network = "host"}, log);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().kind, ErrorKind::build_failed);
  EXPECT_EQ(info.error().message,
            "building image orc/gxx:1: The command '/bin/sh -c exit 9' returned a non-zero code: 9");
  EXPECT_EQ(log.out, "Step 1/2 : FROM orc/base:1\nStep 2/2 : RUN exit 9\n");
}

TEST_F(DockerImages, BuildSendsTheContextAsATar) {
  auto client =
      connect({answer("POST",
                      "/v1.41/"
                      "build?t=orc%2Fgxx%3A1&dockerfile=Dockerfile&networkmode=none&rm=1&forcerm=1&buildargs=%7B%22A%"
                      "22%3A%221%22%7D",
                      200, "{\"aux\":{\"ID\":\"sha256:beef\"}}\n{\"stream\":\"Successfully built beef\\n\"}\n"),
               answer("GET", "/v1.41/images/orc/gxx:1/json", 200, R"({"Id":"sha256:beef"})")});
  CollectingLog log;
  auto info = client.build_image(m_dir / "context", "orc/gxx:1", {.build_args = {{"A", "1"}}}, log);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->id, "sha256:beef");
  const std::string tar = drain(m_fake->requests()[1]);
  ASSERT_GE(tar.size(), 1024u);
  EXPECT_EQ(tar.substr(257, 5), "ustar");
  EXPECT_NE(tar.find("FROM orc/base:1"), std::string::npos);
}

}  // namespace
}  // namespace orc::engine
