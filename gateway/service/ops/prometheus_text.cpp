#include "service/ops/prometheus_text.hpp"

#include <charconv>
#include <cmath>

namespace gw {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : "NaN";
}

void Histogram::observe(double value) {
  for (std::size_t i = 0; i < bounds_.size(); ++i)
    if (value <= bounds_[i]) {
      ++buckets_[i];
      break;
    }
  ++count_;
  sum_ += value;
}

std::uint64_t Histogram::cumulative(std::size_t i) const {
  std::uint64_t n = 0;
  for (std::size_t j = 0; j <= i && j < buckets_.size(); ++j) n += buckets_[j];
  return n;
}

void PromText::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // HELP text escapes only backslash and line feed.
  for (char c : help) {
    if (c == '\\') out_ += "\\\\";
    else if (c == '\n') out_ += "\\n";
    else out_ += c;
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PromText::series(std::string_view name, const Labels& labels, std::string_view extra_label,
                      std::string_view extra_value) {
  out_ += name;
  if (!labels.empty() || !extra_label.empty()) {
    out_ += '{';
    bool first = true;
    auto add = [&](std::string_view k, std::string_view v) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      out_ += escape_label_value(v);
      out_ += '"';
    };
    for (const auto& [k, v] : labels) add(k, v);
    if (!extra_label.empty()) add(extra_label, extra_value);
    out_ += '}';
  }
  out_ += ' ';
}

void PromText::sample(std::string_view name, const Labels& labels, double value) {
  series(name, labels, {}, {});
  out_ += format_sample_value(value);
  out_ += '\n';
}

void PromText::sample(std::string_view name, const Labels& labels, std::uint64_t value) {
  series(name, labels, {}, {});
  out_ += std::to_string(value);
  out_ += '\n';
}

void PromText::histogram(std::string_view name, const Labels& labels, const Histogram& h) {
  std::string bucket(name), sum(name), count(name);
  bucket += "_bucket";
  sum += "_sum";
  count += "_count";
  const auto bounds = h.bounds();
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    series(bucket, labels, "le", format_sample_value(bounds[i]));
    out_ += std::to_string(h.cumulative(i));
    out_ += '\n';
  }
  series(bucket, labels, "le", "+Inf");
  out_ += std::to_string(h.count());
  out_ += '\n';
  sample(sum, labels, h.sum());
  sample(count, labels, h.count());
}

}  // namespace gw
