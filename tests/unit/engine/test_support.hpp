#pragma once
// What the engine's protocol tests share besides the scripted transport
// (tests/unit/net/fake_transport.hpp): engines' /version answers and a
// LogSink that keeps what it is given.
#include <string>
#include <string_view>

#include "orchestrator/engine/log_stream.hpp"
#include "tests/unit/net/fake_transport.hpp"

namespace orc::engine::testing {

using net::testing::answer;
using net::testing::failure;
using net::testing::FakeTransport;
using net::testing::Reply;

inline constexpr const char* k_docker_version =
    R"({"Platform":{"Name":"Docker Engine - Community"},"Components":[{"Name":"Engine","Version":"20.10.24"}],)"
    R"("Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux","Arch":"amd64"})";
inline constexpr const char* k_podman_version =
    R"({"Platform":{"Name":"linux/amd64/debian-12"},"Components":[{"Name":"Podman Engine","Version":"4.3.1"}],)"
    R"("Version":"4.3.1","ApiVersion":"1.41","MinAPIVersion":"1.24","Os":"linux","Arch":"amd64"})";

// A LogSink that keeps what it is given.
struct CollectingLog final : LogSink {
  std::string out, err, both;
  void on_output(OutputStream stream, std::string_view bytes) override {
    (stream == OutputStream::out ? out : err).append(bytes);
    both.append(bytes);
  }
};

}  // namespace orc::engine::testing
