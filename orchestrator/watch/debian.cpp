#include "orchestrator/watch/debian.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "orchestrator/util/strings.hpp"
#include "orchestrator/watch/packages_index.hpp"

namespace orc::watch {

namespace {

// dpkg's weight of one character of a non-digit run: '~' lowest (below the
// end of the string), then the end, letters, then everything else.
int order(int c) {
  if (std::isdigit(c)) return 0;
  if (std::isalpha(c)) return c;
  if (c == '~') return -1;
  if (c) return c + 256;
  return 0;
}

// dpkg's verrevcmp: alternating non-digit runs (compared by order()) and
// digit runs (compared as numbers).
int compare_part(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    int first_diff = 0;
    while ((i < a.size() && !std::isdigit(static_cast<unsigned char>(a[i]))) ||
           (j < b.size() && !std::isdigit(static_cast<unsigned char>(b[j])))) {
      const int ac = i < a.size() ? order(static_cast<unsigned char>(a[i])) : 0;
      const int bc = j < b.size() ? order(static_cast<unsigned char>(b[j])) : 0;
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    while (i < a.size() && j < b.size() && std::isdigit(static_cast<unsigned char>(a[i])) &&
           std::isdigit(static_cast<unsigned char>(b[j]))) {
      if (!first_diff) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) return 1;
    if (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j]))) return -1;
    if (first_diff) return first_diff;
  }
  return 0;
}

struct Parts {
  long epoch = 0;
  std::string_view upstream;
  std::string_view revision;
};

Parts split_version(std::string_view v) {
  Parts out;
  if (const auto colon = v.find(':'); colon != std::string_view::npos) {
    long epoch = 0;
    // Epochs are small numbers; a longer run saturates instead of overflowing.
    for (char c : v.substr(0, colon))
      epoch = !std::isdigit(static_cast<unsigned char>(c)) ? 0 : epoch > 100'000'000 ? epoch : epoch * 10 + (c - '0');
    out.epoch = epoch;
    v.remove_prefix(colon + 1);
  }
  if (const auto dash = v.rfind('-'); dash != std::string_view::npos) {
    out.revision = v.substr(dash + 1);
    v = v.substr(0, dash);
  }
  out.upstream = v;
  return out;
}

std::strong_ordering sign(int v) {
  return v < 0 ? std::strong_ordering::less : v > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
}

// An index's URL: MIRROR/dists/SUITE/COMPONENT/binary-amd64/Packages.
std::string index_url(std::string mirror, const std::string& suite, const std::string& component) {
  while (mirror.ends_with('/')) mirror.pop_back();
  return mirror + "/dists/" + suite + "/" + component + "/binary-amd64/Packages";
}

// What one component's index said.
struct ReadIndex {
  std::map<std::string, std::string, std::less<>> newest;  // wanted package -> newest version
  std::uint64_t stanzas = 0;
};

class DebianFeed final : public Feed {
 public:
  DebianFeed(std::string mirror, std::vector<WatchedImage> images, std::shared_ptr<net::Transport> transport)
      : m_mirror(std::move(mirror)), m_images(std::move(images)), m_transport(std::move(transport)) {}

  std::string name() const override { return "debian " + m_mirror; }

  std::expected<std::vector<Offer>, std::string> poll() override {
    // suite/component -> the packages any image reading it watches
    std::map<std::string, std::vector<std::string>> wanted;
    for (const WatchedImage& image : m_images)
      for (const std::string& component : image.components) {
        auto& names = wanted[image.suite + "/" + component];
        names.insert(names.end(), image.packages.begin(), image.packages.end());
      }
    std::map<std::string, ReadIndex> indexes;
    std::vector<Offer> out;
    for (const WatchedImage& image : m_images) {
      std::map<std::string, std::string, std::less<>> newest;
      std::uint64_t stanzas = 0;
      for (const std::string& component : image.components) {
        const std::string key = image.suite + "/" + component;
        if (!indexes.contains(key)) {
          auto read = read_index(image.suite, component, wanted.at(key));
          if (!read) return std::unexpected(read.error());
          indexes.emplace(key, std::move(*read));
        }
        const ReadIndex& index = indexes.at(key);
        stanzas += index.stanzas;
        for (const auto& [name, version] : index.newest) keep_newest(newest, name, version);
      }
      if (!std::ranges::any_of(image.packages, [&](const std::string& p) { return newest.contains(p); }))
        return std::unexpected(nothing_of(image, stanzas));
      Offer offer{.feed = name(),
                  .toolkit = {},
                  .cudnn = std::nullopt,
                  .image = image.reference,
                  .digest = {},
                  .detail = image.suite + " " + util::join(image.components, ","),
                  .debian = true};
      for (const std::string& package : image.packages) {
        const auto it = newest.find(package);
        if (it == newest.end()) {
          offer.missing.push_back(package);
          continue;
        }
        offer.packages.push_back(package + "=" + it->second);
        if (package == "nvidia-cuda-toolkit")
          if (auto release = cuda_release_of(it->second)) offer.toolkit = *release;
      }
      out.push_back(std::move(offer));
    }
    return out;
  }

 private:
  // An image whose suite lists none of its packages: an empty index, or
  // pages that are no index of Debian's. Offers that say every package is
  // gone would decline every rebuild for a reason that is not true.
  std::string nothing_of(const WatchedImage& image, std::uint64_t stanzas) const {
    return name() + ": the indexes of " + image.suite + " (" + util::join(image.components, ", ") + ") list " +
           (stanzas == 0   ? std::string("no package at all")
            : stanzas == 1 ? "1 package, not one of " + image.name + "'s"
                           : std::to_string(stanzas) + " packages, none of " + image.name + "'s") +
           "; expected Debian Packages indexes that hold " + util::join(image.packages, ", ") +
           ": check that 'debian: mirror' names a Debian archive (the directory that holds dists/)";
  }

  // The index of one component: Packages.xz, else .gz, else plain, as the
  // archive serves them (Debian's own mirrors drop the plain file), read as
  // it arrives.
  std::expected<ReadIndex, std::string> read_index(const std::string& suite, const std::string& component,
                                                   const std::vector<std::string>& wanted) {
    const std::string base = index_url(m_mirror, suite, component);
    std::string tried;
    for (const auto& [suffix, compression] :
         {std::pair{".xz", IndexCompression::xz}, {".gz", IndexCompression::gzip}, {"", IndexCompression::none}}) {
      const std::string url = base + suffix;
      PackagesIndexReader reader(compression, wanted);
      net::CallbackSink sink([&](std::string_view bytes) { return reader.feed(bytes).has_value(); });
      // Only an error's body is held: a 404 page, not the index.
      net::Request request{.method = "GET",
                           .url = url,
                           .headers = {},
                           .body = std::string(),
                           .timeout = std::chrono::seconds(300),
                           .max_body = std::size_t{1} << 20};
      auto response = m_transport->send(request, &sink);
      if (!response && response.error().kind == net::TransportErrorKind::aborted)
        return std::unexpected(name() + ": " + url + ": " + reader.error());
      if (!response) return std::unexpected(name() + ": GET " + url + ": " + response.error().message);
      if (response->status == 404) {
        tried += (tried.empty() ? "" : ", ") + std::string("Packages") + suffix;
        continue;
      }
      if (!response->ok())
        return std::unexpected(name() + ": GET " + url + ": HTTP " + std::to_string(response->status));
      if (auto done = reader.finish(); !done) return std::unexpected(name() + ": " + url + ": " + done.error());
      return ReadIndex{.newest = reader.newest(), .stanzas = reader.stanzas()};
    }
    return std::unexpected(name() + ": " + suite + "/" + component + " has no index (" + tried +
                           " answered 404 under " + base.substr(0, base.rfind('/')) + ")");
  }

  std::string m_mirror;
  std::vector<WatchedImage> m_images;
  std::shared_ptr<net::Transport> m_transport;
};

}  // namespace

std::strong_ordering compare_debian_versions(std::string_view a, std::string_view b) {
  const Parts pa = split_version(a);
  const Parts pb = split_version(b);
  if (pa.epoch != pb.epoch) return pa.epoch <=> pb.epoch;
  if (const int c = compare_part(pa.upstream, pb.upstream)) return sign(c);
  return sign(compare_part(pa.revision, pb.revision));
}

std::optional<util::Version> cuda_release_of(std::string_view debian_version) {
  const Parts parts = split_version(debian_version);
  std::string_view upstream = parts.upstream;
  if (const auto tilde = upstream.rfind('~'); tilde != std::string_view::npos) {
    if (auto release = util::Version::parse(upstream.substr(tilde + 1))) return *release;
    upstream = upstream.substr(0, tilde);
  }
  // "12.0.146+ds" and the like: the leading dotted number.
  const auto end = upstream.find_first_not_of("0123456789.");
  if (auto v = util::Version::parse(upstream.substr(0, end))) return *v;
  return std::nullopt;
}

std::unique_ptr<Feed> debian_feed(std::string mirror, std::vector<WatchedImage> images,
                                  std::shared_ptr<net::Transport> transport) {
  return std::make_unique<DebianFeed>(std::move(mirror), std::move(images), std::move(transport));
}

}  // namespace orc::watch
