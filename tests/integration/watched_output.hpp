#pragma once
// Build output for the engine suites: passed on to stdout, and `hook` called
// with everything written so far (a case waits for a step to start, then
// kills the engine or cancels the build).
#include <functional>
#include <iostream>
#include <mutex>
#include <streambuf>
#include <string>

namespace orc::integration {

class WatchedOutput final : public std::streambuf {
 public:
  explicit WatchedOutput(std::function<void(const std::string&)> hook) : m_hook(std::move(hook)) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::lock_guard lock(m_mutex);
    std::cout.write(s, n);
    m_seen.append(s, static_cast<std::size_t>(n));
    if (m_hook) m_hook(m_seen);
    return n;
  }
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }

 private:
  std::function<void(const std::string&)> m_hook;
  std::mutex m_mutex;
  std::string m_seen;
};

}  // namespace orc::integration
