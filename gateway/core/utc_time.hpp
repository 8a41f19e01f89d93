// Authority and wall-clock times as people read them: ISO 8601 in UTC with
// milliseconds. Log lines, and detail texts an operator reads beside raw
// *_ms fields, so nobody has to convert epoch milliseconds at 3 a.m.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gw {

// "2024-05-01T12:00:00.123Z", without the quotes.
void append_utc_timestamp(std::string& out, std::chrono::system_clock::time_point at);

// The same for Unix epoch milliseconds (authority time).
std::string utc_text(std::int64_t unix_ms);

}  // namespace gw
