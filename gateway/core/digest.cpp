#include "core/digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>

namespace gw {

namespace {

// OpenSSL 3's one-shot SHA256() looks the algorithm up (under a lock) on
// every call; a token is hashed on every request, so fetch it once and keep
// one digest context per thread.
const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    if (!fetched) throw std::runtime_error("SHA-256 is not available");
    return fetched;
  }();
  return md;
}

struct DigestContext {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

}  // namespace

std::string sha256(std::string_view bytes) {
  thread_local DigestContext context;
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  unsigned int length = 0;
  auto* ctx = context.ctx.get();
  if (!ctx || EVP_DigestInit_ex2(ctx, sha256_md(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx, bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, reinterpret_cast<unsigned char*>(out.data()), &length) != 1 ||
      length != SHA256_DIGEST_LENGTH)
    throw std::runtime_error("SHA-256 failed");
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  // Every request makes ids with it: one allocation, no appends.
  std::string out(bytes.size() * 2, '\0');
  auto* at = out.data();
  for (unsigned char c : bytes) {
    *at++ = digits[c >> 4];
    *at++ = digits[c & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) { return to_hex(sha256(bytes)); }

namespace {

// Every request takes ids from here (request, trace, span): drawing them
// from a per-thread block of CSPRNG output costs one RAND_bytes call (and
// its fork check, a getpid system call) per block instead of three per
// request. Each byte is handed out once.
void draw_random(unsigned char* out, std::size_t count) {
  struct Block {
    std::array<unsigned char, 512> bytes;
    std::size_t used = 512;
  };
  thread_local Block block;
  if (count > block.bytes.size()) {
    if (RAND_bytes(out, static_cast<int>(count)) != 1) throw std::runtime_error("RAND_bytes failed");
    return;
  }
  if (block.bytes.size() - block.used < count) {
    if (RAND_bytes(block.bytes.data(), static_cast<int>(block.bytes.size())) != 1)
      throw std::runtime_error("RAND_bytes failed");
    block.used = 0;
  }
  std::copy_n(block.bytes.data() + block.used, count, out);
  OPENSSL_cleanse(block.bytes.data() + block.used, count);
  block.used += count;
}

}  // namespace

std::string random_bytes(std::size_t count) {
  std::string out(count, '\0');
  draw_random(reinterpret_cast<unsigned char*>(out.data()), count);
  return out;
}

std::string random_hex(std::size_t count) {
  std::array<unsigned char, 64> bytes;
  if (count > bytes.size()) return to_hex(random_bytes(count));
  draw_random(bytes.data(), count);
  auto hex = to_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), count));
  OPENSSL_cleanse(bytes.data(), count);
  return hex;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace gw
