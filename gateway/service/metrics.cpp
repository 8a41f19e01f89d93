#include "service/metrics.hpp"

#include <sstream>

namespace gw {

void Metrics::count_reply(const std::string& route, std::string_view code,
                          std::chrono::nanoseconds took) {
  const double seconds = std::chrono::duration<double>(took).count();
  std::lock_guard lock(mutex_);
  ++replies_[{route, std::string(code)}];
  auto& h = latency_[route];
  for (std::size_t i = 0; i < bounds_.size(); ++i)
    if (seconds <= bounds_[i]) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::count_event(const std::string& name, std::uint64_t n) {
  std::lock_guard lock(mutex_);
  events_[name] += n;
}

std::string Metrics::render(const PoolGauges& pool) const {
  std::ostringstream out;
  std::lock_guard lock(mutex_);
  out << "# HELP gateway_replies_total Replies by route and Gateway-Status code.\n"
         "# TYPE gateway_replies_total counter\n";
  for (const auto& [key, n] : replies_)
    out << "gateway_replies_total{route=\"" << key.first << "\",code=\"" << key.second << "\"} " << n
        << "\n";
  out << "# HELP gateway_request_seconds Time from a complete request to its reply.\n"
         "# TYPE gateway_request_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    for (std::size_t i = 0; i < bounds_.size(); ++i)
      out << "gateway_request_seconds_bucket{route=\"" << route << "\",le=\"" << bounds_[i] << "\"} "
          << h.buckets[i] << "\n";
    out << "gateway_request_seconds_bucket{route=\"" << route << "\",le=\"+Inf\"} " << h.count << "\n"
        << "gateway_request_seconds_sum{route=\"" << route << "\"} " << h.sum << "\n"
        << "gateway_request_seconds_count{route=\"" << route << "\"} " << h.count << "\n";
  }
  out << "# HELP gateway_events_total Notable internal events.\n"
         "# TYPE gateway_events_total counter\n";
  for (const auto& [name, n] : events_) out << "gateway_events_total{event=\"" << name << "\"} " << n << "\n";
  out << "# HELP gateway_db_pool_connections Database worker connections.\n"
         "# TYPE gateway_db_pool_connections gauge\n"
         "gateway_db_pool_connections " << pool.size << "\n"
      << "# TYPE gateway_db_pool_busy gauge\ngateway_db_pool_busy " << pool.busy << "\n"
      << "# TYPE gateway_db_pool_queued gauge\ngateway_db_pool_queued " << pool.queued << "\n";
  return out.str();
}

}  // namespace gw
