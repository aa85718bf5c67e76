#pragma once
// `orchestrate gpus` and `orchestrate toolkits`: the knowledge base, printed.
#include <optional>
#include <string>

namespace orc::app {

enum class Format { text, json };

// Every GPU, or the one NAME matches (throws util::Failure bad_input with a
// did-you-mean for an unknown name).
std::string list_gpus(const std::optional<std::string>& name, Format format);

// The toolkit table, or with `cudnn` the cuDNN table.
std::string list_toolkits(bool cudnn, Format format);

}  // namespace orc::app
