#include "core/base64url.hpp"

#include <doctest/doctest.h>

using gw::base64url_decode;
using gw::base64url_encode;

TEST_CASE("base64url round-trips every length without padding") {
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    auto text = base64url_encode(bytes);
    CHECK(text.find('=') == std::string::npos);
    CHECK(base64url_decode(text) == bytes);
    bytes += static_cast<char>(i * 37 + 250);
  }
  CHECK(base64url_encode("\xfb\xff") == "-_8");
}

TEST_CASE("base64url decoding is strict") {
  CHECK_FALSE(base64url_decode("YQ=="));  // padding
  CHECK_FALSE(base64url_decode("Y+8"));   // standard alphabet
  CHECK_FALSE(base64url_decode("Y/8"));
  CHECK_FALSE(base64url_decode("a"));     // impossible length
  CHECK_FALSE(base64url_decode("YR"));    // non-zero leftover bits: a second spelling of "a"
  CHECK(base64url_decode("YQ") == "a");
  CHECK(base64url_decode("") == "");
}

TEST_CASE("base64 with padding gives RFC 4648's test vectors") {
  using gw::base64_encode;
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foob") == "Zm9vYg==");
  CHECK(base64_encode("fooba") == "Zm9vYmE=");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(base64_encode("\xfb\xff\xbf") == "+/+/");
  CHECK(base64url_encode("f") == "Zg");
  CHECK(base64url_encode("fo") == "Zm8");
  CHECK(base64url_encode("foobar") == "Zm9vYmFy");
}
