// What every fuzz target shares: how a parser may refuse input, and how a broken invariant is reported.
// A parser refuses bad input by throwing weft::Error (the documented way); any other exception escaping it,
// or an Error with a code that is not a weftResult_t, is a bug. A broken invariant aborts, which libFuzzer
// records as a crash with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/common/error.h"

namespace weft::fuzz {

[[noreturn]] inline void invariantFailed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", what, file, line);
  std::abort();
}

#define FUZZ_CHECK(condition) \
  ((condition) ? static_cast<void>(0) : ::weft::fuzz::invariantFailed(#condition, __FILE__, __LINE__))

// Runs `parse`; true when it accepted the input, false when it refused it with a weft::Error whose code is
// `expected` (any valid weftResult_t when expected is weftSuccess).
template <typename Parse>
bool accepts(weftResult_t expected, Parse&& parse) {
  try {
    parse();
    return true;
  } catch (const Error& e) {
    // Read as an int: an out-of-range code must be reported here, not be undefined behaviour.
    const int code = static_cast<int>(e.code());
    FUZZ_CHECK(code > weftSuccess && code <= weftNotSupported);
    FUZZ_CHECK(expected == weftSuccess || code == expected);
    FUZZ_CHECK(e.what()[0] != '\0');  // a refusal says what is wrong
    return false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parser threw a non-weft exception: %s\n", e.what());
    std::abort();
  }
}

inline std::string text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// A fixed-size wire record of `bytes` from the input, zero-padded, in a buffer of exactly that size (so that
// ASan sees any read past its end).
inline std::vector<unsigned char> record(const uint8_t* data, size_t size, size_t bytes) {
  std::vector<unsigned char> r(bytes, 0);
  std::memcpy(r.data(), data, size < bytes ? size : bytes);
  return r;
}

}  // namespace weft::fuzz
