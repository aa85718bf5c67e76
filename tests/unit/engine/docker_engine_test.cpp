// The container life cycle DockerEngine::run builds from the API calls: the
// order of calls, and removal on every path out.
#include "orchestrator/engine/docker_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "tests/unit/engine/test_support.hpp"

namespace orc::engine {
namespace {

using net::TransportError;
using net::TransportErrorKind;

using testing::answer;
using testing::CollectingLog;
using testing::FakeTransport;
using testing::Reply;

constexpr const char* k_logs = "/v1.41/containers/c1/logs?follow=1&stdout=1&stderr=1";
constexpr const char* k_remove = "/v1.41/containers/c1?force=1&v=1";

std::string frame(char stream, std::string_view payload) {
  std::string f{stream, 0, 0, 0, 0, 0, 0, static_cast<char>(payload.size())};
  return f + std::string(payload);
}

Reply created() { return answer("POST", "/v1.41/containers/create", 201, R"({"Id":"c1","Warnings":[]})"); }
Reply started() { return answer("POST", "/v1.41/containers/c1/start", 204); }
Reply removed() { return answer("DELETE", k_remove, 204); }

struct Fixture {
  FakeTransport* fake;
  DockerEngine engine;
};

Fixture engine_with(std::vector<Reply> script, const CancelFlag* cancel = nullptr) {
  script.insert(script.begin(), answer("GET", "/version", 200, testing::k_docker_version));
  auto owned = std::make_unique<FakeTransport>(std::move(script));
  FakeTransport* fake = owned.get();
  auto client = DockerClient::connect(std::move(owned));
  if (!client) throw std::runtime_error(client.error().message);
  return {fake, DockerEngine(std::move(*client), cancel)};
}

std::vector<std::string> calls(const FakeTransport& fake) {
  std::vector<std::string> out;
  for (const auto& r : fake.requests()) out.push_back(r.method + " " + r.url);
  return out;
}

TEST(DockerEngine, RunsCreateStartFollowWaitRemove) {
  auto f =
      engine_with({created(), started(), answer("GET", k_logs, 200, frame(1, "hello\n") + frame(2, "warn\n")),
                   answer("POST", "/v1.41/containers/c1/wait", 200, R"({"StatusCode":0,"Error":null})"), removed()});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1", .argv = {"echo", "hello"}}, log);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->container_id, "c1");
  EXPECT_TRUE(result->removed);
  EXPECT_EQ(log.out, "hello\n");
  EXPECT_EQ(log.err, "warn\n");
  EXPECT_EQ(f.fake->left(), 0u);
  EXPECT_EQ(f.engine.name(), "docker");
}

// Podman 4.3 answers 200 and then, when inspecting the container fails,
// writes its JSON error where the next frame belongs (CI saw it once with
// `false` as the step). The stored log is whole: following again replays
// it, and each byte reaches the build log once.
TEST(DockerEngine, AStreamTheEngineBreaksOffIsFollowedAgainWithoutRepeats) {
  const std::string podman_error = R"({"cause":"no such container","message":"failed to obtain logs","response":500})";
  auto f = engine_with({created(), started(), answer("GET", k_logs, 200, frame(1, "one\n") + podman_error),
                        answer("GET", k_logs, 200, frame(1, "one\n") + frame(2, "two\n") + frame(1, "three\n")),
                        answer("POST", "/v1.41/containers/c1/wait", 200, R"({"StatusCode":1,"Error":null})"),
                        removed()});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1", .argv = {"false"}}, log);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 1);
  EXPECT_EQ(log.out, "one\nthree\n");
  EXPECT_NE(log.err.find("the engine broke off the stream with an error of its own: failed to obtain logs; following "
                         "the output again after byte 4"),
            std::string::npos)
      << log.err;
  EXPECT_TRUE(log.err.ends_with("two\n")) << log.err;
  EXPECT_EQ(f.fake->left(), 0u);
}

// An engine that keeps breaking the stream off is an error after the last
// attempt, with the engine's own message, and the container is removed.
TEST(DockerEngine, AStreamBrokenOffAtEveryAttemptIsAnError) {
  const std::string broken = frame(1, "x") + "{\"message\":\"still failing\"}";
  auto f = engine_with({created(), started(), answer("GET", k_logs, 200, broken), answer("GET", k_logs, 200, broken),
                        answer("GET", k_logs, 200, broken), removed()});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::protocol);
  EXPECT_NE(result.error().message.find("still failing"), std::string::npos) << result.error().message;
  EXPECT_EQ(log.out, "x");
  EXPECT_EQ(f.fake->left(), 0u);
}

TEST(DockerEngine, NonZeroExitIsAResultNotAnError) {
  auto f =
      engine_with({created(), started(), answer("GET", k_logs, 200),
                   answer("POST", "/v1.41/containers/c1/wait", 200, R"({"StatusCode":3,"Error":null})"), removed()});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, 3);
}

TEST(DockerEngine, StartFailureStillRemovesTheContainer) {
  auto f = engine_with(
      {created(), answer("POST", "/v1.41/containers/c1/start", 400, R"({"message":"exec: no such file"})"), removed()});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1", .argv = {"/nonexistent"}}, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "starting container c1: exec: no such file");
  EXPECT_EQ(calls(*f.fake).back(), std::string("DELETE ") + k_remove);
}

TEST(DockerEngine, ASinkThatThrowsStillRemovesTheContainer) {
  struct Throwing final : LogSink {
    void on_output(OutputStream, std::string_view) override { throw std::runtime_error("disk full"); }
  } log;
  auto f = engine_with({created(), started(), answer("GET", k_logs, 200, frame(1, "x")), removed()});
  EXPECT_THROW((void)f.engine.run(BuildSpec{.image = "orc/base:1"}, log), std::runtime_error);
  EXPECT_EQ(calls(*f.fake).back(), std::string("DELETE ") + k_remove);
  EXPECT_EQ(f.fake->left(), 0u);
}

TEST(DockerEngine, CancellationKillsAndRemoves) {
  CancelFlag cancel;
  Reply logs = answer("GET", k_logs, 200);
  logs.chunks = {frame(1, "started\n"), frame(1, "never seen\n")};
  // The flag is set while output streams, as a SIGINT handler would.
  logs.before = [&] { cancel.request(); };
  auto f =
      engine_with({created(), started(), logs, answer("POST", "/v1.41/containers/c1/kill", 204), removed()}, &cancel);
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::cancelled);
  EXPECT_EQ(result.error().message, "cancelled: container c1 stopped and removed");
  EXPECT_EQ(log.out, "started\n");
  EXPECT_EQ(f.fake->left(), 0u);
}

TEST(DockerEngine, CancelledBeforeStartNeverStarts) {
  CancelFlag cancel;
  cancel.request();
  auto f = engine_with({created(), removed()}, &cancel);
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::cancelled);
  EXPECT_EQ(f.fake->left(), 0u);
}

TEST(DockerEngine, EngineDyingMidRunIsReported) {
  Reply logs = answer("GET", k_logs, 200, frame(1, "started\n"));
  logs.error = TransportError{TransportErrorKind::closed, "closed mid-response"};
  Reply gone{.method = "DELETE",
             .url = k_remove,
             .error = TransportError{TransportErrorKind::connection_refused, "connection refused"}};
  auto f = engine_with({created(), started(), logs, gone});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::engine_died);
  EXPECT_TRUE(result.error().engine_unreachable());
}

// The engine may stop its containers on the way down, ending the stream
// cleanly; the wait that follows then finds nobody listening.
TEST(DockerEngine, EngineGoneAfterTheStreamEndedIsEngineDied) {
  Reply wait{.method = "POST",
             .url = "/v1.41/containers/c1/wait",
             .error = TransportError{TransportErrorKind::connection_refused, "nothing is listening on /s"}};
  Reply gone{.method = "DELETE",
             .url = k_remove,
             .error = TransportError{TransportErrorKind::connection_refused, "nothing is listening on /s"}};
  auto f = engine_with({created(), started(), answer("GET", k_logs, 200), wait, gone});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::engine_died);
  EXPECT_TRUE(result.error().message.starts_with("the engine went away during the run: waiting for container c1"));
}

Reply status(const char* state) {
  return answer("GET", "/v1.41/containers/c1/json", 200,
                std::string(R"({"Id":"c1","State":{"Status":")") + state + "\"}}");
}

// Podman's stream that stays open after its container exited: while it is
// silent the state is asked; once exited and silent for the grace, the run
// stops following, waits and removes as usual.
TEST(DockerEngine, AStreamLeftOpenAfterTheContainerExitedIsStopped) {
  Reply logs = answer("GET", k_logs, 200, frame(1, "built\n"));
  logs.hold = true;
  auto f =
      engine_with({created(), started(), logs, status("running"), status("exited"),
                   answer("POST", "/v1.41/containers/c1/wait", 200, R"({"StatusCode":0,"Error":null})"), removed()});
  f.engine.set_exit_watch({.every = std::chrono::milliseconds(20), .grace = std::chrono::milliseconds(60)});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_TRUE(result->removed);
  EXPECT_EQ(log.out, "built\n");
  EXPECT_EQ(f.fake->left(), 0u);
  const auto made = calls(*f.fake);
  EXPECT_EQ(std::count(made.begin(), made.end(), "GET /v1.41/containers/c1/json"), 2);
}

// A cancel while the stream is silent (no output to notice it by) still
// stops it, kills and removes.
TEST(DockerEngine, CancelWhileTheStreamIsSilentStopsIt) {
  CancelFlag cancel;
  std::thread canceller;
  Reply logs = answer("GET", k_logs, 200);
  logs.hold = true;
  logs.before = [&] {
    canceller = std::thread([&cancel] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      cancel.request();
    });
  };
  auto f =
      engine_with({created(), started(), logs, answer("POST", "/v1.41/containers/c1/kill", 204), removed()}, &cancel);
  f.engine.set_exit_watch({.every = std::chrono::hours(1), .grace = std::chrono::hours(1)});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1"}, log);
  if (canceller.joinable()) canceller.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::cancelled);
  EXPECT_EQ(f.fake->left(), 0u);
}

TEST(DockerEngine, OutputsAreCopiedBeforeRemovalAndTheirFailuresReported) {
  auto f = engine_with({created(), started(), answer("GET", k_logs, 200),
                        answer("POST", "/v1.41/containers/c1/wait", 200, R"({"StatusCode":2,"Error":null})"),
                        answer("GET", "/v1.41/containers/c1/archive?path=%2Fbuild%2Fout", 404,
                               R"({"message":"Could not find the file /build/out in container c1"})"),
                        removed()});
  CollectingLog log;
  auto result = f.engine.run(BuildSpec{.image = "orc/base:1", .outputs = {{"/build/out", "/tmp/unused"}}}, log);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, 2);
  ASSERT_EQ(result->outputs.size(), 1u);
  ASSERT_FALSE(result->outputs[0]);
  EXPECT_EQ(result->outputs[0].error().kind, ErrorKind::not_found);
  EXPECT_TRUE(result->removed);
}

}  // namespace
}  // namespace orc::engine
