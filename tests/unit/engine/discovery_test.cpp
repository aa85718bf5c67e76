#include "orchestrator/engine/discovery.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace orc::engine {
namespace {

namespace fs = std::filesystem;

DiscoveryEnvironment world(std::map<std::string, std::string> vars, std::set<std::string> files) {
  return DiscoveryEnvironment{
      .getenv = [vars](const char* name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
      },
      .exists = [files](const fs::path& p) { return files.contains(p.string()); },
  };
}

TEST(Discovery, DockerHostWinsEvenWhenItsSocketIsMissing) {
  auto d = discover_engine(std::nullopt, world({{"DOCKER_HOST", "unix:///tmp/d.sock"}}, {"/var/run/docker.sock"}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, EngineKind::docker);
  EXPECT_EQ(d->socket, "/tmp/d.sock");
  EXPECT_EQ(d->reason, "DOCKER_HOST names /tmp/d.sock");
}

TEST(Discovery, OnlyUnixSocketsAndNoSecretsEchoed) {
  auto d = discover_engine(std::nullopt, world({{"DOCKER_HOST", "tcp://user:s3cret@build:2376"}}, {}));
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().kind, ErrorKind::config);
  EXPECT_EQ(d.error().message,
            "DOCKER_HOST uses tcp://; only unix:// sockets are supported (for example unix:///var/run/docker.sock)");
  EXPECT_EQ(d.error().message.find("s3cret"), std::string::npos);
}

TEST(Discovery, SocketsInOrder) {
  auto docker = discover_engine(std::nullopt, world({}, {"/var/run/docker.sock", "/run/podman/podman.sock"}));
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->kind, EngineKind::docker);
  EXPECT_EQ(docker->reason, "found /var/run/docker.sock");

  auto user_podman = discover_engine(
      std::nullopt,
      world({{"XDG_RUNTIME_DIR", "/run/user/1000"}}, {"/run/user/1000/podman/podman.sock", "/run/podman/podman.sock"}));
  ASSERT_TRUE(user_podman);
  EXPECT_EQ(user_podman->kind, EngineKind::podman);
  EXPECT_EQ(user_podman->socket, "/run/user/1000/podman/podman.sock");

  auto system_podman = discover_engine(std::nullopt, world({}, {"/run/podman/podman.sock"}));
  ASSERT_TRUE(system_podman);
  EXPECT_EQ(system_podman->socket, "/run/podman/podman.sock");
  EXPECT_EQ(system_podman->looked_at, (std::vector<std::string>{"DOCKER_HOST (unset)", "/var/run/docker.sock",
                                                                "CONTAINER_HOST (unset)", "/run/podman/podman.sock"}));
}

TEST(Discovery, NothingFoundMeansHostSaidPlainly) {
  auto d = discover_engine(std::nullopt, world({}, {}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, EngineKind::host);
  EXPECT_EQ(d->reason,
            "no container engine socket found (looked at DOCKER_HOST (unset), /var/run/docker.sock, CONTAINER_HOST "
            "(unset), /run/podman/podman.sock): builds run on this machine, not isolated");
}

TEST(Discovery, RequestedEngine) {
  auto host = discover_engine(EngineKind::host, world({}, {"/var/run/docker.sock"}));
  ASSERT_TRUE(host);
  EXPECT_EQ(host->kind, EngineKind::host);
  auto podman = discover_engine(EngineKind::podman, world({}, {"/var/run/docker.sock", "/run/podman/podman.sock"}));
  ASSERT_TRUE(podman);
  EXPECT_EQ(podman->kind, EngineKind::podman);
  auto missing = discover_engine(EngineKind::docker, world({}, {"/run/podman/podman.sock"}));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::socket_missing);  // the world's failure (exit 3), not the user's
  EXPECT_EQ(missing.error().message,
            "--engine docker: no engine socket found (looked at DOCKER_HOST (unset), /var/run/docker.sock)");
}

TEST(Discovery, ParsesNames) {
  EXPECT_EQ(parse_engine_kind("podman"), EngineKind::podman);
  EXPECT_EQ(parse_engine_kind("Docker"), std::nullopt);
  EXPECT_EQ(to_string(EngineKind::host), "host");
}

}  // namespace
}  // namespace orc::engine
