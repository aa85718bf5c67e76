// libFuzzer target for what a container engine sends back (Docker Engine
// API, Podman's compatible API): the JSON answers of engine/answers, the
// JSON-lines progress of a build or import cut at arbitrary points, and the
// multiplexed log stream in each mode, fed in pieces as a socket delivers
// them. An engine is an outside system: nothing it sends may crash us.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "orchestrator/engine/answers.hpp"
#include "orchestrator/engine/docker.hpp"
#include "orchestrator/engine/log_stream.hpp"
#include "orchestrator/engine/progress.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using orc::fuzz::check;
using namespace orc::engine;

class CountingSink final : public LogSink {
 public:
  void on_output(OutputStream, std::string_view bytes) override { received += bytes.size(); }
  std::size_t received = 0;
};

// Feeds `text` in pieces whose lengths come from the input's own bytes, so
// frame headers and JSON lines get split everywhere.
template <typename Feed>
void in_pieces(std::string_view text, Feed feed) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t piece = 1 + static_cast<unsigned char>(text[at]) % 13;
    if (!feed(text.substr(at, piece))) return;
    at += piece;
  }
}

void answers(std::string_view text) {
  if (const auto v = parse_version(text))
    check(v->api.major >= 0 && v->api.minor >= 0 && v->min_api.major >= 0 && v->min_api.minor >= 0);
  if (const auto image = read_image_info(text)) check(!image->id.empty());
  if (const auto id = read_created_id(text)) check(!id->empty());
  (void)read_wait(text);
  if (const auto status = read_container_status(text)) check(!status->empty());
  (void)read_container_list(text);
  const std::string message = read_engine_message(text, 500);
  check(!message.empty());
}

void progress(std::string_view text) {
  std::size_t events = 0;
  ProgressParser parser([&](const ProgressEvent&) { ++events; });
  in_pieces(text, [&](std::string_view piece) {
    parser.feed(piece);
    return true;
  });
  parser.finish();
  if (parser.error()) check(!parser.error()->empty());
}

void logs(std::string_view text) {
  for (const auto mode : {LogDemuxer::Mode::multiplexed, LogDemuxer::Mode::raw, LogDemuxer::Mode::detect}) {
    CountingSink sink;
    LogDemuxer demuxer(sink, mode);
    bool ok = true;
    in_pieces(text, [&](std::string_view piece) {
      const auto fed = demuxer.feed(piece);
      if (!fed) check(!fed.error().empty());
      return ok = fed.has_value();
    });
    if (ok) (void)demuxer.finish();
    check(sink.received <= text.size());
    if (mode == LogDemuxer::Mode::raw) check(ok && sink.received == text.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  answers(text);
  progress(text);
  logs(text);
  return 0;
}
