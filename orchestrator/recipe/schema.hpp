#pragma once
// The keys orchestrate.yaml allows at each place, in one table that key
// checking, "did you mean" and the missing-key check all read (recipes/schema.md
// documents the same keys for people).
#include <array>
#include <cstddef>
#include <string_view>

namespace orc::recipe::detail {

inline constexpr std::array<std::string_view, 7> k_top_keys = {"tiers",  "recipes",      "include", "toolkits",
                                                               "remote", "trusted_keys", "watch"};
inline constexpr std::array<std::string_view, 1> k_top_required = {"tiers"};

inline constexpr std::array<std::string_view, 6> k_tier_keys = {"gpus", "ptx", "driver", "slurm", "kubernetes", "env"};
// Where a tier's nodes are (issue 15).
inline constexpr std::array<std::string_view, 6> k_tier_slurm_keys = {"partition", "constraint", "gres",
                                                                      "account",   "qos",        "time"};
inline constexpr std::array<std::string_view, 1> k_tier_kubernetes_keys = {"selector"};
inline constexpr std::array<std::string_view, 1> k_tier_required = {"gpus"};
// A declared device: `{name: "Lab Card X", cc: 8.6}` (both required).
inline constexpr std::array<std::string_view, 2> k_gpu_keys = {"name", "cc"};

inline constexpr std::array<std::string_view, 13> k_recipe_keys = {
    "name", "framework", "source", "requires", "tiers", "build", "artifacts", "watch", "image", "stamp", "env", "nvcc",
    "needs"};
inline constexpr std::array<std::string_view, 4> k_recipe_required = {"name", "framework", "source", "tiers"};

inline constexpr std::array<std::string_view, 3> k_source_keys = {"path", "git", "ref"};
inline constexpr std::array<std::string_view, 1> k_step_keys = {"script"};

// The requirement keys every recipe may use; the framework's own key
// ("pytorch") is added per recipe.
inline constexpr std::array<std::string_view, 3> k_requirement_keys = {"cuda", "cudnn", "gcc"};

// `watch:` (the watcher, issue 14): what it reads, and how far a recipe
// follows new toolkits (watch::Policy has the same names).
inline constexpr std::array<std::string_view, 6> k_watch_keys = {"policy", "images", "redist",
                                                                 "debian", "notify", "keep"};
inline constexpr std::array<std::string_view, 2> k_watch_debian_keys = {"mirror", "images"};
inline constexpr std::array<std::string_view, 4> k_watch_image_keys = {"url", "flavour", "os", "cudnn"};
inline constexpr std::array<std::string_view, 1> k_watch_image_required = {"url"};
inline constexpr std::array<std::string_view, 4> k_watch_policies = {"patch", "minor", "major", "pinned"};

// The framework names are flags::framework_table()'s.
inline constexpr std::array<std::string_view, 3> k_ptx_names = {"none", "highest", "all"};

// Nesting deeper than this is refused before yaml-cpp builds nodes: no valid
// configuration comes close (it needs about 6), and yaml-cpp's parser
// recurses once per level.
inline constexpr int k_max_nesting = 64;
// Limits that keep a hostile or mistaken include pattern from reading the
// whole disk.
inline constexpr std::size_t k_max_file_bytes = 4u << 20;
inline constexpr std::size_t k_max_included_files = 256;
// Errors reported before parsing stops (compilers stop early for the same
// reason: the rest is mostly the first mistake repeated).
inline constexpr std::size_t k_max_errors = 50;

}  // namespace orc::recipe::detail
