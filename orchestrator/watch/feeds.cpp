#include "orchestrator/watch/feeds.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::watch {

namespace {

bool is_cudnn_token(std::string_view t) {
  if (!t.starts_with("cudnn")) return false;
  const std::string_view digits = t.substr(5);
  return std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
}

// "ubuntu24.04", "ubi9", "rockylinux9", "centos7": letters, then a version.
bool is_os_token(std::string_view t) {
  const auto first_digit = t.find_first_of("0123456789");
  return first_digit != std::string_view::npos && first_digit > 0 &&
         std::ranges::all_of(t.substr(0, first_digit), [](char c) { return c >= 'a' && c <= 'z'; }) &&
         util::Version::parse(t.substr(first_digit)).has_value();
}

// "registry:5000/nvidia/cuda" from the client's "http://registry:5000/nvidia/cuda".
std::string reference_base(std::string_view url) {
  if (const auto scheme = url.find("://"); scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  return std::string(url);
}

class RegistryFeed final : public Feed {
 public:
  RegistryFeed(registry::ClientOptions options, TagFilter filter, std::shared_ptr<net::Transport> transport,
               std::size_t page_size)
      : m_client(std::move(options), std::move(transport)), m_filter(std::move(filter)), m_page_size(page_size) {}

  std::string name() const override { return "registry " + reference_base(m_client.display_url()); }

  std::expected<std::vector<Offer>, std::string> poll() override {
    auto tags = m_client.list_tags(m_page_size);
    if (!tags) return std::unexpected(name() + ": listing tags: " + tags.error().message);
    std::vector<Offer> out;
    for (const auto& tag : *tags) {
      const auto parsed = parse_cuda_tag(tag);
      if (!parsed || !m_filter.keeps(*parsed)) continue;
      auto manifest = m_client.get_manifest(tag);
      if (!manifest) return std::unexpected(name() + ": tag " + tag + ": " + manifest.error().message);
      Offer offer{.feed = name(),
                  .toolkit = parsed->toolkit,
                  .cudnn = std::nullopt,
                  .image = reference_base(m_client.display_url()) + ":" + tag,
                  .digest = manifest->digest.to_string(),
                  .detail = parsed->flavour + " " + parsed->os};
      if (parsed->cudnn && parsed->cudnn->size() > 5)
        offer.cudnn = util::Version::parse(parsed->cudnn->substr(5)).value_or(util::Version{});
      if (parsed->cudnn) offer.detail = *parsed->cudnn + " " + offer.detail;
      out.push_back(std::move(offer));
    }
    if (out.empty()) return std::unexpected(nothing_kept(tags->size()));
    return out;
  }

 private:
  // A repository without one tag the filter keeps is not what the entry
  // means to watch (another repository, another os): "feed ok, 0 offers"
  // would hide that until someone wonders why nothing is ever rebuilt.
  std::string nothing_kept(std::size_t tags) const {
    const std::string example = std::string("13.0.2") + (m_filter.cudnn ? "-cudnn" : "") + "-" +
                                (m_filter.flavour.empty() ? "devel" : m_filter.flavour) + "-" +
                                (m_filter.os.empty() ? "ubuntu24.04" : m_filter.os);
    return name() + ": " +
           (tags == 0 ? "the repository lists no tag" : "none of its " + std::to_string(tags) + " tags") +
           " is an nvidia/cuda-scheme tag this entry keeps (flavour " +
           (m_filter.flavour.empty() ? std::string("any") : m_filter.flavour) + ", os " +
           (m_filter.os.empty() ? std::string("any") : m_filter.os) + (m_filter.cudnn ? ", with" : ", without") +
           " cuDNN); expected tags such as " + example +
           ": check url, flavour, os and cudnn of this 'watch: images' entry";
  }

  registry::Client m_client;
  TagFilter m_filter;
  std::size_t m_page_size;
};

class RedistFeed final : public Feed {
 public:
  RedistFeed(std::string base_url, std::shared_ptr<net::Transport> transport)
      : m_base(std::move(base_url)), m_transport(std::move(transport)) {
    if (!m_base.ends_with('/')) m_base += '/';
  }

  std::string name() const override { return "redist " + m_base; }

  std::expected<std::vector<Offer>, std::string> poll() override {
    auto listing = get(m_base);
    if (!listing) return std::unexpected(listing.error());
    const std::vector<std::string> files = redistrib_names(*listing);
    if (files.empty())
      return std::unexpected(name() + ": the page links no redistrib_X.Y.Z.json manifest; expected NVIDIA's " +
                             k_expected);
    // Each manifest is one more GET: an index is followed only as far as
    // NVIDIA's could ever reach, so a page of links cannot hold a cycle.
    if (files.size() > k_max_redist_manifests)
      return std::unexpected(
          name() + ": the page links " + std::to_string(files.size()) + " redistrib_*.json manifests, more than the " +
          std::to_string(k_max_redist_manifests) +
          " a feed follows (NVIDIA's CUDA index links about 150); none was read: expected NVIDIA's " + k_expected);
    std::vector<Offer> out;
    for (const auto& file : files) {
      auto body = get(m_base + file);
      if (!body) return std::unexpected(body.error());
      auto manifest = parse_redistrib(*body);
      if (!manifest) return std::unexpected(name() + file + ": " + manifest.error());
      const std::string detail = file + " (" + manifest->release_date + ")";
      if (manifest->product == "cuda") {
        out.push_back({.feed = name(), .toolkit = manifest->label, .cudnn = std::nullopt, .detail = detail});
        continue;
      }
      if (manifest->product != "cudnn") continue;
      const auto version = manifest->component("cudnn");
      const auto cudnn = util::Version::parse(version.value_or(manifest->label.str()));
      for (const std::string& variant : manifest->cuda_variants) {
        const auto cuda = util::Version::parse(variant);
        if (!cuda || !cudnn) continue;
        out.push_back({.feed = name(), .toolkit = *cuda, .cudnn = *cudnn, .detail = detail});
      }
    }
    if (out.empty())
      return std::unexpected(name() + ": " +
                             (files.size() == 1 ? std::string("its one manifest names")
                                                : "its " + std::to_string(files.size()) + " manifests name") +
                             " no CUDA or cuDNN release (release_product \"cuda\", or \"cudnn\" with cuda_variant); "
                             "expected NVIDIA's " +
                             k_expected);
    return out;
  }

 private:
  std::expected<std::string, std::string> get(const std::string& url) {
    net::Request request{
        .method = "GET", .url = url, .headers = {}, .body = std::string(), .timeout = std::chrono::seconds(60)};
    auto response = m_transport->send(request);
    if (!response) return std::unexpected(name() + ": GET " + url + ": " + response.error().message);
    if (!response->ok()) return std::unexpected(name() + ": GET " + url + ": HTTP " + std::to_string(response->status));
    return std::move(response->body);
  }

  static constexpr const char* k_expected =
      "redistributable index, a directory such as https://developer.download.nvidia.com/compute/cuda/redist/ whose "
      "page links one redistrib_X.Y.Z.json per release: check this 'watch: redist' URL";

  std::string m_base;
  std::shared_ptr<net::Transport> m_transport;
};

}  // namespace

std::optional<CudaTag> parse_cuda_tag(std::string_view tag) {
  // Words split on '-'; an empty word ("13.0.2--devel-...") is no tag of the scheme.
  if (tag.empty() || tag.front() == '-' || tag.back() == '-' || tag.find("--") != std::string_view::npos)
    return std::nullopt;
  const std::vector<std::string> parts = util::split_any(tag, "-");
  if (parts.size() < 3 || parts.size() > 4) return std::nullopt;
  auto version = util::Version::parse(parts.front());
  if (!version || version->size() != 3) return std::nullopt;
  CudaTag out{.toolkit = *version,
              .cudnn = std::nullopt,
              .flavour = std::string(parts[parts.size() - 2]),
              .os = std::string(parts.back())};
  if (out.flavour != "base" && out.flavour != "runtime" && out.flavour != "devel") return std::nullopt;
  if (!is_os_token(parts.back())) return std::nullopt;
  if (parts.size() == 4) {
    if (!is_cudnn_token(parts[1])) return std::nullopt;
    out.cudnn = std::string(parts[1]);
  }
  return out;
}

bool TagFilter::keeps(const CudaTag& tag) const {
  if (!flavour.empty() && tag.flavour != flavour) return false;
  if (!os.empty() && tag.os != os) return false;
  return cudnn == tag.cudnn.has_value();
}

std::unique_ptr<Feed> registry_feed(registry::ClientOptions options, TagFilter filter,
                                    std::shared_ptr<net::Transport> transport, std::size_t page_size) {
  return std::make_unique<RegistryFeed>(std::move(options), std::move(filter), std::move(transport), page_size);
}

std::optional<std::string> RedistManifest::component(std::string_view name) const {
  for (const auto& [n, v] : components)
    if (n == name) return v;
  return std::nullopt;
}

std::expected<RedistManifest, std::string> parse_redistrib(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return std::unexpected("not a JSON object");
  const auto string_at = [&](const char* key) -> std::optional<std::string> {
    const auto it = json.find(key);
    if (it == json.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto label = string_at("release_label");
  if (!label) return std::unexpected("no release_label");
  auto version = util::Version::parse(*label);
  if (!version) return std::unexpected("release_label '" + util::printable(*label) + "': " + version.error());
  RedistManifest out{.product = string_at("release_product").value_or(""),
                     .label = *version,
                     .release_date = string_at("release_date").value_or("")};
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!it->is_object()) continue;
    const auto v = it->find("version");
    if (v != it->end() && v->is_string()) out.components.emplace_back(it.key(), v->get<std::string>());
    const auto variants = it->find("cuda_variant");
    if (it.key() == "cudnn" && variants != it->end() && variants->is_array())
      for (const auto& variant : *variants)
        if (variant.is_string()) out.cuda_variants.push_back(variant.get<std::string>());
  }
  return out;
}

std::vector<std::string> redistrib_names(std::string_view listing) {
  std::vector<std::string> out;
  std::set<std::string, std::less<>> seen;
  constexpr std::string_view k_href = "href=\"";
  for (std::size_t at = listing.find(k_href); at != std::string_view::npos; at = listing.find(k_href, at)) {
    at += k_href.size();
    const std::size_t end = listing.find('"', at);
    if (end == std::string_view::npos) break;
    std::string_view target = listing.substr(at, end - at);
    if (const auto slash = target.rfind('/'); slash != std::string_view::npos) target.remove_prefix(slash + 1);
    if (!target.starts_with("redistrib_") || !target.ends_with(".json")) continue;
    const std::string_view version = target.substr(10, target.size() - 15);
    if (!util::Version::parse(version)) continue;
    if (seen.insert(std::string(target)).second) out.emplace_back(target);
  }
  return out;
}

std::unique_ptr<Feed> redist_feed(std::string base_url, std::shared_ptr<net::Transport> transport) {
  return std::make_unique<RedistFeed>(std::move(base_url), std::move(transport));
}

}  // namespace orc::watch
