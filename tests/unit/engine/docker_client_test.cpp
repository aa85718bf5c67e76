#include "orchestrator/engine/docker.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/engine/test_support.hpp"

namespace orc::engine {
namespace {

using net::Request;
using net::TransportError;
using net::TransportErrorKind;

using nlohmann::json;
using testing::answer;
using testing::CollectingLog;
using testing::FakeTransport;
using testing::Reply;

// A client connected through a fake that first answers GET /version.
struct Connected {
  FakeTransport* fake;
  DockerClient client;
};

Connected connect_with(std::vector<Reply> script, const char* version = testing::k_docker_version) {
  script.insert(script.begin(), answer("GET", "/version", 200, version));
  auto owned = std::make_unique<FakeTransport>(std::move(script));
  FakeTransport* fake = owned.get();
  auto client = DockerClient::connect(std::move(owned));
  if (!client) throw std::runtime_error(client.error().message);
  return {fake, std::move(*client)};
}

TEST(ApiVersion, ParsesAndOrders) {
  EXPECT_EQ(ApiVersion::parse("1.41"), (ApiVersion{1, 41}));
  EXPECT_FALSE(ApiVersion::parse("1"));
  EXPECT_FALSE(ApiVersion::parse("1.41beta"));
  EXPECT_FALSE(ApiVersion::parse(""));
  EXPECT_LT((ApiVersion{1, 9}), (ApiVersion{1, 41}));
  EXPECT_EQ((ApiVersion{1, 43}).str(), "1.43");
}

TEST(Version, DockerAndPodman) {
  auto docker = parse_version(testing::k_docker_version);
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->version, "20.10.24");
  EXPECT_EQ(docker->api, (ApiVersion{1, 41}));
  EXPECT_EQ(docker->min_api, (ApiVersion{1, 12}));
  EXPECT_FALSE(docker->podman);
  auto podman = parse_version(testing::k_podman_version);
  ASSERT_TRUE(podman);
  EXPECT_TRUE(podman->podman);
  EXPECT_EQ(podman->min_api, (ApiVersion{1, 24}));
  EXPECT_EQ(parse_version("{}").error().kind, ErrorKind::protocol);
  EXPECT_EQ(parse_version("garbage").error().kind, ErrorKind::protocol);
}

TEST(Version, NegotiatesTheLowerOfTheirsAndOurs) {
  EngineVersion engine{.version = "x", .api = {1, 41}, .min_api = {1, 12}};
  EXPECT_EQ(negotiate(engine), (ApiVersion{1, 41}));
  engine.api = {1, 47};  // newer engine: we speak the newest we know
  EXPECT_EQ(negotiate(engine), k_max_api);
  engine.api = {1, 40};  // Docker 19.03
  auto old = negotiate(engine);
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().kind, ErrorKind::unsupported_version);
  EXPECT_NE(old.error().message.find("at least 1.41"), std::string::npos);
  engine = {.version = "99", .api = {1, 50}, .min_api = {1, 44}};  // dropped what we speak
  EXPECT_EQ(negotiate(engine).error().kind, ErrorKind::unsupported_version);
}

TEST(DockerClient, PathsCarryTheNegotiatedVersion) {
  auto c = connect_with({answer("GET", "/v1.41/_ping", 200, "OK")});
  EXPECT_TRUE(c.client.ping());
  auto newer = R"({"Version":"27.0","ApiVersion":"1.46","MinAPIVersion":"1.24"})";
  auto d = connect_with({answer("GET", "/v1.43/_ping", 200, "OK")}, newer);
  EXPECT_TRUE(d.client.ping());
  EXPECT_EQ(d.client.api(), k_max_api);
}

TEST(DockerClient, TransportErrorsSayWhatWasBeingDone) {
  auto c = connect_with({Reply{.method = "GET",
                               .url = "/v1.41/_ping",
                               .error = TransportError{TransportErrorKind::socket_missing, "no engine socket at /x"}}});
  auto pinged = c.client.ping();
  ASSERT_FALSE(pinged);
  EXPECT_EQ(pinged.error().kind, ErrorKind::socket_missing);
  EXPECT_EQ(pinged.error().message, "pinging the engine: socket missing: no engine socket at /x");
  EXPECT_TRUE(pinged.error().engine_unreachable());
}

TEST(DockerClient, CreateSendsTheSpecAsJson) {
  auto c =
      connect_with({answer("POST", "/v1.41/containers/create?name=job%201", 201, R"({"Id":"abc123","Warnings":[]})")});
  BuildSpec spec{.image = "orc/base:1",
                 .argv = {"/bin/sh", "-c", "echo \"$FOO\""},
                 .env = {{"FOO", "bar baz"}},
                 .mounts = {{.host = "/usr/local/cuda", .container = "/usr/local/cuda"},
                            {.host = "/tmp/out", .container = "/out", .access = Access::read_write}},
                 .working_dir = "/build",
                 .user = "1000:1000",
                 .limits = {.nofile = 1024, .nproc = 512, .memory_bytes = 1 << 30, .cpus = 1.5},
                 .labels = {{"orc.job", "42"}},
                 .name = "job 1"};
  auto id = c.client.create_container(spec);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "abc123");
  const Request sent = c.fake->requests().back();
  EXPECT_EQ(net::find_header(sent.headers, "content-type"), "application/json");
  const json body = json::parse(std::get<std::string>(sent.body));
  EXPECT_EQ(body["Image"], "orc/base:1");
  EXPECT_EQ(body["Cmd"], json::array({"/bin/sh", "-c", "echo \"$FOO\""}));
  EXPECT_EQ(body["Env"], json::array({"FOO=bar baz"}));
  EXPECT_EQ(body["WorkingDir"], "/build");
  EXPECT_EQ(body["User"], "1000:1000");
  EXPECT_EQ(body["Tty"], false);
  EXPECT_EQ(body["Labels"]["orc.job"], "42");
  EXPECT_EQ(body["Labels"]["org.orchestrate.managed"], "1");
  const json& host = body["HostConfig"];
  EXPECT_EQ(host["Binds"], json::array({"/usr/local/cuda:/usr/local/cuda:ro", "/tmp/out:/out:rw"}));
  EXPECT_EQ(host["NetworkMode"], "none");
  EXPECT_EQ(host["Ulimits"], json::parse(R"([{"Name":"nofile","Soft":1024,"Hard":1024},
                                              {"Name":"nproc","Soft":512,"Hard":512}])"));
  EXPECT_EQ(host["Memory"], 1 << 30);
  EXPECT_EQ(host["NanoCpus"], 1'500'000'000);
}

TEST(DockerClient, DefaultsLeaveTheImagesChoices) {
  auto body = create_body(BuildSpec{.image = "x"});
  ASSERT_TRUE(body);
  EXPECT_FALSE(body->contains("Cmd"));
  EXPECT_FALSE(body->contains("WorkingDir"));
  EXPECT_FALSE(body->contains("User"));
  EXPECT_EQ((*body)["HostConfig"]["NetworkMode"], "none");
  EXPECT_FALSE((*body)["HostConfig"].contains("Memory"));
}

TEST(DockerClient, RejectsSpecsTheApiCannotExpress) {
  const auto kind = [](BuildSpec spec) {
    auto body = create_body(spec);
    return body ? std::string("ok") : std::string(to_string(body.error().kind)) + ": " + body.error().message;
  };
  EXPECT_EQ(kind({}), "invalid build spec: no image given");
  EXPECT_EQ(kind({.image = "x", .mounts = {{.host = "rel", .container = "/c"}}}),
            "invalid build spec: bind mount source 'rel' is not absolute");
  EXPECT_EQ(kind({.image = "x", .mounts = {{.host = "/a:b", .container = "/c"}}}),
            "invalid build spec: bind mount path '/a:b' holds ':' or ','");
  EXPECT_EQ(kind({.image = "x", .mounts = {{.host = "/a", .container = "c"}}}),
            "invalid build spec: bind mount target 'c' is not absolute");
  EXPECT_EQ(kind({.image = "x", .env = {{"A=B", "c"}}}),
            "invalid build spec: environment variable name 'A=B' is empty or holds '='");
}

TEST(DockerClient, MissingImageSaysSo) {
  // Docker's and Podman's bodies for the same 404.
  for (
      const char* body :
      {R"({"message":"No such image: nope:1"})",
       R"({"cause":"image not known","message":"no such image: docker.io/library/nope:1: image not known","response":404})"}) {
    auto c = connect_with({answer("POST", "/v1.41/containers/create", 404, body)});
    auto id = c.client.create_container(BuildSpec{.image = "nope:1"});
    ASSERT_FALSE(id);
    EXPECT_EQ(id.error().kind, ErrorKind::not_found);
    EXPECT_EQ(id.error().http_status, 404);
    EXPECT_TRUE(id.error().message.starts_with("image 'nope:1' is not in the engine; import or build it first"))
        << id.error().message;
    EXPECT_NE(id.error().message.find("o such image"), std::string::npos);
  }
}

TEST(DockerClient, StartFailureKeepsTheRuntimeMessage) {
  auto c = connect_with({answer(
      "POST", "/v1.41/containers/abcdef0123456789/start", 400,
      R"({"message":"failed to create shim task: OCI runtime create failed: exec: \"/nonexistent\": stat /nonexistent: no such file or directory: unknown"})")});
  auto started = c.client.start_container("abcdef0123456789");
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().kind, ErrorKind::api);
  EXPECT_TRUE(started.error().message.starts_with("starting container abcdef012345: failed to create shim task"));
  EXPECT_FALSE(started.error().engine_unreachable());
}

TEST(DockerClient, WaitReadsStatusCodeInEitherKeyOrder) {
  auto c =
      connect_with({answer("POST", "/v1.41/containers/a/wait", 200, R"({"Error":null,"StatusCode":3})"),
                    answer("POST", "/v1.41/containers/a/wait", 200, R"({"StatusCode":0,"Error":null})"),
                    answer("POST", "/v1.41/containers/a/wait", 200, R"({"StatusCode":1,"Error":{"Message":"boom"}})"),
                    answer("POST", "/v1.41/containers/a/wait", 200, R"({"Status":1})")});
  EXPECT_EQ(c.client.wait_container("a"), 3);
  EXPECT_EQ(c.client.wait_container("a"), 0);
  EXPECT_EQ(c.client.wait_container("a").error().message, "waiting for container a: boom");
  EXPECT_EQ(c.client.wait_container("a").error().kind, ErrorKind::protocol);
}

TEST(DockerClient, ContainerStatusReadsStateStatus) {
  auto c = connect_with(
      {answer("GET", "/v1.41/containers/a/json", 200, R"({"Id":"a","State":{"Status":"exited","Running":false}})"),
       answer("GET", "/v1.41/containers/a/json", 200, R"({"Id":"a","State":"exited"})"),
       answer("GET", "/v1.41/containers/a/json", 404, R"({"message":"No such container: a"})")});
  EXPECT_EQ(c.client.container_status("a"), "exited");
  EXPECT_EQ(c.client.container_status("a").error().message, "inspecting container a: no State.Status in the answer");
  EXPECT_EQ(c.client.container_status("a").error().kind, ErrorKind::not_found);
}

TEST(DockerClient, RemoveIsIdempotent) {
  auto c =
      connect_with({answer("DELETE", "/v1.41/containers/a?force=1&v=1", 204),
                    answer("DELETE", "/v1.41/containers/a?force=1&v=1", 404, R"({"message":"No such container: a"})"),
                    answer("DELETE", "/v1.41/containers/a?force=1&v=1", 500, R"({"message":"driver failed"})")});
  EXPECT_TRUE(c.client.remove_container("a"));
  EXPECT_TRUE(c.client.remove_container("a"));
  EXPECT_EQ(c.client.remove_container("a").error().message, "removing container a: driver failed");
}

TEST(DockerClient, ListFiltersByLabel) {
  auto c = connect_with(
      {answer("GET", "/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22orc.test%3D1%22%5D%7D", 200,
              R"([{"Id":"c1","State":"exited","Image":"orc/base:1"},{"Id":"c2","State":"running"}])")});
  auto list = c.client.list_containers("orc.test=1");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "c1");
  EXPECT_EQ((*list)[0].state, "exited");
  EXPECT_EQ((*list)[1].state, "running");
}

// A copy out of a container is bounded (an hour, and two minutes without a
// byte) and so is everything else that is not a build's own stream: the log
// stream and the wait of a build take as long as the build does.
TEST(DockerClient, OnlyBuildStreamsAreUnbounded) {
  const TransportError gone{TransportErrorKind::closed, "gone"};
  Reply copy = answer("GET", "/v1.41/containers/a/archive?path=%2Fout", 200);
  copy.error = gone;
  auto c = connect_with({copy, answer("GET", "/v1.41/containers/a/logs?follow=1&stdout=1&stderr=1", 200),
                         answer("POST", "/v1.41/containers/a/wait", 200, R"({"StatusCode":0})"),
                         answer("GET", "/v1.41/containers/a/json", 200, R"({"State":{"Status":"exited"}})")});
  EXPECT_FALSE(c.client.copy_out("a", "/out", "/nonexistent/out"));
  CollectingLog log;
  EXPECT_TRUE(c.client.follow_logs("a", false, log));
  EXPECT_EQ(c.client.wait_container("a"), 0);
  EXPECT_EQ(c.client.container_status("a"), "exited");
  const auto requests = c.fake->requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_GT(requests[0].timeout, std::chrono::milliseconds(0));  // GET /version
  EXPECT_GT(requests[1].timeout, std::chrono::milliseconds(0));
  EXPECT_GT(requests[1].stall_timeout, std::chrono::milliseconds(0));
  EXPECT_EQ(requests[2].timeout, std::chrono::milliseconds(0));
  EXPECT_EQ(requests[2].stall_timeout, std::chrono::milliseconds(0));
  EXPECT_EQ(requests[3].timeout, std::chrono::milliseconds(0));
  EXPECT_GT(requests[4].timeout, std::chrono::milliseconds(0));
}

TEST(DockerClient, FollowLogsDemuxesFramesSplitAcrossChunks) {
  Reply logs = answer("GET", "/v1.41/containers/a/logs?follow=1&stdout=1&stderr=1", 200);
  logs.chunks = {std::string("\x01\x00\x00", 3), std::string("\x00\x00\x00\x00\x03hi", 7),
                 std::string("\n\x02\x00\x00\x00\x00\x00\x00\x04", 9), "err\n"};
  auto c = connect_with({logs});
  CollectingLog log;
  ASSERT_TRUE(c.client.follow_logs("a", false, log));
  EXPECT_EQ(log.out, "hi\n");
  EXPECT_EQ(log.err, "err\n");
}

TEST(DockerClient, FollowLogsReportsACorruptStreamAndATruncatedOne) {
  Reply bad = answer("GET", "/v1.41/containers/a/logs?follow=1&stdout=1&stderr=1", 200,
                     std::string("\x07\x01\x00\x00\x00\x00\x00\x01x", 9));
  Reply cut = answer("GET", "/v1.41/containers/a/logs?follow=1&stdout=1&stderr=1", 200,
                     std::string("\x01\x00\x00\x00\x00\x00\x00\x09x", 9));
  auto c = connect_with({bad, cut});
  CollectingLog log;
  EXPECT_EQ(c.client.follow_logs("a", false, log).error().kind, ErrorKind::protocol);
  EXPECT_EQ(c.client.follow_logs("a", false, log).error().kind, ErrorKind::protocol);
}

TEST(DockerClient, FollowLogsOfATtyContainerIsRaw) {
  auto c = connect_with({answer("GET", "/v1.41/containers/t/logs?follow=1&stdout=1&stderr=1", 200, "tty line\r\n")});
  CollectingLog log;
  ASSERT_TRUE(c.client.follow_logs("t", true, log));
  EXPECT_EQ(log.out, "tty line\r\n");
}

TEST(DockerClient, EngineDyingMidStreamIsEngineDied) {
  Reply logs = answer("GET", "/v1.41/containers/a/logs?follow=1&stdout=1&stderr=1", 200,
                      std::string("\x01\x00\x00\x00\x00\x00\x00\x07started", 15));
  logs.error = TransportError{TransportErrorKind::closed, "the engine at /s closed the connection mid-response"};
  auto c = connect_with({logs});
  CollectingLog log;
  auto followed = c.client.follow_logs("a", false, log);
  ASSERT_FALSE(followed);
  EXPECT_EQ(followed.error().kind, ErrorKind::engine_died);
  EXPECT_EQ(followed.error().message,
            "following the output of container a: engine died: the engine at /s closed the connection mid-response");
  EXPECT_EQ(log.out, "started");
}

}  // namespace
}  // namespace orc::engine
