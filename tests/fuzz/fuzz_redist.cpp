// libFuzzer target for the pages of NVIDIA's redistributable index as the
// redist feed reads them: the input as the index page (its links) and as
// every redistrib_X.Y.Z.json it links, through the feed itself over a
// transport that answers with it. Parsers and feed must return (a value or
// an error) for every input, never throw, crash or hang; the names are
// distinct redistrib_*.json names; a poll that succeeds offers something,
// and never follows more than k_max_redist_manifests manifests.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "orchestrator/watch/feeds.hpp"

using orc::fuzz::check;

namespace {

// Answers every GET with the input: the page, and each manifest it links.
class Echo final : public orc::net::Transport {
 public:
  explicit Echo(std::string body) : m_body(std::move(body)) {}
  std::expected<orc::net::Response, orc::net::TransportError> send(const orc::net::Request&,
                                                                   orc::net::BodySink*) override {
    ++m_requests;
    return orc::net::Response{.status = 200, .headers = {}, .body = m_body};
  }
  std::size_t requests() const { return m_requests; }

 private:
  std::string m_body;
  std::size_t m_requests = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto manifest = orc::watch::parse_redistrib(text); manifest) {
    check(manifest->label.size() > 0);
    for (const auto& [name, version] : manifest->components) (void)manifest->component(name);
  } else {
    check(!manifest.error().empty());
  }
  const auto names = orc::watch::redistrib_names(text);
  std::set<std::string> seen;
  for (const auto& n : names) {
    check(n.starts_with("redistrib_") && n.ends_with(".json"));
    check(seen.insert(n).second);
  }
  const auto transport = std::make_shared<Echo>(std::string(text));
  const auto offers = orc::watch::redist_feed("http://127.0.0.1:1/cuda/", transport)->poll();
  if (offers)
    check(!offers->empty());
  else
    check(!offers.error().empty());
  check(transport->requests() <= 1 + orc::watch::k_max_redist_manifests);
  return 0;
}
