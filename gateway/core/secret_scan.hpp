// Whether a reply reveals any of a set of secrets (a provider's credentials),
// in the forms a careless provider echoes a request in: exact; in any ASCII
// case; percent-encoded, wholly or in part, in either hex case; with JSON
// \uXXXX and \/ escapes; split across header names and values (the header
// block is read as one text: each name, then its value, in order, and again
// as its values alone, so a value folded into two headers of one name still
// reads whole); and base64 or base64url of the secret at any of the three
// byte alignments (inside "Bearer <secret>" or any other text). A prefix such
// as "Bearer " is not part of a secret, so the secret is found with or
// without one.
//
// How: both the secret and the reply are read as their ASCII letters and
// digits only, folded to lower case, and the reply a second time with its
// percent and JSON escapes decoded; punctuation, spaces, separators and
// escape syntax then cannot hide a secret. The secrets' forms are one
// Aho-Corasick automaton, built once per config; a reply is one pass over its
// bytes, with no allocation. The price is that a secret must have enough
// letters and digits that ordinary text never holds them in that order
// (min_secret_alphanumerics; the config refuses shorter ones).
//
// Pure: no I/O. Tested as tables in tests/core/secret_scan_tests.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

// Fewer letters and digits than this cannot be told apart from ordinary
// text: the config refuses such a credential.
inline constexpr std::size_t min_secret_alphanumerics = 12;

// How many ASCII letters and digits `secret` has: what the scan matches on.
std::size_t secret_alphanumerics(std::string_view secret);

class SecretScan {
 public:
  // Every form of every secret. An empty list never finds anything. Secrets
  // shorter than min_secret_alphanumerics are still scanned for (the config
  // refuses them first).
  explicit SecretScan(const std::vector<std::string_view>& secrets);

  // One reply, read in order: each header (name, then value), then the body.
  // A pass holds only states, so it is cheap to make and copy.
  class Pass {
   public:
    explicit Pass(const SecretScan& scan) : scan_(&scan) {}
    void header(std::string_view name, std::string_view value);
    void body(std::string_view bytes);
    bool found() const { return found_; }

   private:
    // One way of reading the text: plain, or with escapes decoded.
    struct Reader {
      std::uint32_t state = 0;   // in the automaton: where its row of moves starts
      std::uint8_t escape = 0;   // decoding only: where in an escape it is
      std::uint16_t pending = 0;  // decoding only: the escape's digits so far
    };
    bool plain(Reader& r, std::string_view bytes);  // true: `bytes` hold '%' or '\\'
    void decoded(Reader& r, std::string_view bytes);
    void read(Reader& as_is, Reader& decoding, std::string_view bytes);
    void step(Reader& r, unsigned char c);

    const SecretScan* scan_;
    // The header block with names (continued by the body), and its values alone.
    Reader all_plain_, all_decoded_, values_plain_, values_decoded_;
    bool found_ = false;
  };

  // Whether these bytes alone (one text, no headers) reveal a secret.
  bool reveals(std::string_view text) const;

  // The forms searched for, as the scan reads them (letters and digits,
  // lower case): for the tests.
  const std::vector<std::string>& needles() const { return needles_; }

 private:
  static constexpr std::size_t symbols = 36;  // 0-9, a-z
  std::vector<std::string> needles_;
  // states * symbols: the automaton's moves, each the start of its target
  // state's row, with the top bit set when some needle ends there.
  std::vector<std::uint32_t> next_;
};

}  // namespace gw
