#include "orchestrator/util/outside_names.hpp"

#include <algorithm>
#include <cctype>

namespace orc::util {

namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Letters and digits with `extra` between them, at most `max` in all.
bool label_part(std::string_view s, std::string_view extra, std::size_t max) {
  return !s.empty() && s.size() <= max && alnum(s.front()) && alnum(s.back()) &&
         std::ranges::all_of(s, [&](char c) { return alnum(c) || extra.find(c) != std::string_view::npos; });
}

}  // namespace

bool sbatch_word(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) {
    return alnum(c) || std::string_view("_-.:,&|[]*=()!").find(c) != std::string_view::npos;
  });
}

bool label_key(std::string_view k) {
  const auto slash = k.find('/');
  const std::string_view name = slash == std::string_view::npos ? k : k.substr(slash + 1);
  return label_part(name, "-_.", 63) && (slash == std::string_view::npos || label_part(k.substr(0, slash), "-.", 253));
}

bool label_value(std::string_view v) { return v.empty() || label_part(v, "-_.", 63); }

}  // namespace orc::util
