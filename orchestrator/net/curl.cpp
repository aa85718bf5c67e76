#include "orchestrator/net/curl.hpp"

#include <curl/curl.h>

#include <new>

#include "orchestrator/util/strings.hpp"

namespace orc::net {

CurlHandle::CurlHandle() : m_handle(curl_easy_init()) {
  if (!m_handle) throw std::bad_alloc();
}

CurlHandle::~CurlHandle() {
  if (m_handle) curl_easy_cleanup(m_handle);
}

HeaderList::~HeaderList() { curl_slist_free_all(m_list); }

void HeaderList::add(const std::string& line) {
  curl_slist* next = curl_slist_append(m_list, line.c_str());
  if (!next) throw std::bad_alloc();
  m_list = next;
}

HandlePool::HandlePool() {
  // curl_global_init is not thread-safe in curl 7.88; do it exactly once.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CurlHandle HandlePool::acquire() {
  std::lock_guard lock(m_mutex);
  if (m_idle.empty()) return CurlHandle();
  CurlHandle handle = std::move(m_idle.back());
  m_idle.pop_back();
  return handle;
}

void HandlePool::release(CurlHandle handle) {
  curl_easy_reset(handle.get());
  std::lock_guard lock(m_mutex);
  m_idle.push_back(std::move(handle));
}

bool read_header_line(std::string_view line, int& status, std::vector<std::pair<std::string, std::string>>& headers) {
  if (line.starts_with("HTTP/")) {
    headers.clear();
    status = 0;
    const auto space = line.find(' ');
    for (std::size_t i = space == std::string_view::npos ? line.size() : space + 1;
         i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i)
      status = status * 10 + (line[i] - '0');
    return true;
  }
  if (const auto colon = line.find(':'); colon != std::string_view::npos)
    headers.emplace_back(std::string(util::trim(line.substr(0, colon))),
                         std::string(util::trim(line.substr(colon + 1))));
  return false;
}

}  // namespace orc::net
