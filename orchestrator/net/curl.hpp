#pragma once
// The pieces under the libcurl transport (curl_transport.cpp): owners of an
// easy handle and of a header list, a pool of idle handles so connections
// are reused, and the reading of header lines. No module above net includes
// this: they speak http.hpp. libcurl's own header stays in net's .cpp files:
// its CURL is `void` and its curl_slist a struct, named here without it.
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct curl_slist;

namespace orc::net {

using Curl = void;  // libcurl's CURL

// The one owner of a libcurl easy handle.
class CurlHandle {
 public:
  CurlHandle();  // throws std::bad_alloc when libcurl cannot make one
  ~CurlHandle();
  CurlHandle(CurlHandle&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  CurlHandle& operator=(CurlHandle&& other) noexcept {
    std::swap(m_handle, other.m_handle);
    return *this;
  }
  CurlHandle(const CurlHandle&) = delete;
  CurlHandle& operator=(const CurlHandle&) = delete;

  Curl* get() const { return m_handle; }

 private:
  Curl* m_handle;
};

// A request's header list, freed with the request.
class HeaderList {
 public:
  HeaderList() = default;
  ~HeaderList();
  HeaderList(const HeaderList&) = delete;
  HeaderList& operator=(const HeaderList&) = delete;

  void add(const std::string& line);  // throws std::bad_alloc
  curl_slist* get() const { return m_list; }

 private:
  curl_slist* m_list = nullptr;
};

// Idle handles kept for the next request: curl_easy_reset keeps a handle's
// connection cache, so a connection is reused. A request that finds none
// idle (a followed log stream and a kill from another thread) gets a new
// one. Making a pool also initialises libcurl, once per process.
class HandlePool {
 public:
  HandlePool();
  CurlHandle acquire();
  void release(CurlHandle handle);  // reset, then kept

 private:
  std::mutex m_mutex;
  std::vector<CurlHandle> m_idle;
};

// One line as libcurl hands it to a header callback. A status line
// ("HTTP/1.1 200 OK") starts a new response: `status` is set, `headers`
// cleared, and it returns true (after "100 Continue" or a redirect only the
// last response counts). "Name: value" is appended, both trimmed.
bool read_header_line(std::string_view line, int& status, std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace orc::net
