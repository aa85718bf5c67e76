#pragma once
// The words outside systems take as names, checked by shape: what sbatch
// takes as one option value, what the Kubernetes API takes as a node label.
// The configuration refuses anything else, and tiers import proposes
// nothing else, so what it proposes is a configuration that reads.
#include <string_view>

namespace orc::util {

// sbatch's words: no blank, no quote, nothing a shell or sbatch would split.
bool sbatch_word(std::string_view s);

// Kubernetes label keys ([prefix/]name) and values, as the API validates them.
bool label_key(std::string_view key);
bool label_value(std::string_view value);

}  // namespace orc::util
