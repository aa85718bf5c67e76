#pragma once
// Compressing generated Packages indexes the way an archive serves them, so
// the hostile ones are made by the test (liblzma's and zlib's encoders), not
// stored: xz of any size, fed in pieces by a generator, and gzip.
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>

#include <functional>
#include <string>
#include <string_view>

namespace orc::watch::testing {

// The xz stream of what `next` produces until it returns an empty piece.
inline std::string xz_of(const std::function<std::string_view()>& next, std::uint32_t preset = 1) {
  lzma_stream s = LZMA_STREAM_INIT;
  EXPECT_EQ(lzma_easy_encoder(&s, preset, LZMA_CHECK_CRC64), LZMA_OK);
  std::string out;
  char buffer[1 << 16];
  const auto run = [&](std::string_view in, lzma_action action) {
    s.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
    s.avail_in = in.size();
    lzma_ret ret = LZMA_OK;
    do {
      s.next_out = reinterpret_cast<std::uint8_t*>(buffer);
      s.avail_out = sizeof buffer;
      ret = lzma_code(&s, action);
      out.append(buffer, sizeof buffer - s.avail_out);
    } while (ret == LZMA_OK && (s.avail_in > 0 || s.avail_out == 0 || action == LZMA_FINISH));
    EXPECT_TRUE(ret == LZMA_OK || ret == LZMA_STREAM_END) << ret;
  };
  for (std::string_view piece = next(); !piece.empty(); piece = next()) run(piece, LZMA_RUN);
  run({}, LZMA_FINISH);
  lzma_end(&s);
  return out;
}

inline std::string xz_of(std::string_view text) {
  bool given = false;
  return xz_of([&]() -> std::string_view {
    if (given) return {};
    given = true;
    return text;
  });
}

// One gzip member of `text`.
inline std::string gz_of(std::string_view text) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&s, text.size()) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - s.avail_out);
  deflateEnd(&s);
  return out;
}

}  // namespace orc::watch::testing
