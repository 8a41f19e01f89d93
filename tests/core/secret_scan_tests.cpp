// Whether a reply reveals a secret, in each form, as tables.
#include "core/base64url.hpp"
#include "core/secret_scan.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace gw;

namespace {

const std::string secret = "demo-provider-credential-5c1e0b7d9a";
const std::string other = "crm-secret-tenant-b";

std::string percent_all(std::string_view text, bool upper_hex) {
  const std::string_view digits = upper_hex ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out += '%';
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string json_escaped(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    out += "\\u00";
    out += "0123456789abcdef"[c >> 4];
    out += "0123456789abcdef"[c & 15];
  }
  return out;
}

std::string upper(std::string text) {
  for (auto& c : text)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return text;
}

bool body_reveals(const SecretScan& scan, std::string_view body) { return scan.reveals(body); }

bool headers_reveal(const SecretScan& scan, const std::vector<std::pair<std::string, std::string>>& headers) {
  SecretScan::Pass pass(scan);
  for (const auto& [name, value] : headers) pass.header(name, value);
  return pass.found();
}

}  // namespace

TEST_CASE("secret scan: every form of a secret in a body is found") {
  const SecretScan scan({secret, other});
  const std::string b64_line = base64_encode("Authorization: Bearer " + secret);
  const struct {
    const char* form;
    std::string body;
  } found[] = {
      {"exact", "token=" + secret + "&x=1"},
      {"with its prefix", R"({"Authorization":"Bearer )" + secret + "\"}"},
      {"upper case", upper("Bearer " + secret)},
      {"mixed case", "DeMo-PrOvIdEr-CrEdEnTiAl-5C1E0B7D9A"},
      {"percent-encoded, upper hex", percent_all(secret, true)},
      {"percent-encoded, lower hex", percent_all(secret, false)},
      {"percent-encoded in part", "demo%2Dprovider%2dcred%65ntial-5c1e0b7d9a"},
      {"percent-encoded, plus its prefix", "Bearer%20" + percent_all(secret, true)},
      {"JSON \\u escapes", "{\"a\":\"" + json_escaped(secret) + "\"}"},
      {"JSON \\u escapes in upper hex", "\\u0064\\u0045\\u006D\\u006Fprovider\\u002dcredential-5c1e0b7d9a"},
      {"JSON escapes and percent-encoding mixed", "\\u0064emo%2dprovider\\/credential-5c1e0b7d9a"},
      {"spaced out", "d e m o p r o v i d e r c r e d e n t i a l 5 c 1 e 0 b 7 d 9 a"},
      {"without its dashes", "demoprovidercredential5c1e0b7d9a"},
      {"base64, alignment 0", base64_encode(secret)},
      {"base64, alignment 1", base64_encode("x" + secret + "y")},
      {"base64, alignment 2", base64_encode("xy" + secret)},
      {"base64 of the whole header line", b64_line},
      {"base64url", base64url_encode("Bearer " + secret)},
      {"base64 in a JSON string", "\"" + base64_encode("?>>" + secret + "?>>") + "\""},
      {"base64, percent-encoded", percent_all(base64_encode("a" + secret), true)},
      {"the other credential", "key: " + other},
  };
  for (const auto& [form, body] : found) {
    CAPTURE(form);
    CAPTURE(body);
    CHECK(body_reveals(scan, body));
  }
}

TEST_CASE("secret scan: a base64 with '/' and '+' JSON-escaped or percent-encoded is still found") {
  // Bytes chosen so that the encoding holds '+' and '/'.
  const std::string binary_secret = "\xfb\xff\xfe-key-\xfb\xef\xbe-0123456789";
  const SecretScan scan({binary_secret});
  std::string encoded = base64_encode(binary_secret);
  REQUIRE(encoded.find('/') != std::string::npos);
  REQUIRE(encoded.find('+') != std::string::npos);
  std::string json = encoded, percent = encoded;
  for (std::size_t at = 0; (at = json.find('/', at)) != std::string::npos; at += 2) json.replace(at, 1, "\\/");
  for (std::size_t at = 0; (at = percent.find('+', at)) != std::string::npos; at += 3) percent.replace(at, 1, "%2B");
  CHECK(body_reveals(scan, json));
  CHECK(body_reveals(scan, percent));
  CHECK(body_reveals(scan, base64url_encode(binary_secret)));
}

TEST_CASE("secret scan: split across header names and values") {
  const SecretScan scan({secret});
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> found{
      {"in one value", {{"X-Echo", "Bearer " + secret}}},
      {"as a header name", {{"X-A", "1"}, {secret, "Authorization"}}},
      {"across a name and its value", {{"demo-provider-cred", "ential-5c1e0b7d9a"}}},
      {"across a value and the next name", {{"X-A", "Bearer demo-provider"}, {"credential-5c1e0b7d9a", "x"}}},
      {"across two headers of one name", {{"X-Echo", "Bearer demo-provider-cre"}, {"X-Echo", "dential-5c1e0b7d9a"}}},
      {"across two headers of different names", {{"X-Echo-1", "demo-provider-"}, {"X-Echo-2", "credential-5c1e0b7d9a"}}},
      {"percent-encoded across two headers",
       {{"X-Echo", percent_all("demo-provider-", true)}, {"X-Echo", percent_all("credential-5c1e0b7d9a", false)}}},
      {"upper case as a name", {{upper(secret), "1"}}},
  };
  for (const auto& [form, headers] : found) {
    CAPTURE(form);
    CHECK(headers_reveal(scan, headers));
  }
  // And through to the body: a value's end and the body's start.
  SecretScan::Pass pass(scan);
  pass.header("X-Echo", "Bearer demo-provider");
  pass.body("-credential-5c1e0b7d9a");
  CHECK(pass.found());
}

TEST_CASE("secret scan: what is not a secret is not found") {
  const SecretScan scan({secret, other});
  const std::string partly = secret.substr(0, secret.size() - 1);
  const std::string nothing[] = {
      "",
      "{\"booking_id\":\"bk_1\",\"status\":\"confirmed\"}",
      "Bearer " + partly,  // all but its last character
      secret.substr(1),   // all but its first
      "demo-provider-credential-5c1e0b7d9b",
      percent_all(partly, true),
      base64_encode(partly.substr(0, 8)),
      "crm-secret-tenant-a",
      "%",
      "%4",
      "\\",
      "\\u00",
      "\\u00zz%zz%%\\\\",
      std::string(4096, 'a'),
  };
  for (const auto& body : nothing) {
    CAPTURE(body);
    CHECK_FALSE(body_reveals(scan, body));
  }
  CHECK_FALSE(headers_reveal(scan, {{"Content-Type", "application/json"}, {"Location", "/bookings/bk_1"}}));
  // No secrets: nothing is ever found.
  const SecretScan none({});
  CHECK(none.needles().empty());
  CHECK_FALSE(none.reveals(secret));
}

TEST_CASE("secret scan: an escape that does not complete is read as the bytes it was") {
  const std::string letters = "abcdefghijklmnop";
  const SecretScan scan({letters});
  // Percent-encoded, so only the decoding reading can find it: an unfinished
  // escape before it must not swallow its first escape.
  for (const std::string prefix : {"%", "%a", "%%", "\\", "\\u", "\\u0", "\\u00", "\\u004", "\\\\", "\\q"}) {
    CAPTURE(prefix);
    CHECK(body_reveals(scan, prefix + percent_all(letters, true)));
    CHECK(body_reveals(scan, percent_all(letters, false) + prefix));
  }
  CHECK(body_reveals(scan, "abcdefghijklmno%70"));
  CHECK(body_reveals(scan, "abcdefghijklmno\\u0070"));
  CHECK(body_reveals(scan, "abcdefghijklmno\\u0050"));
  // A decoded byte is not decoded again: %2561 is "%61", not "a".
  CHECK_FALSE(body_reveals(scan, "%2561bcdefghijklmnop"));
  // \u0168 is no 'h' (0x68): only ASCII code points decode to a letter.
  CHECK_FALSE(body_reveals(scan, "abcdefg\\u0168ijklmnop"));
  CHECK(body_reveals(scan, "abcdefg\\u0068ijklmnop"));
}

TEST_CASE("secret scan: a text without escapes, after one that had them, is decoded from where that one left off") {
  // Texts without '%' or '\\' are read once for both readings while those
  // agree; these are the cases where they no longer do.
  const SecretScan scan({secret});
  const struct {
    std::string form;
    std::vector<std::string> bodies;
  } found[] = {
      {"the readings differ after an escape", {percent_all("demo-provider-", true), "credential-5c1e0b7d9a"}},
      {"an escape open at the end of the text", {"demo-provider-credential-5c1e0b7d9%6", "1"}},
      {"a \\u escape open at the end of the text", {"demo-provider-credential-5c1e0b7d9\\u00", "61"}},
  };
  for (const auto& [form, bodies] : found) {
    CAPTURE(form);
    SecretScan::Pass pass(scan);
    for (const auto& body : bodies) pass.body(body);
    CHECK(pass.found());
  }
  // And through headers: a value ending in an open escape, the next name finishing it.
  CHECK(headers_reveal(scan, {{"X-A", "demo-provider-credential-5c1e0b7d9%"}, {"61", "x"}}));
  // Read together, nothing is found that is not there.
  SecretScan::Pass pass(scan);
  pass.header("Content-Type", "application/json");
  pass.body(R"({"booking_id":"bk_1","status":"confirmed"})");
  CHECK_FALSE(pass.found());
}

namespace {

// The scan's rules written the plain way, as the oracle of the random test
// below: a text folded to its letters and digits in lower case...
std::string fold(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out += static_cast<char>(c);
  }
  return out;
}

// ...and with one level of escapes decoded: %XX; \uXXXX below 0x80; the
// other JSON escapes as nothing. An escape that does not complete is its
// bytes (the next one read afresh), except at the very end, where what it
// held so far is never read.
std::string decode(std::string_view t) {
  const auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  const auto value = [](std::string_view digits) { return std::stoi(std::string(digits), nullptr, 16); };
  std::string out;
  std::size_t i = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '%') {
      std::size_t k = 0;
      while (k < 2 && i + 1 + k < t.size() && hex(t[i + 1 + k])) ++k;
      if (k == 2) {
        out += static_cast<char>(value(t.substr(i + 1, 2)));
        i += 3;
      } else if (i + 1 + k == t.size()) {
        break;  // open at the end
      } else {
        out += t.substr(i, 1 + k);
        i += 1 + k;
      }
    } else if (c == '\\') {
      if (i + 1 == t.size()) break;
      const char e = t[i + 1];
      if (e == 'u') {
        std::size_t k = 0;
        while (k < 4 && i + 2 + k < t.size() && hex(t[i + 2 + k])) ++k;
        if (k == 4) {
          if (const int v = value(t.substr(i + 2, 4)); v < 0x80) out += static_cast<char>(v);
          i += 6;
        } else if (i + 2 + k == t.size()) {
          break;
        } else {
          out += t.substr(i + 1, 1 + k);
          i += 2 + k;
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
        i += 2;
      } else {
        i += 1;  // the backslash is literal; `e` is read afresh
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

bool oracle_finds(const SecretScan& scan, const std::vector<std::string>& texts) {
  std::string all;
  for (const auto& text : texts) all += text;
  for (const auto& readings : {fold(all), fold(decode(all))})
    for (const auto& needle : scan.needles())
      if (readings.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("secret scan: random texts in pieces, with and without escapes, agree with the rules written plainly") {
  // Pieces of the secret as they are, percent-encoded or JSON-escaped, and
  // loose escape bytes, split into texts at random places: the scan (one
  // pass for both readings while they agree, states carried from text to
  // text) must find exactly what searching the folded and decoded whole finds.
  const std::string letters = "abcdefghijklmnop";
  const SecretScan scan({letters});
  std::mt19937 random(30);
  const std::string loose = "%\\u0123456789abcdefABCDEF\"/-xyz";
  int found = 0, not_found = 0;
  bool agree = true;
  for (int n = 0; n < 20000 && agree; ++n) {
    std::string whole;
    for (auto tokens = random() % 24; tokens > 0; --tokens) {
      const auto from = random() % letters.size();
      const std::string part = letters.substr(from, 1 + random() % (letters.size() - from));
      switch (random() % 5) {
        case 0: whole += part; break;
        case 1: whole += percent_all(part, random() % 2 == 0); break;
        case 2: whole += json_escaped(part); break;
        default: whole += loose[random() % loose.size()]; break;
      }
    }
    std::vector<std::string> texts;
    std::size_t at = 0;
    while (at < whole.size()) {
      const auto size = std::min<std::size_t>(whole.size() - at, random() % 12);
      texts.push_back(whole.substr(at, size));
      at += size;
    }
    SecretScan::Pass pass(scan);
    for (const auto& text : texts) pass.body(text);
    const bool expected = oracle_finds(scan, texts);
    if (pass.found() != expected) {
      CAPTURE(whole);
      CHECK(pass.found() == expected);
      agree = false;
    }
    (expected ? found : not_found) += 1;
  }
  CHECK(agree);
  // Both outcomes were exercised, many times.
  CHECK(found > 300);
  CHECK(not_found > 1000);
}

TEST_CASE("secret scan: the needles are each secret folded, and its base64 at three alignments") {
  const SecretScan scan({secret});
  REQUIRE(scan.needles().size() == 4);
  CHECK(scan.needles()[0] == "demoprovidercredential5c1e0b7d9a");
  for (const auto& needle : scan.needles()) CHECK(needle.size() >= min_secret_alphanumerics);
  // A long secret is searched for by its two ends, so the automaton stays small.
  std::string varied;
  for (int i = 0; i < 2000; ++i) varied += std::to_string(i * 7919);
  const SecretScan big({varied});
  CHECK(big.needles().size() == 8);
  CHECK(big.reveals("x" + varied + "x"));
  CHECK(big.reveals(varied.substr(0, 200)));  // a part that reveals its beginning is enough
  CHECK_FALSE(big.reveals(varied.substr(300, 1000)));
}

TEST_CASE("secret scan: letters and digits counted for the config's minimum") {
  CHECK(secret_alphanumerics("") == 0);
  CHECK(secret_alphanumerics("k-123") == 4);
  CHECK(secret_alphanumerics("booking-secret") == 13);
  CHECK(secret_alphanumerics(secret) == 32);
  CHECK(secret_alphanumerics("!!!---___===") == 0);
  CHECK(min_secret_alphanumerics == 12);
}
