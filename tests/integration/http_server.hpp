#pragma once
// Python's http.server on a free port of 127.0.0.1 for the watcher suites,
// stopped by PID: serving a directory (NVIDIA's redistributable index laid
// out as files), or recording each POST body as one line of a file (a chat
// webhook standing in for the notify URL), or serving a directory where
// every GET under /slow/ of a .json trickles (its headers and one byte of
// the body, then nothing for an hour), each such path appended to
// PORT_FILE.stalled as it arrives: a feed that holds the watcher.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/process.hpp"

namespace orc::integration {

class HttpServer {
 public:
  enum class Mode { serve_directory, record_posts, trickle_slow_json };

  // `path`: the directory served, or the file POST bodies are appended to.
  HttpServer(Mode mode, const std::filesystem::path& path, const std::filesystem::path& port_file) {
    const std::string serve =
        "import functools, http.server, sys\n"
        "handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])\n";
    const std::string record =
        "import http.server, sys\n"
        "class handler(http.server.BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        "        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))\n"
        "        with open(sys.argv[1], 'ab') as f:\n"
        "            f.write(self.headers.get('Content-Type', '').encode() + b' ' + body + b'\\n')\n"
        "        self.send_response(200)\n"
        "        self.end_headers()\n"
        "        self.wfile.write(b'ok')\n"
        "    def log_message(self, *args):\n"
        "        pass\n";
    const std::string trickle =
        "import functools, http.server, sys, time\n"
        "class slow(http.server.SimpleHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        if '/slow/' not in self.path or not self.path.endswith('.json'):\n"
        "            return super().do_GET()\n"
        "        with open(sys.argv[2] + '.stalled', 'a') as f:\n"
        "            f.write(self.path + '\\n')\n"
        "        self.send_response(200)\n"
        "        self.send_header('Content-Length', '1000')\n"
        "        self.end_headers()\n"
        "        self.wfile.write(b'{')\n"
        "        self.wfile.flush()\n"
        "        time.sleep(3600)\n"
        "    def log_message(self, *args):\n"
        "        pass\n"
        "handler = functools.partial(slow, directory=sys.argv[1])\n";
    const std::string script = (mode == Mode::serve_directory ? serve
                                : mode == Mode::record_posts  ? record
                                                              : trickle) +
                               "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)\n"
                               "open(sys.argv[2], 'w').write(str(server.server_address[1]))\n"
                               "server.serve_forever()\n";
    const auto started = run_process({"sh", "-c", "python3 -c \"$0\" \"$1\" \"$2\" >/dev/null 2>&1 & echo $!", script,
                                      path.string(), port_file.string()});
    m_pid = std::atoi(started.output.c_str());
    for (int i = 0; i < 100 && m_port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream(port_file) >> m_port;
    }
  }
  ~HttpServer() {
    if (m_pid > 0) ::kill(m_pid, SIGTERM);
  }
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  int port() const { return m_port; }

 private:
  int m_pid = 0;
  int m_port = 0;
};

}  // namespace orc::integration
