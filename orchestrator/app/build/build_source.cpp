#include "orchestrator/app/build/build_source.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "orchestrator/digest/sha256.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;

bool under_git(const fs::path& relative) {
  return std::ranges::any_of(relative, [](const fs::path& part) { return part == ".git"; });
}

// Collects a LogSink's stdout (git rev-parse's answer) and passes the rest on.
class CaptureSink final : public engine::LogSink {
 public:
  explicit CaptureSink(engine::LogSink& next) : m_next(next) {}
  void on_output(engine::OutputStream stream, std::string_view bytes) override {
    if (stream == engine::OutputStream::out)
      m_out += bytes;
    else
      m_next.on_output(stream, bytes);
  }
  const std::string& out() const { return m_out; }

 private:
  engine::LogSink& m_next;
  std::string m_out;
};

std::expected<std::string, std::string> git(engine::Engine& runner, engine::LogSink& log,
                                            std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  engine::BuildSpec spec;
  spec.argv = args;
  // Never ask for credentials on a terminal nobody watches.
  spec.env = {{"GIT_TERMINAL_PROMPT", "0"}};
  CaptureSink capture(log);
  auto result = runner.run(spec, capture);
  if (!result) return std::unexpected(result.error().message);
  if (result->exit_code != 0) {
    std::string shown;
    for (std::size_t i = 1; i < args.size() && i < 4; ++i) shown += " " + args[i];
    return std::unexpected("git" + shown + " exited with " + std::to_string(result->exit_code));
  }
  return capture.out();
}

bool is_full_commit(std::string_view ref) {
  return ref.size() == 40 && ref.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

std::expected<std::string, std::string> tree_hash(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::unexpected("source " + dir.string() + " is not a directory");
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(dir);
    if (under_git(rel)) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    entries.push_back(rel);
  }
  if (ec) return std::unexpected("reading " + dir.string() + ": " + ec.message());
  std::ranges::sort(entries,
                    [](const fs::path& a, const fs::path& b) { return a.generic_string() < b.generic_string(); });

  digest::Sha256 tree;
  const auto put = [&tree](std::string_view piece) {
    const std::string field = std::to_string(piece.size()) + ":" + std::string(piece);
    tree.update(std::as_bytes(std::span(field.data(), field.size())));
  };
  std::vector<char> buffer(1 << 16);
  for (const auto& rel : entries) {
    const fs::path full = dir / rel;
    const auto status = fs::symlink_status(full, ec);
    put(rel.generic_string());
    if (fs::is_symlink(status)) {
      put("link");
      put(fs::read_symlink(full, ec).string());
    } else if (fs::is_directory(status)) {
      put("dir");
    } else if (fs::is_regular_file(status)) {
      // The executable bit changes what a build can run.
      put((status.permissions() & fs::perms::owner_exec) != fs::perms::none ? "exec" : "file");
      std::ifstream in(full, std::ios::binary);
      if (!in) return std::unexpected("reading " + full.string());
      digest::Sha256 file;
      while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
        file.update(std::as_bytes(std::span(buffer.data(), static_cast<std::size_t>(in.gcount()))));
      put(file.digest().hex());
    } else {
      put("other");
    }
  }
  return "tree:" + tree.digest().hex();
}

std::expected<SourceState, std::string> prepare_source(const recipe::Source& source, const fs::path& workspace,
                                                       engine::Engine& runner, engine::LogSink& log) {
  if (source.kind == recipe::Source::Kind::path) {
    auto hash = tree_hash(source.path);
    if (!hash) return std::unexpected(hash.error());
    return SourceState{.kind = "path", .revision = *hash, .dir = source.path};
  }
  std::error_code ec;
  fs::create_directories(workspace, ec);
  const fs::path checkout = workspace / "checkout";
  const std::string dir = checkout.string();
  const std::string ref = source.ref.empty() ? "HEAD" : source.ref;
  if (!fs::exists(checkout / ".git")) {
    fs::remove_all(checkout, ec);
    if (auto r = git(runner, log, {"clone", "--no-checkout", "--", source.url, dir}); !r)
      return std::unexpected(r.error());
  }
  // A known commit needs no network; anything else (a tag, a branch) may have moved.
  const bool have_commit =
      is_full_commit(ref) && git(runner, log, {"-C", dir, "cat-file", "-e", ref + "^{commit}"}).has_value();
  if (!have_commit)
    if (auto r = git(runner, log, {"-C", dir, "fetch", "--tags", "--force", "origin"}); !r)
      return std::unexpected(r.error());
  // A branch name resolves to the remote's branch, not a stale local one.
  std::string target = ref;
  if (!is_full_commit(ref) &&
      git(runner, log, {"-C", dir, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/" + ref}))
    target = "origin/" + ref;
  if (auto r = git(runner, log, {"-C", dir, "checkout", "--force", "--detach", target}); !r)
    return std::unexpected(r.error());
  auto head = git(runner, log, {"-C", dir, "rev-parse", "HEAD"});
  if (!head) return std::unexpected(head.error());
  std::string commit = *head;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r')) commit.pop_back();
  return SourceState{.kind = "git", .revision = commit, .dir = checkout};
}

std::expected<void, std::string> copy_source_tree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::create_directories(to, ec);
  if (ec) return std::unexpected("creating " + to.string() + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    if (entry.path().filename() == ".git") continue;
    fs::copy(entry.path(), to / entry.path().filename(), fs::copy_options::recursive | fs::copy_options::copy_symlinks,
             ec);
    if (ec) return std::unexpected("copying " + entry.path().string() + ": " + ec.message());
  }
  if (ec) return std::unexpected("reading " + from.string() + ": " + ec.message());
  return {};
}

}  // namespace orc::app
