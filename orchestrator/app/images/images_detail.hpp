#pragma once
// What `orchestrate images list` and `images build` share inside the app
// module (both defined in images.cpp); the image building itself is in
// orchestrator/imaging/.
#include <expected>
#include <filesystem>
#include <optional>
#include <string>

namespace orc::app::images_detail {

// The engine's socket: `given`, else discovery (DOCKER_HOST, the Docker and
// Podman sockets). The error says where it looked.
std::expected<std::filesystem::path, std::string> engine_socket(const std::optional<std::filesystem::path>& given);

// UTC now as RFC 3339 ("2026-11-30T10:00:00Z").
std::string utc_now();

}  // namespace orc::app::images_detail
