// SHA-256, random secrets and constant-time comparison (OpenSSL's libcrypto).
#pragma once

#include <string>
#include <string_view>

namespace gw {

// Raw 32-byte digest.
std::string sha256(std::string_view bytes);

// Lower-case hex of the digest, as token hashes are written in config.
std::string sha256_hex(std::string_view bytes);

std::string to_hex(std::string_view bytes);

// `count` bytes from the OS CSPRNG; throws if it cannot deliver.
std::string random_bytes(std::size_t count);

// The same bytes as lower-case hex (2 * count characters), drawn without an
// intermediate string: request, trace and span ids.
std::string random_hex(std::size_t count);

// Equality that does not leak where two secrets differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace gw
