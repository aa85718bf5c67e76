#include "orchestrator/arch/gpu_db.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "orchestrator/util/strings.hpp"

namespace orc::arch {

namespace {

// Architecture names, spelled once so every row of a generation agrees and
// architecture_of() can answer from the table alone.
constexpr std::string_view k_kepler = "Kepler";
constexpr std::string_view k_maxwell = "Maxwell";
constexpr std::string_view k_pascal = "Pascal";
constexpr std::string_view k_volta = "Volta";
constexpr std::string_view k_turing = "Turing";
constexpr std::string_view k_ampere = "Ampere";
constexpr std::string_view k_ada = "Ada Lovelace";
constexpr std::string_view k_hopper = "Hopper";
constexpr std::string_view k_blackwell = "Blackwell";
constexpr std::string_view k_blackwell_ultra = "Blackwell Ultra";
constexpr std::string_view k_rubin = "Rubin";

constexpr Segment k_dc = Segment::datacenter;
constexpr Segment k_geforce = Segment::geforce;
constexpr Segment k_ws = Segment::workstation;
constexpr Segment k_jetson = Segment::jetson;

// Every product of cuda-compat.md section 1.1, row by row. The reference's
// shorthand ("GTX 680/690/770", "RTX 30xx", "Quadro P-series") is spelled
// out, because lookup and did-you-mean only see whole product names.
// Canonical names follow NVIDIA's branding (and what nvidia-smi prints where
// that differs only by vendor or memory words, which lookup drops anyway).
// CC 8.8 has no confirmed product and CC 10.1 is Thor's pre-13.0 number (the
// same silicon is 11.0 now), so neither has a row.
constexpr auto k_gpus = std::to_array<Gpu>({
    // 3.0: Kepler GK104/GK107.
    {"Tesla K10", {3, 0}, k_dc, k_kepler},
    {"GeForce GTX 680", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 690", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 770", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 760", {3, 0}, k_geforce, k_kepler},
    {"GeForce GTX 660", {3, 0}, k_geforce, k_kepler},
    {"Quadro K5000", {3, 0}, k_ws, k_kepler},
    {"Quadro K4200", {3, 0}, k_ws, k_kepler},
    {"Quadro K4000", {3, 0}, k_ws, k_kepler},
    {"Quadro K2000", {3, 0}, k_ws, k_kepler},
    {"Quadro K600", {3, 0}, k_ws, k_kepler},
    {"Quadro K420", {3, 0}, k_ws, k_kepler},
    // 3.2: Kepler GK20A (Tegra K1).
    {"Jetson TK1", {3, 2}, k_jetson, k_kepler},
    // 3.5: Kepler GK110/GK208.
    {"Tesla K20", {3, 5}, k_dc, k_kepler},
    {"Tesla K40", {3, 5}, k_dc, k_kepler},
    {"GeForce GTX 780", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX 780 Ti", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX TITAN", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX TITAN Black", {3, 5}, k_geforce, k_kepler},
    {"GeForce GTX TITAN Z", {3, 5}, k_geforce, k_kepler},
    {"Quadro K6000", {3, 5}, k_ws, k_kepler},
    {"Quadro K5200", {3, 5}, k_ws, k_kepler},
    // 3.7: Kepler GK210.
    {"Tesla K80", {3, 7}, k_dc, k_kepler},
    // 5.0: Maxwell GM107/GM108. The reference's "Quadro M-series mobile" names
    // no model, so it has no row.
    {"GeForce GTX 750", {5, 0}, k_geforce, k_maxwell},
    {"GeForce GTX 750 Ti", {5, 0}, k_geforce, k_maxwell},
    {"GeForce GTX 960M", {5, 0}, k_geforce, k_maxwell},
    {"GeForce GTX 950M", {5, 0}, k_geforce, k_maxwell},
    {"GeForce 940M", {5, 0}, k_geforce, k_maxwell},
    {"Quadro K2200", {5, 0}, k_ws, k_maxwell},
    {"Quadro K1200", {5, 0}, k_ws, k_maxwell},
    {"Quadro K620", {5, 0}, k_ws, k_maxwell},
    // 5.2: Maxwell GM20x.
    {"Tesla M40", {5, 2}, k_dc, k_maxwell},
    {"Tesla M60", {5, 2}, k_dc, k_maxwell},
    {"GeForce GTX 980 Ti", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 980", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 970", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 960", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX 950", {5, 2}, k_geforce, k_maxwell},
    {"GeForce GTX TITAN X", {5, 2}, k_geforce, k_maxwell},
    {"Quadro M6000", {5, 2}, k_ws, k_maxwell},
    {"Quadro M5000", {5, 2}, k_ws, k_maxwell},
    {"Quadro M4000", {5, 2}, k_ws, k_maxwell},
    {"Quadro M2000", {5, 2}, k_ws, k_maxwell},
    // 5.3: Maxwell Tegra X1.
    {"Jetson Nano", {5, 3}, k_jetson, k_maxwell},
    {"Jetson TX1", {5, 3}, k_jetson, k_maxwell},
    // 6.0: Pascal GP100.
    {"Tesla P100", {6, 0}, k_dc, k_pascal},
    {"Quadro GP100", {6, 0}, k_ws, k_pascal},
    // 6.1: Pascal GP10x. "Quadro P-series" is spelled out as its GP10x models.
    {"Tesla P40", {6, 1}, k_dc, k_pascal},
    {"Tesla P4", {6, 1}, k_dc, k_pascal},
    {"GeForce GTX 1080 Ti", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1080", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1070 Ti", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1070", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1060", {6, 1}, k_geforce, k_pascal},
    {"GeForce GTX 1050", {6, 1}, k_geforce, k_pascal},
    // nvidia-smi's spellings; "GTX TITAN X" above is the Maxwell card.
    {"TITAN X (Pascal)", {6, 1}, k_geforce, k_pascal},
    {"TITAN Xp", {6, 1}, k_geforce, k_pascal},
    {"Quadro P6000", {6, 1}, k_ws, k_pascal},
    {"Quadro P5000", {6, 1}, k_ws, k_pascal},
    {"Quadro P4000", {6, 1}, k_ws, k_pascal},
    {"Quadro P2200", {6, 1}, k_ws, k_pascal},
    {"Quadro P2000", {6, 1}, k_ws, k_pascal},
    {"Quadro P1000", {6, 1}, k_ws, k_pascal},
    {"Quadro P620", {6, 1}, k_ws, k_pascal},
    {"Quadro P600", {6, 1}, k_ws, k_pascal},
    {"Quadro P400", {6, 1}, k_ws, k_pascal},
    // 6.2: Pascal Tegra X2.
    {"Jetson TX2", {6, 2}, k_jetson, k_pascal},
    // 7.0: Volta GV100.
    {"Tesla V100", {7, 0}, k_dc, k_volta},
    {"TITAN V", {7, 0}, k_geforce, k_volta},
    {"Quadro GV100", {7, 0}, k_ws, k_volta},
    // 7.2: Volta Xavier.
    {"Jetson AGX Xavier", {7, 2}, k_jetson, k_volta},
    {"Jetson Xavier NX", {7, 2}, k_jetson, k_volta},
    // 7.5: Turing. "Quadro RTX 6000" normalizes to "rtx6000", distinct from
    // "RTX 6000 Ada", "RTX A6000" and "RTX PRO 6000 Blackwell".
    {"Tesla T4", {7, 5}, k_dc, k_turing},
    {"GeForce RTX 2060", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2060 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2070", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2070 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce RTX 2080 Ti", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1650 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660 SUPER", {7, 5}, k_geforce, k_turing},
    {"GeForce GTX 1660 Ti", {7, 5}, k_geforce, k_turing},
    {"TITAN RTX", {7, 5}, k_geforce, k_turing},
    {"Quadro RTX 4000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 5000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 6000", {7, 5}, k_ws, k_turing},
    {"Quadro RTX 8000", {7, 5}, k_ws, k_turing},
    {"T400", {7, 5}, k_ws, k_turing},
    {"T600", {7, 5}, k_ws, k_turing},
    {"T1000", {7, 5}, k_ws, k_turing},
    // 8.0: Ampere GA100.
    {"A100", {8, 0}, k_dc, k_ampere},
    {"A30", {8, 0}, k_dc, k_ampere},
    // 8.6: Ampere GA10x.
    {"A40", {8, 6}, k_dc, k_ampere},
    {"A10", {8, 6}, k_dc, k_ampere},
    {"A16", {8, 6}, k_dc, k_ampere},
    {"A2", {8, 6}, k_dc, k_ampere},
    {"GeForce RTX 3050", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3060", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3060 Ti", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3070", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3070 Ti", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3080", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3080 Ti", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3090", {8, 6}, k_geforce, k_ampere},
    {"GeForce RTX 3090 Ti", {8, 6}, k_geforce, k_ampere},
    {"RTX A6000", {8, 6}, k_ws, k_ampere},
    {"RTX A5000", {8, 6}, k_ws, k_ampere},
    {"RTX A4000", {8, 6}, k_ws, k_ampere},
    {"RTX A3000", {8, 6}, k_ws, k_ampere},
    {"RTX A2000", {8, 6}, k_ws, k_ampere},
    // 8.7: Ampere Orin.
    {"Jetson AGX Orin", {8, 7}, k_jetson, k_ampere},
    {"Jetson Orin NX", {8, 7}, k_jetson, k_ampere},
    {"Jetson Orin Nano", {8, 7}, k_jetson, k_ampere},
    // 8.9: Ada Lovelace.
    {"L4", {8, 9}, k_dc, k_ada},
    {"L40", {8, 9}, k_dc, k_ada},
    {"L40S", {8, 9}, k_dc, k_ada},
    {"GeForce RTX 4060", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4060 Ti", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 SUPER", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 Ti", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4070 Ti SUPER", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4080", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4080 SUPER", {8, 9}, k_geforce, k_ada},
    {"GeForce RTX 4090", {8, 9}, k_geforce, k_ada},
    {"RTX 6000 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 5000 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 4500 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 4000 Ada", {8, 9}, k_ws, k_ada},
    {"RTX 2000 Ada", {8, 9}, k_ws, k_ada},
    // 9.0: Hopper (the H200 reports 9.0 on the device, cuda-compat.md [DEV]).
    {"H100", {9, 0}, k_dc, k_hopper},
    {"H200", {9, 0}, k_dc, k_hopper},
    {"GH200", {9, 0}, k_dc, k_hopper},
    // 10.0: Blackwell datacenter.
    {"B200", {10, 0}, k_dc, k_blackwell},
    {"GB200", {10, 0}, k_dc, k_blackwell},
    // 10.3: Blackwell Ultra.
    {"B300", {10, 3}, k_dc, k_blackwell_ultra},
    {"GB300", {10, 3}, k_dc, k_blackwell_ultra},
    // 10.7: Rubin; the reference writes "(Vera) Rubin", the GPU and its
    // Vera-CPU superchip, as it lists B200 and GB200 apart.
    {"Rubin", {10, 7}, k_dc, k_rubin},
    {"Vera Rubin", {10, 7}, k_dc, k_rubin},
    // 11.0: Blackwell Thor. CUDA 13.0 renumbered sm_101 to sm_110, so the
    // Thor parts the reference lists under 10.1 (old name) live here.
    {"Jetson AGX Thor", {11, 0}, k_jetson, k_blackwell},
    {"Jetson T5000", {11, 0}, k_jetson, k_blackwell},
    {"Jetson T4000", {11, 0}, k_jetson, k_blackwell},
    {"DRIVE Thor", {11, 0}, k_jetson, k_blackwell},
    // 12.0: Blackwell workstation/consumer, plus the RTX PRO server cards.
    {"RTX PRO 6000 Blackwell Server Edition", {12, 0}, k_dc, k_blackwell},
    {"RTX PRO 4500 Blackwell Server Edition", {12, 0}, k_dc, k_blackwell},
    {"GeForce RTX 5090", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5080", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5070 Ti", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5070", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5060 Ti", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5060", {12, 0}, k_geforce, k_blackwell},
    {"GeForce RTX 5050", {12, 0}, k_geforce, k_blackwell},
    {"RTX PRO 6000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 6000 Blackwell Max-Q", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 5000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4500 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4000 Blackwell", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 4000 Blackwell SFF", {12, 0}, k_ws, k_blackwell},
    {"RTX PRO 2000 Blackwell", {12, 0}, k_ws, k_blackwell},
    // 12.1: Blackwell GB10 (DGX Spark); the reference files it as datacenter.
    {"GB10", {12, 1}, k_dc, k_blackwell},
});

// Words that name the vendor or brand rather than the product. "quadro" is
// among them so "RTX 8000" finds "Quadro RTX 8000"; the table keeps Quadro
// and non-Quadro keys apart without it. "generation", "edition" and
// "workstation" are filler in nvidia-smi's names ("RTX 6000 Ada Generation",
// "RTX PRO 6000 Blackwell Workstation Edition").
constexpr std::array<std::string_view, 7> k_noise_words = {
    "nvidia", "geforce", "tesla", "quadro", "generation", "edition", "workstation",
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
// \d+g\.\d+gb (a MIG slice).
bool is_board_word(std::string_view word) {
  if (word == "pcie" || word == "mig") return true;
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
    out.reserve(k_gpus.size());
    for (const Gpu& gpu : k_gpus) out.push_back(normalize_gpu_name(gpu.name));
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

}  // namespace

std::span<const Gpu> gpu_table() { return k_gpus; }

std::string normalize_gpu_name(std::string_view name) {
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
    return k_gpus[static_cast<std::size_t>(it - keys.begin())];
  }
  GpuLookupError error{"unknown GPU '" + std::string(util::trim(name)) + "'", ""};
  // Compare normalized keys so "NVIDIA GeForce RTX 4909" is as close to
  // "GeForce RTX 4090" as "RTX 4909" is, then answer with the name users
  // recognise. did_you_mean decides whether anything is close enough.
  const std::string closest = util::did_you_mean(key, keys);
  if (closest.empty()) return std::unexpected(std::move(error));
  // Model numbers make ties common ("rtx4909" is two edits from both
  // "rtx4000" and "rtx4090"); break them by bag distance, then table order.
  const std::size_t best = util::edit_distance(key, closest);
  std::size_t chosen = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (util::edit_distance(key, keys[i]) != best) continue;
    if (chosen == keys.size() || bag_distance(key, keys[i]) < bag_distance(key, keys[chosen])) chosen = i;
  }
  error.suggestion = std::string(k_gpus[chosen].name);
  return std::unexpected(std::move(error));
}

std::string_view architecture_of(ComputeCapability cc) {
  // 'a' and 'f' targets run on the same silicon as the plain CC.
  const ComputeCapability base = cc.base();
  const auto it = std::ranges::find(k_gpus, base, &Gpu::cc);
  return it == k_gpus.end() ? std::string_view{} : it->architecture;
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
