// gw::decode_grant_token (core/grant.hpp) on the input twice: as the text an
// agent puts in Fence-Grant, and base64url-encoded, so that the fuzzer also
// reaches the JSON and label rules behind the base64url layer directly.
//
// A token that decodes must hold only labels and a non-negative epoch, and
// re-encoding it with encode_grant_token must give a token that decodes to
// the same grant (one grant, whatever spelling was presented). Traps otherwise.
#include "core/base64url.hpp"
#include "core/grant.hpp"
#include "core/labels.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool same(const gw::GrantToken& a, const gw::GrantToken& b) {
  return a.identity.realm == b.identity.realm && a.identity.scope == b.identity.scope &&
         a.identity.owner == b.identity.owner && a.identity.epoch == b.identity.epoch && a.secret == b.secret;
}

void decode(std::string_view text) {
  const auto token = gw::decode_grant_token(text);
  if (!token) return;
  // Only strict base64url gets this far: alphabet, no padding, a possible length.
  check(text.size() % 4 != 1);
  check(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
        std::string_view::npos);
  check(gw::base64url_encode(*gw::base64url_decode(text)) == text);  // one spelling of the bytes

  const auto& id = token->identity;
  for (const auto* label : {&id.realm, &id.scope.tenant, &id.scope.task, &id.owner, &token->secret})
    check(gw::is_label(*label));
  check(id.epoch >= 0);

  const auto encoded = gw::encode_grant_token(*token);
  check(encoded.find('=') == std::string::npos);
  const auto again = gw::decode_grant_token(encoded);
  check(again && same(*again, *token));
  check(gw::encode_grant_token(*again) == encoded);  // the encoding is canonical
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  decode(input);
  decode(gw::base64url_encode(input));
  return 0;
}
