#include "core/digest.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

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

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void write_hex(char* at, const unsigned char* bytes, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    *at++ = hex_digits[bytes[i] >> 4];
    *at++ = hex_digits[bytes[i] & 15];
  }
}

// Every request takes ids from here (request, trace, span): drawing them
// from a per-thread block of CSPRNG output costs one RAND_bytes call (and
// its fork check, a getpid system call) per block instead of three per
// request. Callgrind: a call of 512 bytes took 12.8 thousand instructions,
// one of 4 KiB 47 thousand, so the block is 4 KiB (about 110 requests'
// ids). `use` reads the next `count` bytes where they lie; each byte is
// handed out once, and cleansed once read.
template <class Use>
void take_random(std::size_t count, Use use) {
  struct Block {
    std::array<unsigned char, 4096> bytes;
    std::size_t used = 4096;
  };
  thread_local Block block;
  if (count > block.bytes.size()) {
    std::vector<unsigned char> own(count);
    if (RAND_bytes(own.data(), static_cast<int>(count)) != 1) throw std::runtime_error("RAND_bytes failed");
    use(own.data());
    OPENSSL_cleanse(own.data(), count);
    return;
  }
  if (block.bytes.size() - block.used < count) {
    if (RAND_bytes(block.bytes.data(), static_cast<int>(block.bytes.size())) != 1)
      throw std::runtime_error("RAND_bytes failed");
    block.used = 0;
  }
  use(block.bytes.data() + block.used);
  OPENSSL_cleanse(block.bytes.data() + block.used, count);
  block.used += count;
}

}  // namespace

std::string to_hex(std::string_view bytes) {
  // Every request makes ids with it: one allocation, no appends.
  std::string out(bytes.size() * 2, '\0');
  write_hex(out.data(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return out;
}

std::string sha256_hex(std::string_view bytes) { return to_hex(sha256(bytes)); }

std::string random_bytes(std::size_t count) {
  std::string out(count, '\0');
  take_random(count, [&](const unsigned char* bytes) { std::copy_n(bytes, count, out.data()); });
  return out;
}

std::string random_hex(std::size_t count) {
  // Written as hex straight from the block: no copy of the bytes to cleanse.
  std::string out(count * 2, '\0');
  take_random(count, [&](const unsigned char* bytes) { write_hex(out.data(), bytes, count); });
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace gw
