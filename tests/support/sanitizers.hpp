// Whether this test binary runs under AddressSanitizer: GCC says so with
// __SANITIZE_ADDRESS__, clang (the asan tree's compiler) only through
// __has_feature. For the few tests whose bounds ASan's own machinery moves.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define GW_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GW_TEST_ASAN 1
#endif
#endif
