#pragma once
// How long one remote operation may take. An operation is one public Client
// call: a manifest, a tag listing, the referrers of a digest, a blob's
// download with every Range resume of it, an upload with its HEAD, start
// and chunks. It has one deadline for all its requests, retries, resumes
// and token requests, so a registry that trickles (a byte every 0.4 s
// passes the transport's stall check) or that breaks every connection after
// a few bytes holds it no longer than a slow honest link would take.
//
// A small exchange gets a fixed budget; a blob gets that budget plus its
// declared size at a minimum rate. Pure functions, unit-tested without a
// clock; the Client applies them (client.cpp).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace orc::registry {

struct DeadlinePolicy {
  // The whole budget of a small operation, and the base of a blob's.
  std::chrono::milliseconds base{60'000};
  // Bytes per second a blob is given time for: 512 KiB/s (4 Mbit/s).
  std::uint64_t min_rate = 512u << 10;
};

// base + bytes / min_rate, saturating instead of overflowing.
std::chrono::milliseconds deadline_for(const DeadlinePolicy& policy, std::uint64_t bytes);

// Which way an operation's bytes go, for the message that says how many moved.
enum class Direction { download, upload };

// What timed out, for its message.
struct TimedOut {
  std::string what;        // "GET blob sha256:ab12cd34ef56 (301.0 MiB)", "GET manifest saxpy--tier-new"
  std::uint64_t size = 0;  // the bytes the operation expected to move; 0: a small exchange
  Direction direction = Direction::download;
  std::uint64_t moved = 0;  // the bytes that came (or went) before the deadline
  std::chrono::milliseconds budget{0};
};

// "GET blob sha256:ab12cd34ef56 (301.0 MiB) from URL timed out: 12 B of
// 301.0 MiB came within its deadline of 662 s (60 s + 301.0 MiB at
// 512.0 KiB/s)".
std::string timed_out_message(const TimedOut& t, const DeadlinePolicy& policy, std::string_view from);

// "60 s", "2.5 s", "0.2 s".
std::string seconds_text(std::chrono::milliseconds duration);

}  // namespace orc::registry
