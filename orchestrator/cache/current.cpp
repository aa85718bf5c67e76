#include "orchestrator/cache/current.hpp"

#include <cctype>
#include <filesystem>
#include <string>

#include "orchestrator/cache/files.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

// Recipe names [a-z0-9][a-z0-9._-]* and tier names [A-Za-z0-9][A-Za-z0-9._-]*
// (recipe/config.cpp checks them): no '/', and no leading dot.
bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || !std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

std::expected<fs::path, Error> record_path(const Store& store, std::string_view recipe, std::string_view tier) {
  if (!plain_name(recipe) || !plain_name(tier))
    return std::unexpected(invalid_error("current set: '" + std::string(recipe) + "' x '" + std::string(tier) +
                                         "' is not a recipe and tier name"));
  return store.root() / "current" / (std::string(recipe) + "--" + std::string(tier));
}

}  // namespace

std::expected<std::optional<digest::Digest>, Error> read_current(const Store& store, std::string_view recipe,
                                                                 std::string_view tier) {
  auto path = record_path(store, recipe, tier);
  if (!path) return std::unexpected(path.error());
  std::error_code ec;
  if (!fs::exists(*path, ec)) return std::optional<digest::Digest>{};
  if (fs::file_size(*path, ec) > 256) return std::unexpected(invalid_error(path->string() + ": not a digest record"));
  auto text = read_file(*path);
  if (!text) return std::unexpected(text.error());
  while (!text->empty() && (text->back() == '\n' || text->back() == '\r')) text->pop_back();
  auto parsed = digest::Digest::parse(*text);
  if (!parsed)
    return std::unexpected(invalid_error(path->string() + ": " + parsed.error() +
                                         " (remove it, or run 'orchestrate promote' to record the current set)"));
  return std::optional<digest::Digest>{*parsed};
}

std::expected<void, Error> write_current(const Store& store, std::string_view recipe, std::string_view tier,
                                         const digest::Digest& manifest) {
  auto path = record_path(store, recipe, tier);
  if (!path) return std::unexpected(path.error());
  std::error_code ec;
  fs::create_directories(path->parent_path(), ec);
  if (ec) return std::unexpected(io_error("making " + path->parent_path().string() + ": " + ec.message()));
  return write_file_atomic(*path, manifest.to_string() + "\n", store.tmp_dir());
}

std::expected<CurrentSet, Error> current_set(const Store& store, std::string_view recipe, std::string_view tier) {
  auto sets =
      store.index().list({.recipe = std::string(recipe), .tier = std::string(tier), .key = {}, .verified_only = true});
  if (!sets) return std::unexpected(sets.error());
  auto recorded = read_current(store, recipe, tier);
  if (!recorded) return std::unexpected(recorded.error());
  CurrentSet out;
  if (sets->empty()) return out;  // list() is newest first
  if (*recorded) {
    for (const auto& e : *sets)
      if (e.manifest == **recorded) {
        out.entry = e;
        out.recorded = true;
        break;
      }
    if (!out.recorded) out.stale = **recorded;
  }
  if (!out.entry) {
    out.entry = sets->front();
    return out;
  }
  if (sets->front().created > out.entry->created) out.newer = sets->front();
  return out;
}

std::expected<std::optional<IndexEntry>, Error> current_verified(const Store& store, std::string_view recipe,
                                                                 std::string_view tier) {
  auto current = current_set(store, recipe, tier);
  if (!current) return std::unexpected(current.error());
  return std::move(current->entry);
}

}  // namespace orc::cache
