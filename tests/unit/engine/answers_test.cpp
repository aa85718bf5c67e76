// The readers of the engine's JSON answers (engine/answers): what a real
// Docker or Podman sends is read; what a broken or hostile engine sends is
// an error that says what was missing, never a wrong value.
#include "orchestrator/engine/answers.hpp"

#include <gtest/gtest.h>

namespace orc::engine {
namespace {

TEST(EngineAnswers, ApiVersionHasDigitsOnly) {
  EXPECT_EQ(ApiVersion::parse("1.43"), (ApiVersion{1, 43}));
  // std::from_chars reads a sign; an engine claiming "-1.41" or "1.-5" is
  // not speaking any version.
  EXPECT_FALSE(ApiVersion::parse("-1.41"));
  EXPECT_FALSE(ApiVersion::parse("1.-5"));
  EXPECT_FALSE(ApiVersion::parse("1."));
  EXPECT_FALSE(ApiVersion::parse(".41"));
}

TEST(EngineAnswers, WaitReadsDockerAndPodmanOrder) {
  const auto docker = read_wait(R"({"StatusCode": 3, "Error": null})");
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->status_code, 3);
  EXPECT_TRUE(docker->error.empty());
  const auto podman = read_wait(R"({"Error": {"Message": "container died"}, "StatusCode": 137})");
  ASSERT_TRUE(podman);
  EXPECT_EQ(podman->status_code, 137);
  EXPECT_EQ(podman->error, "container died");
}

TEST(EngineAnswers, WaitRefusesAStatusNoContainerReturns) {
  // get<int>() of this would be a silent narrowing to some other exit code.
  const auto huge = read_wait(R"({"StatusCode": 99999999999999})");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error(), "no StatusCode in the answer");
  EXPECT_FALSE(read_wait(R"({"StatusCode": "0"})"));
  EXPECT_FALSE(read_wait("[0]"));
  EXPECT_FALSE(read_wait(""));
}

TEST(EngineAnswers, ContainerStatusAndCreatedId) {
  EXPECT_EQ(read_container_status(R"({"State": {"Status": "exited"}})").value(), "exited");
  EXPECT_FALSE(read_container_status(R"({"State": "exited"})"));
  EXPECT_FALSE(read_container_status(R"({"State": {"Status": ""}})"));
  EXPECT_EQ(read_created_id(R"({"Id": "e90e34656806", "Warnings": []})").value(), "e90e34656806");
  EXPECT_FALSE(read_created_id(R"({"Id": 7})"));
}

TEST(EngineAnswers, ContainerListSkipsWhatIsNotAnEntry) {
  const auto list = read_container_list(R"([{"Id": "a", "State": "running", "Image": "x"}, 7, {"Id": null}])");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "a");
  EXPECT_EQ((*list)[0].state, "running");
  EXPECT_TRUE((*list)[1].id.empty());
  EXPECT_EQ(read_container_list("{}").error(), "not a list");
}

TEST(EngineAnswers, EngineMessageNeverEmpty) {
  EXPECT_EQ(read_engine_message(R"({"message": "No such image: x"})", 404), "No such image: x");
  // An empty message says nothing; the body or the status does.
  EXPECT_EQ(read_engine_message(R"({"message": ""})", 500), R"({"message": ""})");
  EXPECT_EQ(read_engine_message("  \n", 502), "HTTP status 502");
  EXPECT_EQ(read_engine_message(std::string(600, 'x'), 500).size(), 503u);
}

}  // namespace
}  // namespace orc::engine
