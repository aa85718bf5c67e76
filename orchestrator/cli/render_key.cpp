// `orchestrate key generate | export | trust`, rendered.
#include <nlohmann/json.hpp>
#include <ostream>

#include "orchestrator/cli/render.hpp"

namespace orc::cli {

namespace {

using nlohmann::ordered_json;

}  // namespace

void emit(Io& io, const app::KeyGenerateReport& report, Format format) {
  if (format == Format::json)
    io.out << ordered_json{{"key_id", report.key_id},
                           {"private_key", report.private_key.string()},
                           {"public_key", report.public_key.string()}}
                  .dump(2)
           << "\n";
  else
    io.out << "generated signing key " << report.key_id << "\n  private key: " << report.private_key.string()
           << " (mode 0600; keep it on this machine)\n  public key:  " << report.public_key.string()
           << " (trusted here; 'orchestrate key trust' it on every machine that fetches)\n";
  io.exit_code = report.exit_code;
}

// The PEM alone on stdout, so `key export > me.pem` writes a key file.
void emit(Io& io, const app::KeyExportReport& report, Format format) {
  if (format == Format::json) {
    io.out << ordered_json{{"key_id", report.key_id}, {"public_key", report.pem}}.dump(2) << "\n";
  } else {
    io.out << report.pem;
    io.err << "key id " << report.key_id << "\n";
  }
  io.exit_code = report.exit_code;
}

void emit(Io& io, const app::KeyTrustReport& report, Format format) {
  if (format == Format::json) {
    ordered_json trusted = ordered_json::array();
    for (const auto& t : report.trusted) trusted.push_back({{"key_id", t.key_id}, {"file", t.file}});
    io.out << ordered_json{{"trusted", std::move(trusted)}}.dump(2) << "\n";
  } else {
    for (const auto& t : report.trusted) io.out << "trusted key " << t.key_id << " from " << t.file << "\n";
  }
  io.exit_code = report.exit_code;
}

}  // namespace orc::cli
