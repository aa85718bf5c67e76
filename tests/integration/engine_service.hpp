#pragma once
// The container engine an engine integration binary runs against: started
// by that binary's gtest Environment (dockerd in engine_docker_test.cpp,
// podman's API service in engine_podman_test.cpp) once for the whole run,
// with the base image imported through our own client. The shared cases in
// engine_suite.cpp read it.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace orc::integration {

struct EngineService {
  std::string name;              // "dockerd", "podman"
  std::filesystem::path dir;     // everything the service writes
  std::filesystem::path socket;  // its API socket
  pid_t pid = 0;                 // the daemon, for the engine-dies case
  std::string image;             // the imported base image's reference
  // Set when the suite cannot run here (not root, no daemon): every case
  // skips with it.
  std::string skip_reason;
  // Set when the service started but setting up failed (connecting,
  // importing): every case fails with it.
  std::string setup_error;
};

EngineService& engine_service();

// Seconds since `start`, one decimal, for the timing lines the suites print.
std::string seconds_since(std::chrono::steady_clock::time_point start);

// Prints one "[  engine  ] ..." line (setup steps and their timings).
void say(const std::string& line);

// ORC_SOURCE_DIR/scripts/NAME.
std::string script_path(const char* name);

// The last line of a script's output (the scripts print their result last).
std::string last_line(const std::string& output);

// Mounts a tmpfs on `dir` for the service's storage. Deleting an image's
// unpacked layer from this machine's disk after containers ran on it takes
// ~20 s (more than the whole suite); unmounting a tmpfs takes none. Says
// so and carries on with the disk when it cannot mount.
void mount_tmpfs(const std::filesystem::path& dir);
// Unmounts it (lazily: nothing of the service should be left using it) and
// removes `dir`.
void unmount_and_remove(const std::filesystem::path& dir);

// Once the service answers: makes or reuses the base rootfs tar
// (scripts/make-base-image.sh, cached in ORC_FIXTURES_DIR) and imports it
// through our client as `image`, setting skip_reason or setup_error when
// that fails.
void import_base_image(EngineService& service);

}  // namespace orc::integration
