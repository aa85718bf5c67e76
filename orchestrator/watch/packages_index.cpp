#include "orchestrator/watch/packages_index.hpp"

#include <lzma.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <functional>

#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/watch/debian.hpp"

namespace orc::watch {

namespace detail {

// Served bytes to text, handed on in pieces as they come out.
class IndexDecoder {
 public:
  using Result = std::expected<void, std::string>;
  using Sink = std::function<Result(std::string_view)>;
  virtual ~IndexDecoder() = default;
  virtual Result feed(std::string_view in, const Sink& out) = 0;
  // No more input: what is left comes out, or the stream was cut short.
  virtual Result finish(const Sink& out) = 0;

 protected:
  // One piece of output at a time: memory does not grow with the stream.
  std::array<char, 64 << 10> m_buffer{};
};

}  // namespace detail

namespace {

using detail::IndexDecoder;
using Result = IndexDecoder::Result;

constexpr std::uint64_t mib(std::uint64_t bytes) { return bytes >> 20; }

class PlainDecoder final : public IndexDecoder {
 public:
  Result feed(std::string_view in, const Sink& out) override { return in.empty() ? Result() : out(in); }
  Result finish(const Sink&) override { return {}; }
};

class XzDecoder final : public IndexDecoder {
 public:
  XzDecoder() {
    // LZMA_CONCATENATED: `xz` writes one stream, but concatenated ones are
    // one file to it as well.
    m_ready = lzma_stream_decoder(&m_stream, PackagesIndexReader::k_max_xz_memory, LZMA_CONCATENATED) == LZMA_OK;
  }
  ~XzDecoder() override { lzma_end(&m_stream); }
  Result feed(std::string_view in, const Sink& out) override { return run(in, LZMA_RUN, out); }
  Result finish(const Sink& out) override { return run({}, LZMA_FINISH, out); }

 private:
  Result run(std::string_view in, lzma_action action, const Sink& out) {
    if (!m_ready) return std::unexpected("liblzma could not start");
    m_stream.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
    m_stream.avail_in = in.size();
    for (;;) {
      m_stream.next_out = reinterpret_cast<std::uint8_t*>(m_buffer.data());
      m_stream.avail_out = m_buffer.size();
      const lzma_ret ret = lzma_code(&m_stream, action);
      const std::size_t produced = m_buffer.size() - m_stream.avail_out;
      if (produced > 0)
        if (auto taken = out(std::string_view(m_buffer.data(), produced)); !taken) return taken;
      if (ret == LZMA_STREAM_END) return {};
      if (ret != LZMA_OK) return std::unexpected(describe(ret));
      if (action == LZMA_RUN && m_stream.avail_in == 0 && m_stream.avail_out != 0) return {};
    }
  }

  std::string describe(lzma_ret ret) {
    const std::string at = " at byte " + std::to_string(m_stream.total_in);
    switch (ret) {
      case LZMA_MEMLIMIT_ERROR:
        return "the xz stream needs " + std::to_string(mib(lzma_memusage(&m_stream))) +
               " MiB to decompress (its dictionary size), more than the " +
               std::to_string(mib(PackagesIndexReader::k_max_xz_memory)) +
               " MiB allowed: no index of Debian's (they need about 9 MiB)";
      case LZMA_MEM_ERROR:
        return "out of memory decompressing the xz stream" + at;
      case LZMA_OPTIONS_ERROR:
        return "the xz stream uses options liblzma does not support" + at;
      case LZMA_BUF_ERROR:
        return "the xz stream is cut short (it ends" + at + " before its end marker)";
      default:
        return "the xz data is damaged" + at;
    }
  }

  lzma_stream m_stream = LZMA_STREAM_INIT;
  bool m_ready = false;
};

class GzipDecoder final : public IndexDecoder {
 public:
  GzipDecoder() {
    m_stream.zalloc = Z_NULL;
    m_stream.zfree = Z_NULL;
    m_stream.opaque = Z_NULL;
    m_ready = inflateInit2(&m_stream, 16 + MAX_WBITS) == Z_OK;  // 16: a gzip header and trailer
  }
  ~GzipDecoder() override {
    if (m_ready) inflateEnd(&m_stream);
  }
  Result feed(std::string_view in, const Sink& out) override {
    m_stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    m_stream.avail_in = static_cast<uInt>(in.size());  // the reader's slices are at most 1 MiB
    return pump(out);
  }
  Result finish(const Sink& out) override {
    m_stream.avail_in = 0;
    if (auto drained = pump(out); !drained) return drained;
    if (!m_member_done)
      return std::unexpected("the gzip stream is cut short (it ends at byte " + std::to_string(m_stream.total_in) +
                             " before its trailer)");
    return {};
  }

 private:
  // Inflates what input there is; a gzip file may hold several members
  // one after the other (gzip -d reads them as one).
  Result pump(const Sink& out) {
    if (!m_ready) return std::unexpected("zlib could not start");
    for (;;) {
      if (m_member_done) {
        if (m_stream.avail_in == 0) return {};
        m_served_before += m_stream.total_in;
        if (inflateReset(&m_stream) != Z_OK) return std::unexpected("zlib could not start the next gzip member");
        m_member_done = false;
      }
      m_stream.next_out = reinterpret_cast<Bytef*>(m_buffer.data());
      m_stream.avail_out = static_cast<uInt>(m_buffer.size());
      const int ret = inflate(&m_stream, Z_NO_FLUSH);
      const std::size_t produced = m_buffer.size() - m_stream.avail_out;
      if (produced > 0)
        if (auto taken = out(std::string_view(m_buffer.data(), produced)); !taken) return taken;
      if (ret == Z_STREAM_END) {
        m_member_done = true;
        continue;
      }
      if (ret == Z_BUF_ERROR) return {};  // no progress without more input
      if (ret != Z_OK)
        return std::unexpected("the gzip data is damaged at byte " +
                               std::to_string(m_served_before + m_stream.total_in) +
                               " (zlib: " + util::printable(m_stream.msg ? m_stream.msg : "?") + ")");
      if (m_stream.avail_in == 0 && m_stream.avail_out != 0) return {};
    }
  }

  z_stream m_stream{};
  bool m_ready = false;
  bool m_member_done = false;
  std::uint64_t m_served_before = 0;  // bytes of the members before this one
};

std::unique_ptr<IndexDecoder> make_decoder(IndexCompression compression) {
  switch (compression) {
    case IndexCompression::xz:
      return std::make_unique<XzDecoder>();
    case IndexCompression::gzip:
      return std::make_unique<GzipDecoder>();
    case IndexCompression::none:
      break;
  }
  return std::make_unique<PlainDecoder>();
}

// The first bytes a compressed index must start with, and its name in
// messages ("not xz-compressed", as the suffix says).
std::string_view magic_of(IndexCompression compression) {
  switch (compression) {
    case IndexCompression::xz:
      return {"\xfd\x37zXZ\0", 6};
    case IndexCompression::gzip:
      return {"\x1f\x8b", 2};
    case IndexCompression::none:
      break;
  }
  return {};
}

std::string_view name_of(IndexCompression compression) {
  return compression == IndexCompression::xz ? "xz" : compression == IndexCompression::gzip ? "gz" : "plain";
}

}  // namespace

PackagesIndexReader::PackagesIndexReader(IndexCompression compression, const std::vector<std::string>& wanted)
    : m_decoder(make_decoder(compression)),
      m_magic(magic_of(compression)),
      m_compression(compression),
      m_wanted(wanted) {
  std::ranges::sort(m_wanted);
}

PackagesIndexReader::~PackagesIndexReader() = default;

std::expected<void, std::string> PackagesIndexReader::fail(std::string error) {
  m_error = std::move(error);
  return std::unexpected(m_error);
}

std::expected<void, std::string> PackagesIndexReader::feed(std::string_view bytes) {
  if (!m_error.empty()) return std::unexpected(m_error);
  m_served += bytes.size();
  if (m_served > k_max_served)
    return fail("more than " + std::to_string(mib(k_max_served)) +
                " MiB as served: no index of Debian's is near that (main, amd64, is about 10 MB as xz)");
  // The name says the compression; a body that is not in it is no index.
  for (std::size_t i = 0; m_magic_seen < m_magic.size() && i < bytes.size(); ++i, ++m_magic_seen)
    if (bytes[i] != m_magic[m_magic_seen]) return fail("not " + std::string(name_of(m_compression)) + "-compressed");
  const IndexDecoder::Sink sink = [this](std::string_view piece) { return text(piece); };
  // Slices of 1 MiB: zlib counts its input in 32 bits.
  for (std::size_t at = 0; at < bytes.size(); at += std::size_t{1} << 20)
    if (auto fed = m_decoder->feed(bytes.substr(at, std::size_t{1} << 20), sink); !fed) return fail(fed.error());
  return {};
}

std::expected<void, std::string> PackagesIndexReader::finish() {
  if (!m_error.empty()) return std::unexpected(m_error);
  if (m_magic_seen < m_magic.size())
    return fail("not " + std::string(name_of(m_compression)) + "-compressed (" + std::to_string(m_served) +
                " bytes in all)");
  const IndexDecoder::Sink sink = [this](std::string_view piece) { return text(piece); };
  if (auto done = m_decoder->finish(sink); !done) return fail(done.error());
  if (!m_partial.empty() || m_partial_cut) line(m_partial, m_partial_cut);
  m_partial.clear();
  m_partial_cut = false;
  end_stanza();
  return {};
}

std::expected<void, std::string> PackagesIndexReader::text(std::string_view piece) {
  m_text += piece.size();
  if (m_text > k_max_text)
    return std::unexpected("more than " + std::to_string(mib(k_max_text)) +
                           " MiB once decompressed: no index of Debian's is near that (main, amd64, is about 60 MB)");
  const auto keep = [this](std::string_view s) {
    const std::size_t room = k_max_line - m_partial.size();
    if (s.size() > room) {
      m_partial_cut = true;
      s = s.substr(0, room);
    }
    m_partial.append(s);
  };
  while (!piece.empty()) {
    const std::size_t eol = piece.find('\n');
    const std::string_view head = piece.substr(0, eol);
    if (eol == std::string_view::npos) {
      keep(head);
      break;
    }
    if (m_partial.empty() && !m_partial_cut) {
      line(head.substr(0, k_max_line), head.size() > k_max_line);
    } else {
      keep(head);
      line(m_partial, m_partial_cut);
      m_partial.clear();
      m_partial_cut = false;
    }
    piece.remove_prefix(eol + 1);
  }
  return {};
}

void PackagesIndexReader::line(std::string_view text, bool cut) {
  // A cut line is judged by its first k_max_line bytes alone, so how the
  // text was split never changes the result: it is never blank (a stanza
  // break), and a field of ours that long is no value.
  if (!cut && !text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (!cut && util::trim(text).empty()) {
    end_stanza();
    return;
  }
  if (text.front() == ' ' || text.front() == '\t') return;  // a continuation line
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view field = text.substr(0, colon);
  std::string* value = field == "Package"        ? &m_name
                       : field == "Version"      ? &m_version
                       : field == "Architecture" ? &m_architecture
                                                 : nullptr;
  if (!value) return;
  if (cut) {
    m_stanza_bad = true;
    return;
  }
  value->assign(util::trim(text.substr(colon + 1)));
}

void PackagesIndexReader::end_stanza() {
  if (!m_stanza_bad && !m_name.empty() && !m_version.empty()) {
    ++m_stanzas;
    if ((m_architecture == "amd64" || m_architecture == "all") && std::ranges::binary_search(m_wanted, m_name)) {
      keep_newest(m_newest, m_name, m_version);
    }
  }
  m_name.clear();
  m_version.clear();
  m_architecture.clear();
  m_stanza_bad = false;
}

void keep_newest(std::map<std::string, std::string, std::less<>>& newest, std::string_view name,
                 std::string_view version) {
  const auto it = newest.find(name);
  if (it == newest.end())
    newest.emplace(name, version);
  else if (compare_debian_versions(it->second, version) < 0)
    it->second = version;
}

std::expected<IndexSummary, std::string> read_packages_index(std::string_view bytes, IndexCompression compression,
                                                             const std::vector<std::string>& wanted) {
  PackagesIndexReader reader(compression, wanted);
  if (auto fed = reader.feed(bytes); !fed) return std::unexpected(fed.error());
  if (auto done = reader.finish(); !done) return std::unexpected(done.error());
  return IndexSummary{.newest = reader.newest(), .stanzas = reader.stanzas()};
}

}  // namespace orc::watch
