// Decoders for compressed fatbin payloads (fatbin-format.md 5.1).
//
// Flag 0x2000 marks an LZ4 *block*: no frame, no size prefix; the entry
// header's compressed_size and uncompressed_size (+0x10, +0x38) are the only
// framing. Flag 0x8000 marks a zstd frame (magic 28 B5 2F FD). Both decoders
// must produce exactly the size the header promises, and neither trusts that
// promise for allocation beyond what the input could possibly expand to.
#include "orchestrator/inspect/decompress.hpp"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <memory>

namespace orc::inspect {

namespace {

// An LZ4 sequence of n bytes expands to at most 255 * n bytes (a match length
// grows by 255 per extension byte), so a larger claim is a lie we need not
// allocate for. The slack covers the tiny fixed costs of very short blocks.
constexpr std::uint64_t k_lz4_max_ratio = 255;
constexpr std::uint64_t k_lz4_slack = 64;

// zstd output is collected in growing steps, so a header that claims a huge
// size for a small, broken frame costs only what the frame really produces.
constexpr std::size_t k_zstd_first_chunk = std::size_t{1} << 16;

std::string size_text(std::uint64_t n) { return std::to_string(n) + " bytes"; }

std::string too_large(std::uint64_t expected_size) {
  return "uncompressed size " + size_text(expected_size) + " exceeds the limit of " + size_text(k_max_uncompressed);
}

struct ZstdContextFree {
  void operator()(ZSTD_DCtx* context) const { ZSTD_freeDCtx(context); }
};
using ZstdContext = std::unique_ptr<ZSTD_DCtx, ZstdContextFree>;

}  // namespace

std::expected<std::vector<std::byte>, std::string> decompress_lz4_block(Bytes input, std::uint64_t expected_size) {
  if (expected_size > k_max_uncompressed) return std::unexpected(too_large(expected_size));
  // LZ4's API counts in int.
  if (input.size() > static_cast<std::size_t>(INT_MAX))
    return std::unexpected("LZ4 input of " + size_text(input.size()) + " is too large");
  const auto bound = checked_mul(input.size(), k_lz4_max_ratio);
  if (!bound || expected_size > *bound + k_lz4_slack)
    return std::unexpected("LZ4 block of " + size_text(input.size()) + " cannot expand to " + size_text(expected_size));
  // One spare byte: a block that decodes to more than promised then fails
  // the size comparison instead of passing silently at the capacity limit.
  std::vector<std::byte> out(static_cast<std::size_t>(expected_size) + 1);
  const int produced =
      LZ4_decompress_safe(reinterpret_cast<const char*>(input.data()), reinterpret_cast<char*>(out.data()),
                          static_cast<int>(input.size()), static_cast<int>(out.size()));
  if (produced < 0) return std::unexpected("malformed LZ4 block");
  if (static_cast<std::uint64_t>(produced) != expected_size)
    return std::unexpected("LZ4 block decoded to " + size_text(static_cast<std::uint64_t>(produced)) + ", expected " +
                           size_text(expected_size));
  out.resize(static_cast<std::size_t>(expected_size));
  return out;
}

std::expected<std::vector<std::byte>, std::string> decompress_zstd(Bytes input, std::uint64_t expected_size) {
  if (expected_size > k_max_uncompressed) return std::unexpected(too_large(expected_size));
  // A first frame that declares more than the promised size cannot match;
  // checking costs nothing and spares decoding it. (Less may be fine: more
  // frames can follow.)
  const unsigned long long declared = ZSTD_getFrameContentSize(input.data(), input.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return std::unexpected("not a zstd frame");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > expected_size)
    return std::unexpected("zstd frame declares " + size_text(declared) + ", expected " + size_text(expected_size));

  ZstdContext context(ZSTD_createDCtx());
  if (!context) return std::unexpected("cannot allocate a zstd decoder");
  std::vector<std::byte> out;
  std::size_t produced = 0;
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  std::size_t remaining_hint = 1;  // ZSTD_decompressStream's result: 0 once a frame is done and flushed
  // Concatenated frames decode as one stream, as ZSTD_decompress does.
  while (remaining_hint != 0 || in.pos < in.size) {
    const std::size_t in_before = in.pos, produced_before = produced;
    if (produced == out.size() && out.size() == expected_size) {
      // Output is complete; the rest of the input may only finish the frame
      // (block ends, checksum), never add data. Decode into a probe byte.
      std::byte probe{};
      ZSTD_outBuffer probe_out{&probe, 1, 0};
      remaining_hint = ZSTD_decompressStream(context.get(), &probe_out, &in);
      if (ZSTD_isError(remaining_hint))
        return std::unexpected(std::string("zstd: ") + ZSTD_getErrorName(remaining_hint));
      if (probe_out.pos != 0)
        return std::unexpected("zstd frame decodes to more than the expected " + size_text(expected_size));
    } else {
      if (produced == out.size()) {
        const std::uint64_t grown = std::max<std::uint64_t>(k_zstd_first_chunk, std::uint64_t{out.size()} * 2);
        out.resize(static_cast<std::size_t>(std::min(grown, expected_size)));
      }
      ZSTD_outBuffer chunk{out.data(), out.size(), produced};
      remaining_hint = ZSTD_decompressStream(context.get(), &chunk, &in);
      if (ZSTD_isError(remaining_hint))
        return std::unexpected(std::string("zstd: ") + ZSTD_getErrorName(remaining_hint));
      produced = chunk.pos;
    }
    // The decoder returns when the input is used up or the output is full;
    // neither moving means the input ends inside a frame.
    if (in.pos == in_before && produced == produced_before)
      return std::unexpected("zstd frame is truncated after " + size_text(produced));
  }
  if (produced != expected_size)
    return std::unexpected("zstd frame decoded to " + size_text(produced) + ", expected " + size_text(expected_size));
  out.resize(produced);
  return out;
}

}  // namespace orc::inspect
