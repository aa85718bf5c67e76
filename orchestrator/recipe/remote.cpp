// The `remote:`, `trusted_keys:` and `watch:` keys: where push, pull and
// fetch meet other machines, whose signatures fetch accepts, and what the
// watcher reads.
#include <algorithm>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe {

// Only the shape is checked here (scheme, host, repository path); whether the
// registry answers is the business of the command that uses it.
std::string remote_url_problem(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("http://"))
    rest = url.substr(7);
  else if (url.starts_with("https://"))
    rest = url.substr(8);
  else
    return "expected an http:// or https:// URL";
  const auto slash = rest.find('/');
  if (slash == 0 || rest.empty()) return "the URL names no host";
  if (slash == std::string_view::npos || slash + 1 == rest.size())
    return "the URL names no repository (like http://HOST:5000/team/artifacts)";
  if (rest.find_first_of(" \t\r\n?#") != std::string_view::npos) return "the URL has a blank, '?' or '#'";
  return {};
}

namespace detail {

std::string parse_remote(Reader& reader, const YAML::Node& remote) {
  const auto text = reader.string(remote, "for 'remote'");
  if (!text) return {};
  // The URL may carry credentials: the message names the problem, never the text.
  if (const std::string problem = remote_url_problem(*text); !problem.empty()) {
    reader.error(remote, "invalid 'remote': " + problem);
    return {};
  }
  return *text;
}

std::vector<std::string> parse_trusted_keys(Reader& reader, const YAML::Node& keys) {
  std::vector<std::string> out;
  if (!reader.expect_list(keys, "of PEM files or inline PEM for 'trusted_keys'")) return out;
  for (const auto& item : keys) {
    const auto text = reader.string(item, "in 'trusted_keys'");
    if (!text) continue;
    if (text->empty())
      reader.error(item, "empty entry in 'trusted_keys'");
    else if (text->starts_with("-----BEGIN"))
      out.push_back(*text);
    else
      out.push_back(reader.file().resolve(*text).string());
  }
  return out;
}

std::optional<std::string> parse_watch_policy(Reader& reader, const YAML::Node& node) {
  const auto text = reader.string(node, "for 'watch' (a policy)");
  if (!text) return std::nullopt;
  if (std::ranges::find(k_watch_policies, *text) != k_watch_policies.end()) return *text;
  std::vector<std::string> names(k_watch_policies.begin(), k_watch_policies.end());
  reader.error(node, "unknown watch policy '" + *text + "' (known: patch, minor, major, pinned)",
               util::did_you_mean(*text, names));
  return std::nullopt;
}

namespace {

std::optional<WatchImage> parse_watch_image(Reader& reader, const YAML::Node& node) {
  if (!reader.expect_mapping(node, "for a watched image (with 'url')")) return std::nullopt;
  const Fields fields = reader.fields(node, k_watch_image_keys);
  if (!reader.require(fields, node, k_watch_image_required)) return std::nullopt;
  WatchImage image{.where = reader.where(node)};
  if (const Field* f = fields.find("url")) {
    const auto url = reader.string(f->value, "for 'url'");
    // The URL may carry credentials: the message names the problem, never the text.
    if (url && !remote_url_problem(*url).empty())
      reader.error(f->value, "invalid watched image 'url': " + remote_url_problem(*url));
    else if (url)
      image.url = *url;
  }
  if (const Field* f = fields.find("flavour")) {
    const auto flavour = reader.string(f->value, "for 'flavour'");
    if (flavour && *flavour != "base" && *flavour != "runtime" && *flavour != "devel")
      reader.error(f->value, "unknown flavour '" + *flavour + "' (nvidia/cuda has base, runtime and devel)");
    else if (flavour)
      image.flavour = *flavour;
  }
  if (const Field* f = fields.find("os"))
    if (const auto os = reader.string(f->value, "for 'os'")) image.os = *os;
  if (const Field* f = fields.find("cudnn")) {
    const auto text = reader.string(f->value, "for 'cudnn'");
    if (text && *text != "true" && *text != "false")
      reader.error(f->value, "'cudnn' is true or false");
    else if (text)
      image.cudnn = *text == "true";
  }
  return image;
}

// 'redist' and 'debian: mirror' are printed as given: http(s), no
// credentials, query, fragment or blank. Empty when fine.
std::string printed_url_problem(const std::string& url) {
  const std::string_view rest =
      std::string_view(url).substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  if (!url.starts_with("http://") && !url.starts_with("https://")) return "expected an http:// or https:// URL";
  if (rest.substr(0, rest.find('/')).find('@') != std::string_view::npos ||
      url.find_first_of("?# \t") != std::string::npos)
    return "no credentials, query, fragment or blank (it is printed as given)";
  return {};
}

WatchDebian parse_watch_debian(Reader& reader, const YAML::Node& node) {
  WatchDebian out{.where = reader.where(node)};
  if (!reader.expect_mapping(node, "for 'debian' (with 'mirror' and/or 'images'; {} for the defaults)")) return out;
  const Fields fields = reader.fields(node, k_watch_debian_keys);
  if (const Field* f = fields.find("mirror")) {
    const auto url = reader.string(f->value, "for 'mirror'");
    if (url && !printed_url_problem(*url).empty())
      reader.error(f->value, "invalid 'debian' mirror: " + printed_url_problem(*url) +
                                 " (the directory holding dists/, as in apt's sources)");
    else if (url)
      out.mirror = *url;
  }
  if (const Field* f = fields.find("images"); f && reader.expect_list(f->value, "of offline image names for 'images'"))
    for (const auto& item : f->value)
      if (const auto name = reader.string(item, "in 'debian: images' (an offline image, as `images list` names it)"))
        out.images.push_back({.name = *name, .where = reader.where(item)});
  return out;
}

}  // namespace

WatchSettings parse_watch(Reader& reader, const YAML::Node& watch) {
  WatchSettings out;
  if (!reader.expect_mapping(watch, "for 'watch' (with 'images' or 'redist')")) return out;
  const Fields fields = reader.fields(watch, k_watch_keys);
  if (const Field* f = fields.find("policy"))
    if (auto policy = parse_watch_policy(reader, f->value)) out.policy = *policy;
  if (const Field* f = fields.find("images"); f && reader.expect_list(f->value, "of images for 'images'"))
    for (const auto& item : f->value)
      if (auto image = parse_watch_image(reader, item)) out.images.push_back(std::move(*image));
  if (const Field* f = fields.find("redist"); f && reader.expect_list(f->value, "of index URLs for 'redist'"))
    for (const auto& item : f->value) {
      const auto url = reader.string(item, "in 'redist'");
      if (!url) continue;
      if (const std::string problem = printed_url_problem(*url); !problem.empty())
        reader.error(item, "invalid 'redist' URL: " + problem + (problem.starts_with("expected") ? " of a directory" : ""));
      else
        out.redist.push_back(*url);
    }
  if (const Field* f = fields.find("debian")) out.debian = parse_watch_debian(reader, f->value);
  if (const Field* f = fields.find("notify")) {
    // The message never quotes the URL: a webhook's path is its secret.
    const auto url = reader.string(f->value, "for 'notify'");
    if (url && !url->starts_with("http://") && !url->starts_with("https://"))
      reader.error(f->value, "invalid 'notify': expected an http:// or https:// URL that takes a JSON POST");
    else if (url && url->find_first_of(" \t\r\n") != std::string::npos)
      reader.error(f->value, "invalid 'notify': the URL has a blank");
    else if (url)
      out.notify = *url;
  }
  if (const Field* f = fields.find("keep")) {
    const auto text = reader.string(f->value, "for 'keep'");
    const bool digits =
        text && !text->empty() && text->size() <= 6 && text->find_first_not_of("0123456789") == std::string::npos;
    if (text && (!digits || std::stoul(*text) == 0))
      reader.error(f->value, "'keep' is how many verified sets to keep per recipe x tier: a whole number, 1 or more");
    else if (text)
      out.keep = std::stoul(*text);
  }
  return out;
}

}  // namespace detail
}  // namespace orc::recipe
