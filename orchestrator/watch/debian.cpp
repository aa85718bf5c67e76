#include "orchestrator/watch/debian.hpp"

#include <archive.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

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

std::strong_ordering sign(int v) { return v < 0 ? std::strong_ordering::less : v > 0 ? std::strong_ordering::greater
                                                                                    : std::strong_ordering::equal; }

// An index's URL: MIRROR/dists/SUITE/COMPONENT/binary-amd64/Packages.
std::string index_url(std::string mirror, const std::string& suite, const std::string& component) {
  while (mirror.ends_with('/')) mirror.pop_back();
  return mirror + "/dists/" + suite + "/" + component + "/binary-amd64/Packages";
}

class DebianFeed final : public Feed {
 public:
  DebianFeed(std::string mirror, std::vector<WatchedImage> images, std::shared_ptr<net::Transport> transport)
      : m_mirror(std::move(mirror)), m_images(std::move(images)), m_transport(std::move(transport)) {}

  std::string name() const override { return "debian " + m_mirror; }

  std::expected<std::vector<Offer>, std::string> poll() override {
    // suite/component -> package -> newest version
    std::map<std::string, std::map<std::string, std::string, std::less<>>> indexes;
    std::vector<Offer> out;
    for (const WatchedImage& image : m_images) {
      std::map<std::string, std::string, std::less<>> newest;
      for (const std::string& component : image.components) {
        const std::string key = image.suite + "/" + component;
        if (!indexes.contains(key)) {
          auto read = read_index(image.suite, component);
          if (!read) return std::unexpected(read.error());
          indexes.emplace(key, std::move(*read));
        }
        for (const auto& [name, version] : indexes.at(key)) {
          auto [it, fresh] = newest.try_emplace(name, version);
          if (!fresh && compare_debian_versions(it->second, version) < 0) it->second = version;
        }
      }
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
  // The index of one component: Packages.xz, else .gz, else plain, as the
  // archive serves them (Debian's own mirrors drop the plain file).
  std::expected<std::map<std::string, std::string, std::less<>>, std::string> read_index(const std::string& suite,
                                                                                        const std::string& component) {
    const std::string base = index_url(m_mirror, suite, component);
    std::string tried;
    for (const char* suffix : {".xz", ".gz", ""}) {
      const std::string url = base + suffix;
      net::Request request{.method = "GET",
                           .url = url,
                           .headers = {},
                           .body = std::string(),
                           .timeout = std::chrono::seconds(300),
                           .max_body = k_max_index};
      auto response = m_transport->send(request);
      if (!response) return std::unexpected(name() + ": GET " + url + ": " + response.error().message);
      if (response->status == 404) {
        tried += (tried.empty() ? "" : ", ") + std::string("Packages") + suffix;
        continue;
      }
      if (!response->ok()) return std::unexpected(name() + ": GET " + url + ": HTTP " + std::to_string(response->status));
      // The name says the compression; a body that is not in it is no index.
      const std::string_view magic = std::string_view(suffix) == ".xz"   ? std::string_view("\xfd" "7zXZ\0", 6)
                                     : std::string_view(suffix) == ".gz" ? std::string_view("\x1f\x8b", 2)
                                                                         : std::string_view();
      if (!std::string_view(response->body).starts_with(magic))
        return std::unexpected(name() + ": " + url + ": not " + (suffix + 1) + "-compressed");
      auto text = decompress_index(response->body);
      if (!text) return std::unexpected(name() + ": " + url + ": " + text.error());
      std::map<std::string, std::string, std::less<>> newest;
      for (auto& p : parse_packages_index(*text)) {
        if (p.architecture != "amd64" && p.architecture != "all") continue;
        auto [it, fresh] = newest.try_emplace(p.name, p.version);
        if (!fresh && compare_debian_versions(it->second, p.version) < 0) it->second = std::move(p.version);
      }
      return newest;
    }
    return std::unexpected(name() + ": " + suite + "/" + component + " has no index (" + tried + " answered 404 under " +
                           base.substr(0, base.rfind('/')) + ")");
  }

  // Debian's largest index (main, amd64) is about 9 MB compressed.
  static constexpr std::size_t k_max_index = std::size_t{256} << 20;

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

std::vector<IndexedPackage> parse_packages_index(std::string_view text) {
  std::vector<IndexedPackage> out;
  IndexedPackage current;
  const auto flush = [&] {
    if (!current.name.empty() && !current.version.empty()) out.push_back(std::move(current));
    current = {};
  };
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (util::trim(line).empty()) {
      flush();
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') continue;  // a continuation line
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view field = line.substr(0, colon);
    const std::string value(util::trim(line.substr(colon + 1)));
    if (field == "Package")
      current.name = value;
    else if (field == "Version")
      current.version = value;
    else if (field == "Architecture")
      current.architecture = value;
  }
  flush();
  return out;
}

std::expected<std::string, std::string> decompress_index(std::string_view bytes) {
  // Debian's largest index (main, amd64) is about 50 MB as text.
  constexpr std::size_t k_max_text = std::size_t{512} << 20;
  struct archive* a = archive_read_new();
  if (!a) return std::unexpected("libarchive could not start");
  archive_read_support_filter_xz(a);
  archive_read_support_filter_gzip(a);
  archive_read_support_format_raw(a);
  archive_read_support_format_empty(a);  // an empty component compresses nothing
  const auto fail = [a](std::string what) {
    std::string message = what + ": " + util::printable(archive_error_string(a) ? archive_error_string(a) : "?");
    archive_read_free(a);
    return std::unexpected(message);
  };
  if (archive_read_open_memory(a, bytes.data(), bytes.size()) != ARCHIVE_OK) return fail("not an index");
  struct archive_entry* entry = nullptr;
  const int header = archive_read_next_header(a, &entry);
  if (header == ARCHIVE_EOF) {  // an empty component: compressed nothing
    archive_read_free(a);
    return std::string();
  }
  if (header != ARCHIVE_OK) return fail("not an index");
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buffer, sizeof buffer);
    if (n < 0) return fail("decompressing");
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > k_max_text) {
      archive_read_free(a);
      return std::unexpected("more than " + std::to_string(k_max_text >> 20) + " MiB once decompressed: no index");
    }
  }
  archive_read_free(a);
  return out;
}

std::unique_ptr<Feed> debian_feed(std::string mirror, std::vector<WatchedImage> images,
                                  std::shared_ptr<net::Transport> transport) {
  return std::make_unique<DebianFeed>(std::move(mirror), std::move(images), std::move(transport));
}

}  // namespace orc::watch
