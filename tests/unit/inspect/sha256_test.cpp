#include "orchestrator/inspect/sha256.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orc::inspect {
namespace {

// FIPS 180-2 test vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(as_bytes("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(as_bytes("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(as_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShotAndRestartsAfterDigest) {
  const std::string million(1000000, 'a');
  Sha256 h;
  for (std::size_t i = 0; i < million.size(); i += 4093) h.update(as_bytes(std::string_view(million).substr(i, 4093)));
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // After a digest the hasher starts afresh.
  h.update(as_bytes("abc"));
  EXPECT_EQ(h.hex_digest(), sha256_hex(as_bytes("abc")));
  // Moved-from-and-into hashers keep working.
  Sha256 moved = std::move(h);
  moved.update(as_bytes("abc"));
  EXPECT_EQ(moved.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace orc::inspect
