#pragma once
// Small string helpers shared by every parser.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orc::util {

std::string to_lower(std::string_view s);
std::string_view trim(std::string_view s);
// Splits on any of the separator characters; empty pieces are dropped.
std::vector<std::string> split_any(std::string_view s, std::string_view separators);
// Splits on spaces, dropping empty pieces; the views point into `text`, so
// they live as long as it does (table literals: forever).
std::vector<std::string_view> split_words(std::string_view text);
std::string join(std::span<const std::string> parts, std::string_view separator);
bool starts_with_ci(std::string_view s, std::string_view prefix);
// "541.6 MiB": binary units, one decimal; bytes as they are below 1 KiB.
std::string human_size(std::uint64_t bytes);

// The Key=Value words of one line as Slurm's `scontrol show ... -o` prints
// them: a key starts with an upper-case letter and holds letters, digits,
// '_' and ':'; a word without '=' continues the value before it (OS=Linux
// 6.1.0-18-amd64 #1 SMP ..., Comment=two words).
std::map<std::string, std::string> key_value_words(std::string_view line);

// Optimal string alignment distance (Levenshtein plus adjacent transposition).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or empty when none is close enough to be a
// plausible typo (distance at most a third of the word's length, min 1).
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

}  // namespace orc::util
