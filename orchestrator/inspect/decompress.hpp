#pragma once
// Decoders for compressed fatbin payloads: LZ4 raw blocks (flag 0x2000) and
// zstd frames (flag 0x8000). The output must be exactly `expected_size` bytes.
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "orchestrator/inspect/bytes.hpp"

namespace orc::inspect {

// Sizes above this are refused as corrupt rather than allocated.
inline constexpr std::uint64_t k_max_uncompressed = 1ull << 30;

std::expected<std::vector<std::byte>, std::string> decompress_lz4_block(Bytes input, std::uint64_t expected_size);
std::expected<std::vector<std::byte>, std::string> decompress_zstd(Bytes input, std::uint64_t expected_size);

}  // namespace orc::inspect
