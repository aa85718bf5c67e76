// Unix `ar` archives, GNU (System V) and BSD flavours.
//
//   "!<arch>\n"
//   then members, each a 60-byte ASCII header and its data, the next header
//   at an even offset (odd-sized data is followed by one '\n'):
//     name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n"
//   fields are space-padded; size is decimal and counts the data bytes.
//
// Member names:
//   GNU   "name/"       a short name, '/' terminated
//         "/NNN"        a long name at offset NNN of the "//" member, which
//                       holds "name/\n" records
//         "/"           the symbol table; "/SYM64/" the 64-bit one
//   BSD   "name"        a short name, space padded
//         "#1/NNN"      the name is the first NNN bytes of the data (NUL
//                       padded), so the member's own data starts after it
//         "__.SYMDEF" / "__.SYMDEF SORTED" (and _64 forms): the symbol table,
//                       usually named through "#1/NNN"
// Symbol tables and the name table are not members for our purposes.
// Thin archives ("!<thin>\n") store only paths to their members, so they are
// not this format: there is nothing inside to inspect.
#include "orchestrator/inspect/ar.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace orc::inspect {

namespace {

constexpr std::string_view k_ar_magic = "!<arch>\n";
constexpr std::uint64_t k_header_size = 60;
constexpr std::uint64_t k_name_width = 16;
constexpr std::uint64_t k_size_at = 48, k_size_width = 10;
constexpr std::uint64_t k_fmag_at = 58;
constexpr std::string_view k_fmag = "`\n";
constexpr std::string_view k_bsd_long_prefix = "#1/";
constexpr std::uint64_t k_long_name_slack = 1 << 20;

constexpr std::array<std::string_view, 6> k_symbol_tables = {
    "/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64", "__.SYMDEF_64 SORTED"};

std::string_view trim_right(std::string_view s, char c) {
  while (!s.empty() && s.back() == c) s.remove_suffix(1);
  return s;
}

// A decimal field: digits, then only spaces. Nothing else is a size.
std::optional<std::uint64_t> parse_decimal(std::string_view field) {
  field = trim_right(field, ' ');
  if (field.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : field) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto shifted = checked_mul(value, 10);
    if (!shifted) return std::nullopt;
    const auto next = checked_add(*shifted, static_cast<std::uint64_t>(c - '0'));
    if (!next) return std::nullopt;
    value = *next;
  }
  return value;
}

// The record at `offset` of the GNU "//" table: up to '\n', without the '/'.
std::optional<std::string> gnu_long_name(std::string_view table, std::uint64_t offset) {
  if (offset >= table.size()) return std::nullopt;
  std::string_view rest = table.substr(static_cast<std::size_t>(offset));
  rest = rest.substr(0, rest.find('\n'));
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  return std::string(rest);
}

}  // namespace

std::expected<ArArchive, ParseFailure> parse_ar(Bytes data) {
  if (as_text(data).substr(0, k_ar_magic.size()) != k_ar_magic)
    return std::unexpected(ParseFailure{ParseFailure::Kind::not_this_format, Damage{0, "not an ar archive"}});

  ArArchive archive;
  std::string_view long_names;  // the GNU "//" member's data, once seen
  const std::uint64_t long_name_budget = 4 * std::uint64_t{data.size()} + k_long_name_slack;
  std::uint64_t long_name_bytes = 0;
  std::uint64_t at = k_ar_magic.size();
  const auto damage = [&](std::uint64_t offset, std::string what) {
    archive.damage = Damage{offset, std::move(what)};
    return archive;
  };

  while (at < data.size()) {
    // A lone '\n' at the end is the padding of an odd-sized last member some
    // writers leave even when nothing follows.
    if (at + 1 == data.size() && as_text(data.subspan(static_cast<std::size_t>(at))) == "\n") break;
    const auto header = sub(data, at, k_header_size);
    if (!header) return damage(at, "truncated archive member header");
    const std::string_view text = as_text(*header);
    if (text.substr(k_fmag_at, k_fmag.size()) != k_fmag) return damage(at, "invalid archive member header");
    const auto size = parse_decimal(text.substr(k_size_at, k_size_width));
    if (!size) return damage(at + k_size_at, "invalid archive member size");
    const std::uint64_t data_at = at + k_header_size;
    const auto body = sub(data, data_at, *size);
    const std::string_view raw_name = trim_right(text.substr(0, k_name_width), ' ');
    if (!body) return damage(at, "archive member '" + std::string(raw_name) + "' is truncated");

    ArMember member{std::string(raw_name), data_at, *size};
    bool special = std::ranges::find(k_symbol_tables, raw_name) != k_symbol_tables.end();
    if (special) {
      // A symbol table ("/", "/SYM64/", "__.SYMDEF..." with a short name).
    } else if (raw_name == "//") {
      long_names = as_text(*body);
      special = true;
    } else if (raw_name.starts_with(k_bsd_long_prefix)) {
      const auto name_size = parse_decimal(raw_name.substr(k_bsd_long_prefix.size()));
      if (!name_size || *name_size > *size)
        return damage(at, "invalid BSD long member name '" + std::string(raw_name) + "'");
      member.name = trim_right(as_text(body->first(static_cast<std::size_t>(*name_size))), '\0');
      member.offset += *name_size;
      member.size -= *name_size;
    } else if (raw_name.size() > 1 && raw_name.front() == '/' && parse_decimal(raw_name.substr(1))) {
      auto name = gnu_long_name(long_names, *parse_decimal(raw_name.substr(1)));
      if (!name) return damage(at, "long member name '" + std::string(raw_name) + "' is not in the name table");
      // Every member may name the same long entry; copying it each time
      // could cost members x table size, which no real archive needs.
      long_name_bytes += name->size();
      if (long_name_bytes > long_name_budget) return damage(at, "long member names overlap beyond any real name table");
      member.name = std::move(*name);
    } else if (raw_name.size() > 1 && raw_name.back() == '/') {
      member.name.pop_back();  // GNU short name
    }
    // BSD symbol tables usually arrive through "#1/NNN".
    special = special || std::ranges::find(k_symbol_tables, member.name) != k_symbol_tables.end();
    if (!special) archive.members.push_back(std::move(member));

    // Data is padded to an even offset.
    const auto next = checked_add(data_at, *size + (*size & 1));
    if (!next) return damage(at, "archive member size overflows");
    at = *next;
  }
  return archive;
}

}  // namespace orc::inspect
