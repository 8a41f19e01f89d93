// Counters for GET /metrics (Prometheus text format): replies by route and
// code, request latency, and the database pool's gauges.
#pragma once

#include "core/codes.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace gw {

class Metrics {
 public:
  void count_reply(const std::string& route, std::string_view code, std::chrono::nanoseconds took);
  void count_event(const std::string& name, std::uint64_t n = 1);

  struct PoolGauges {
    std::size_t size = 0, busy = 0, queued = 0;
  };
  std::string render(const PoolGauges& pool) const;

 private:
  static constexpr std::array<double, 10> bounds_{0.001, 0.0025, 0.005, 0.01, 0.025,
                                                  0.05,  0.1,    0.25,  1.0,  5.0};
  struct Histogram {
    std::array<std::uint64_t, 10> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> replies_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, std::uint64_t> events_;
};

}  // namespace gw
