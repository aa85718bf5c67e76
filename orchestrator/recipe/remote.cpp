// The `remote:` and `trusted_keys:` keys: where push, pull and fetch meet
// other machines, and whose signatures fetch accepts.
#include "orchestrator/recipe/parse.hpp"

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

}  // namespace detail
}  // namespace orc::recipe
