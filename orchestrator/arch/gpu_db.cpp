#include "orchestrator/arch/gpu_db.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "orchestrator/util/strings.hpp"

namespace orc::arch {

namespace {

// Words that name the vendor or brand rather than the product. "quadro" is
// among them so "RTX 8000" finds "Quadro RTX 8000"; the table keeps Quadro
// and non-Quadro keys apart without it. "generation", "edition" and
// "workstation" are filler in nvidia-smi's names ("RTX 6000 Ada Generation",
// "RTX PRO 6000 Blackwell Workstation Edition"); "nvgpu" marks an integrated
// GPU in nvidia-smi's "Orin (nvgpu)".
constexpr std::array<std::string_view, 8> k_noise_words = {
    "nvidia", "geforce", "tesla", "quadro", "generation", "edition", "workstation", "nvgpu",
};

// Characters that separate words in product names as people and tools write
// them: "A100-SXM4-40GB", "rtx_4090", "TITAN X (Pascal)".
constexpr std::string_view k_separators = " \t-_()/,";

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Consumes leading digits; returns how many there were.
std::size_t skip_digits(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && is_digit(s[n])) ++n;
  s.remove_prefix(n);
  return n;
}

// Whether `word` starts with `prefix` followed only by digits (possibly none).
bool prefix_then_digits(std::string_view word, std::string_view prefix) {
  if (!word.starts_with(prefix)) return false;
  word.remove_prefix(prefix.size());
  skip_digits(word);
  return word.empty();
}

// Memory sizes and form factors vary between boards of one product (and
// nvidia-smi appends them: "NVIDIA H100 80GB HBM3", "A100-SXM4-40GB",
// "GB200 NVL72", "A100 MIG 1g.10gb"), but never change the CC, so lookup
// ignores them. Patterns: \d+gb?, hbm\d*e?, pcie, sxm\d*, nvl\d*, mig,
// \d+g\.\d+gb (a MIG slice); cooling and form words of the driver's names
// ("B300 SXM6 AC", "A800 80GB PCIe LC", "A800 40GB Active", "V100-FHHL-16GB");
// and GPU Feature Discovery's "-SHARED" label suffix.
bool is_board_word(std::string_view word) {
  static constexpr std::array<std::string_view, 7> k_words = {"pcie", "mig", "ac", "lc", "active", "fhhl", "shared"};
  if (std::ranges::find(k_words, word) != k_words.end()) return true;
  if (prefix_then_digits(word, "sxm") || prefix_then_digits(word, "nvl")) return true;
  if (word.starts_with("hbm")) {
    std::string_view rest = word.substr(3);
    skip_digits(rest);
    return rest.empty() || rest == "e";
  }
  std::string_view rest = word;
  if (skip_digits(rest) == 0) return false;
  if (rest == "g" || rest == "gb") return true;
  if (!rest.starts_with("g.")) return false;
  rest.remove_prefix(2);
  return skip_digits(rest) > 0 && rest == "gb";
}

bool is_dropped(std::string_view word) {
  return std::ranges::find(k_noise_words, word) != k_noise_words.end() || is_board_word(word);
}

// The normalized key of every row, in table order; built once because
// find_gpu compares against all of them on every lookup.
const std::vector<std::string>& table_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    out.reserve(gpu_table().size());
    for (const Gpu& gpu : gpu_table()) out.push_back(normalize_gpu_name(gpu.name));
    return out;
  }();
  return keys;
}

// How many characters one string has that the other lacks, ignoring order
// (the larger of the two counts): "rtx4909" vs "rtx4090" is 1 (a 9 for a 0),
// vs "rtx4000" is 2, so a key with the query's digits in another order wins.
std::size_t bag_distance(std::string_view a, std::string_view b) {
  std::array<int, 256> counts{};
  for (const unsigned char c : a) ++counts[c];
  for (const unsigned char c : b) --counts[c];
  std::size_t extra = 0, missing = 0;
  for (const int n : counts) {
    if (n > 0) extra += static_cast<std::size_t>(n);
    if (n < 0) missing += static_cast<std::size_t>(-n);
  }
  return std::max(extra, missing);
}

bool has_digit(std::string_view key) { return std::ranges::any_of(key, is_digit); }

// Whether `key` is of `query`'s family: the letters before the first digit
// and that digit agree ("rtx4909" and "rtx4090" are "rtx4", "a10g" and
// "a100" "a1", "h20" "h2"). Products of one family share a series and, for
// GeForce and Quadro numbers, a generation; did-you-mean only offers a
// product of the query's family, so "H20" never meets "Tesla K20", nor
// "sm_90" "Tesla M40". Keys without digits form one family ("jetsonagxorn"
// meets "jetsonagxorin" by spelling alone).
bool same_family(std::string_view query, std::string_view key) {
  const std::size_t q = query.find_first_of("0123456789");
  if (q == std::string_view::npos) return !has_digit(key);
  return key.substr(0, q + 1) == query.substr(0, q + 1);
}

// For a bare model number ("4090"): the shortest key holding it as a whole
// number ("rtx4090" before "rtx4090laptopgpu"); keys.size() when none does.
std::size_t by_model_number(std::string_view digits, const std::vector<std::string>& keys) {
  std::size_t chosen = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t at = keys[i].find(digits);
    if (at == std::string::npos) continue;
    const auto digit_at = [&](std::size_t j) { return j < keys[i].size() && is_digit(keys[i][j]); };
    if ((at > 0 && digit_at(at - 1)) || digit_at(at + digits.size())) continue;
    if (chosen == keys.size() || keys[i].size() < keys[chosen].size()) chosen = i;
  }
  return chosen;
}

// The closest key of the query's family, or keys.size(). Model numbers make
// ties common ("rtx4909" is two edits from both "rtx4000" and "rtx4090");
// they are broken by bag distance, then table order.
std::size_t closest_in_family(std::string_view key, const std::vector<std::string>& keys) {
  if (!key.empty() && std::ranges::all_of(key, is_digit)) return by_model_number(key, keys);
  std::vector<std::size_t> family;  // indices into keys
  std::vector<std::string> family_keys;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (same_family(key, keys[i])) {
      family.push_back(i);
      family_keys.push_back(keys[i]);
    }
  const std::string closest = util::did_you_mean(key, family_keys);
  if (closest.empty()) return keys.size();
  const std::size_t best = util::edit_distance(key, closest);
  std::size_t chosen = keys.size();
  for (const std::size_t i : family) {
    if (util::edit_distance(key, keys[i]) != best) continue;
    if (chosen == keys.size() || bag_distance(key, keys[i]) < bag_distance(key, keys[chosen])) chosen = i;
  }
  return chosen;
}

}  // namespace

std::string normalize_gpu_name(std::string_view name) {
  // Old nvidia-smi tables cut long names short: "Tesla V100-SXM2...".
  name = util::trim(name);
  while (name.ends_with('.')) name.remove_suffix(1);
  std::string key;
  for (const std::string& word : util::split_any(util::to_lower(name), k_separators)) {
    if (!is_dropped(word)) key += word;
  }
  return key;
}

std::expected<Gpu, GpuLookupError> find_gpu(std::string_view name) {
  const std::string key = normalize_gpu_name(name);
  const std::vector<std::string>& keys = table_keys();
  // An empty key (a name made only of vendor or memory words) matches no row:
  // every table key is non-empty.
  if (const auto it = std::ranges::find(keys, key); it != keys.end() && !key.empty()) {
    return gpu_table()[static_cast<std::size_t>(it - keys.begin())];
  }
  GpuLookupError error{"unknown GPU '" + std::string(util::trim(name)) + "'", ""};
  // Compare normalized keys so "NVIDIA GeForce RTX 4909" is as close to
  // "GeForce RTX 4090" as "RTX 4909" is, then answer with the name users
  // recognise.
  if (const std::size_t chosen = closest_in_family(key, keys); chosen < keys.size())
    error.suggestion = std::string(gpu_table()[chosen].name);
  return std::unexpected(std::move(error));
}

namespace {

std::vector<std::string> name_words(std::string_view name) {
  std::vector<std::string> out;
  for (std::string& word : util::split_any(util::to_lower(name), k_separators))
    if (std::ranges::find(k_noise_words, word) == k_noise_words.end()) out.push_back(std::move(word));
  return out;
}

// Whether `words` holds `query` in order, every word equal but the last,
// which may be a prefix ("rtx", "50" is in "geforce rtx 5090").
bool holds_words(const std::vector<std::string>& words, const std::vector<std::string>& query) {
  if (query.empty() || query.size() > words.size()) return false;
  for (std::size_t at = 0; at + query.size() <= words.size(); ++at) {
    const bool leading_equal =
        std::equal(query.begin(), query.end() - 1, words.begin() + static_cast<std::ptrdiff_t>(at));
    if (leading_equal && words[at + query.size() - 1].starts_with(query.back())) return true;
  }
  return false;
}

}  // namespace

std::vector<Gpu> search_gpus(std::string_view query) {
  const std::vector<std::string> wanted = name_words(query);
  std::vector<Gpu> out;
  if (wanted.empty()) return out;
  // An architecture is named by its leading words: "Ada", "Blackwell Ultra".
  for (const Gpu& gpu : gpu_table()) {
    const std::vector<std::string> words = name_words(gpu.architecture);
    if (words.size() >= wanted.size() && std::equal(wanted.begin(), wanted.end(), words.begin())) out.push_back(gpu);
  }
  if (!out.empty()) return out;
  for (const Gpu& gpu : gpu_table())
    if (holds_words(name_words(gpu.name), wanted)) out.push_back(gpu);
  return out;
}

namespace {

// CCs of real GPUs the table has no row for (G80 to Fermi: every toolkit
// here has dropped them) and those nvcc accepts with no confirmed product.
constexpr auto k_pre_kepler = std::to_array<ComputeCapability>({{1, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 0}, {2, 1}});
constexpr auto k_compiler_only = std::to_array<ComputeCapability>({{8, 8}, {10, 1}});

std::vector<ComputeCapability> standing_ccs() {
  std::vector<ComputeCapability> out(k_pre_kepler.begin(), k_pre_kepler.end());
  out.insert(out.end(), k_compiler_only.begin(), k_compiler_only.end());
  for (const Gpu& gpu : gpu_table()) out.push_back(gpu.cc);
  std::ranges::sort(out);
  const auto [first, last] = std::ranges::unique(out);
  out.erase(first, last);
  return out;
}

}  // namespace

CcStanding cc_standing(ComputeCapability cc) {
  const ComputeCapability base = cc.base();
  if (std::ranges::find(gpu_table(), base, &Gpu::cc) != gpu_table().end() ||
      std::ranges::find(k_pre_kepler, base) != k_pre_kepler.end())
    return CcStanding::product;
  if (std::ranges::find(k_compiler_only, base) != k_compiler_only.end()) return CcStanding::compiler_only;
  return CcStanding::none;
}

std::vector<ComputeCapability> nearest_ccs(ComputeCapability cc) {
  const ComputeCapability base = cc.base();
  const std::vector<ComputeCapability> known = standing_ccs();
  std::vector<ComputeCapability> out;
  const auto above = std::ranges::upper_bound(known, base);
  if (above != known.begin() && std::prev(above)->major() == base.major()) out.push_back(*std::prev(above));
  if (above != known.end() && above->major() == base.major()) out.push_back(*above);
  if (out.empty())
    out.push_back(above == known.end() ? known.back() : (above == known.begin() ? *above : *std::prev(above)));
  return out;
}

std::string_view architecture_of(ComputeCapability cc) {
  // 'a' and 'f' targets run on the same silicon as the plain CC.
  const ComputeCapability base = cc.base();
  const auto it = std::ranges::find(gpu_table(), base, &Gpu::cc);
  return it == gpu_table().end() ? std::string_view{} : it->architecture;
}

std::string_view segment_name(Segment s) {
  switch (s) {
    case Segment::datacenter:
      return "datacenter";
    case Segment::geforce:
      return "geforce";
    case Segment::workstation:
      return "workstation";
    case Segment::jetson:
      return "jetson";
  }
  return "";
}

}  // namespace orc::arch
