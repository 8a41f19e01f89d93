#include "core/base64url.hpp"

#include <array>
#include <cstdint>

namespace gw {
namespace {

constexpr std::string_view url_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::string_view standard_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_reverse(std::string_view alphabet) {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return table;
}
constexpr auto url_reverse = make_reverse(url_alphabet);
constexpr auto standard_reverse = make_reverse(standard_alphabet);

// Written into a string sized once: appending a character at a time checked
// the capacity for each (a claim's token is some 300 of them).
std::string encode(std::string_view bytes, std::string_view alphabet, bool pad) {
  const std::size_t whole = bytes.size() / 3, rest = bytes.size() % 3;
  std::string out(whole * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1), '\0');
  char* at = out.data();
  auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (std::size_t i = 0; i < whole * 3; i += 3) {
    const std::uint32_t n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    at[0] = alphabet[n >> 18 & 63];
    at[1] = alphabet[n >> 12 & 63];
    at[2] = alphabet[n >> 6 & 63];
    at[3] = alphabet[n & 63];
    at += 4;
  }
  if (rest != 0) {
    const std::size_t i = whole * 3;
    const std::uint32_t n = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    *at++ = alphabet[n >> 18 & 63];
    *at++ = alphabet[n >> 12 & 63];
    if (rest == 2) *at++ = alphabet[n >> 6 & 63];
    if (pad) *at++ = '=';
    if (pad && rest == 1) *at++ = '=';
  }
  return out;
}

// Unpadded text only; callers strip or refuse padding first.
std::optional<std::string> decode(std::string_view text, const std::array<std::int8_t, 256>& reverse) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    auto v = reverse[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits must be zero, or two texts would decode to the same bytes.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::string base64url_encode(std::string_view bytes) { return encode(bytes, url_alphabet, false); }

std::optional<std::string> base64url_decode(std::string_view text) { return decode(text, url_reverse); }

std::string base64_encode(std::string_view bytes) { return encode(bytes, standard_alphabet, true); }

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 == 0 && !text.empty()) {
    // Padded: exactly the '=' the length calls for, and only at the end.
    std::size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
    text.remove_suffix(pad);
  }
  if (text.find('=') != std::string_view::npos) return std::nullopt;
  return decode(text, standard_reverse);
}

}  // namespace gw
