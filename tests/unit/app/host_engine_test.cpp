// The host engine against real processes (this mirrors no app file: the
// engine's own unit binary is not ours to edit, and app links engine).
#include "orchestrator/engine/host_engine.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace orc::engine {
namespace {

namespace fs = std::filesystem;

struct Collect final : LogSink {
  void on_output(OutputStream s, std::string_view b) override { (s == OutputStream::out ? out : err) += b; }
  std::string out, err;
};

TEST(HostEngine, RewritesContainerPathsToMounts) {
  const std::vector<Mount> mounts = {{.host = "/tmp/w/src", .container = "/src", .access = Access::read_write},
                                     {.host = "/tmp/w/src-b", .container = "/src/b", .access = Access::read_only}};
  EXPECT_EQ(rewrite_container_paths("/src", mounts), "/tmp/w/src");
  EXPECT_EQ(rewrite_container_paths("/src/a.cu", mounts), "/tmp/w/src/a.cu");
  EXPECT_EQ(rewrite_container_paths("/src/b/x", mounts), "/tmp/w/src-b/x") << "the longest mount wins";
  EXPECT_EQ(rewrite_container_paths("/srcx", mounts), "/srcx");
  EXPECT_EQ(rewrite_container_paths("-DX=/src/y", mounts), "-DX=/tmp/w/src/y");
  EXPECT_EQ(rewrite_container_paths("/src/bin:/usr/bin", mounts), "/tmp/w/src/bin:/usr/bin");
}

TEST(HostEngine, RunsAProcessInTheMountedDirectoryWithItsEnvironment) {
  const fs::path dir = fs::temp_directory_path() / "orc-host-engine-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  BuildSpec spec;
  spec.argv = {"sh", "-c", "pwd; echo \"$GREETING\" >&2; exit 3"};
  spec.env = {{"GREETING", "hello"}};
  spec.mounts = {{.host = dir / "src", .container = "/src", .access = Access::read_write}};
  spec.working_dir = "/src";
  HostEngine engine;
  Collect log;
  const auto result = engine.run(spec, log);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(log.out, (dir / "src").string() + "\n");
  EXPECT_NE(log.err.find("not isolated"), std::string::npos);
  EXPECT_NE(log.err.find("hello\n"), std::string::npos);
  // One build's steps share the engine: the next step's line does not say it again.
  Collect again;
  ASSERT_TRUE(engine.run(spec, again));
  EXPECT_EQ(again.err.find("not isolated"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("[host engine] sh in " + (dir / "src").string() + "\n"), std::string::npos) << again.err;
  fs::remove_all(dir);
}

TEST(HostEngine, CopiesOutputsAndReportsAMissingProgram) {
  const fs::path dir = fs::temp_directory_path() / "orc-host-engine-out";
  fs::remove_all(dir);
  fs::create_directories(dir / "build");
  BuildSpec spec;
  spec.argv = {"touch", "/build/artifact"};
  spec.mounts = {{.host = dir / "build", .container = "/build", .access = Access::read_write}};
  spec.outputs = {{.container_path = "/build", .host_dir = dir / "out"}};
  HostEngine engine;
  Collect log;
  const auto result = engine.run(spec, log);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0);
  ASSERT_EQ(result->outputs.size(), 1u);
  ASSERT_TRUE(result->outputs[0]);
  EXPECT_EQ(result->outputs[0]->files, 1u);
  EXPECT_TRUE(fs::exists(dir / "out/build/artifact"));
  spec.argv = {"no-such-program-orc"};
  const auto missing = engine.run(spec, log);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orc::engine
