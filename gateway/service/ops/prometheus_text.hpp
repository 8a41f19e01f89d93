// The Prometheus text exposition format (version 0.0.4), as a writer that
// GET /metrics fills family by family: HELP and TYPE once per family, label
// values escaped, histograms as cumulative _bucket/_sum/_count series.
// Pure; tested in tests/service/metrics_tests.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Backslash, double quote and line feed escaped, as the format requires.
std::string escape_label_value(std::string_view value);
// Shortest text that reads back as the same double; "+Inf", "-Inf", "NaN".
std::string format_sample_value(double value);

// Observations in cumulative buckets with fixed upper bounds (seconds).
class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds) : bounds_(bounds), buckets_(bounds.size(), 0) {}
  void observe(double value);
  std::span<const double> bounds() const { return bounds_; }
  // Observations <= bounds()[i] (cumulative, as exposed).
  std::uint64_t cumulative(std::size_t i) const;
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::span<const double> bounds_;
  std::vector<std::uint64_t> buckets_;  // per bucket, not cumulative
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

class PromText {
 public:
  // Starts a family: its HELP and TYPE lines. Each name at most once.
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, const Labels& labels, double value);
  void sample(std::string_view name, const Labels& labels, std::uint64_t value);
  // name_bucket{...,le=...}, name_sum, name_count.
  void histogram(std::string_view name, const Labels& labels, const Histogram& h);
  const std::string& text() const { return out_; }

 private:
  void series(std::string_view name, const Labels& labels, std::string_view extra_label,
              std::string_view extra_value);
  std::string out_;
};

}  // namespace gw
