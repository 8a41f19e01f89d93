// Authority time: PostgreSQL's clock in ms, made monotonic. A decision reads
// GREATEST(clock_timestamp(), the durable floor, this process's high-water
// mark), so time never goes backwards even if the server clock steps back.
// Under the explicit manual test clock it is authority.manual_now_ms instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace gw {

// Where authority time comes from: PostgreSQL's clock, or the manual test
// clock an operator sets (started with --manual-clock only).
enum class ClockSource { database, manual };

class AuthorityClock {
 public:
  explicit AuthorityClock(ClockSource source) : manual_(source == ClockSource::manual) {}

  bool manual() const { return manual_; }

  // SQL for "now" over `authority a`, taking this process's high-water mark
  // as the parameter numbered `param`.
  std::string now_sql(int param) const;
  std::int64_t high_water() const { return high_water_.load(); }
  void observe(std::int64_t now_ms);

 private:
  bool manual_;
  std::atomic<std::int64_t> high_water_{0};
};

}  // namespace gw
