#include "support/provider_process.hpp"

#include <algorithm>

#include "support/http_client.hpp"

#include <strings.h>

#include <regex>
#include <stdexcept>
#include <thread>

namespace gw::test {

ProviderProcess::ProviderProcess(const std::string& kind, const std::vector<std::string>& credentials,
                                 const std::vector<std::string>& extra_args) {
  std::string list;
  for (const auto& c : credentials) list += (list.empty() ? "" : ",") + c;
  std::vector<std::string> args{"--kind", kind, "--port", "0", "--control-port", "0"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  process_ = std::make_unique<ChildProcess>(
      ChildProcess::Options{test_binary("demo-provider"), std::move(args), {{"DEMO_PROVIDER_CREDENTIALS", list}}});
  // "demo-provider kind=K port=P control_port=C"
  auto line = process_->wait_for_line("demo-provider kind=", std::chrono::seconds(30));
  std::smatch m;
  if (!std::regex_search(line, m, std::regex(R"( port=(\d+) control_port=(\d+))")))
    throw std::runtime_error("unexpected demo-provider startup line: " + line);
  port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
  control_port_ = static_cast<std::uint16_t>(std::stoi(m[2]));
}

nlohmann::json ProviderProcess::control(const std::string& method, const std::string& target,
                                        const nlohmann::json& body) const {
  // A client per call: the control API is used from several test threads.
  HttpClient c(control_port_);
  auto r = method == "POST" ? c.post_json(target, body, "") : c.get(target, "");
  if (r.status != 200) throw std::runtime_error(method + " " + target + ": " + std::to_string(r.status) + " " + r.body);
  return r.json();
}

nlohmann::json ProviderProcess::effects() const { return control("GET", "/__test/effects"); }

std::int64_t ProviderProcess::effect_count() const { return effects()["effects"].get<std::int64_t>(); }

std::int64_t ProviderProcess::effects_for(const std::string& upstream_key) const {
  auto by_key = effects()["by_key"];
  return by_key.contains(upstream_key) ? by_key[upstream_key].get<std::int64_t>() : 0;
}

nlohmann::json ProviderProcess::requests() const { return control("GET", "/__test/requests")["requests"]; }

std::size_t ProviderProcess::requests_with_key(const std::string& upstream_key) const {
  std::size_t n = 0;
  for (const auto& r : requests())
    for (const auto& [name, value] : r["headers"].items())
      if (strcasecmp(name.c_str(), "Idempotency-Key") == 0 && value == upstream_key) ++n;
  return n;
}

void ProviderProcess::set_fault(const std::string& mode, std::int64_t delay_ms,
                                std::optional<std::int64_t> count) const {
  nlohmann::json body{{"mode", mode}, {"delay_ms", delay_ms}};
  if (count) body["count"] = *count;
  control("POST", "/__test/faults", body);
}

nlohmann::json ProviderProcess::set_fault_json(const nlohmann::json& body) const {
  return control("POST", "/__test/faults", body);
}

void ProviderProcess::reply_status_next(unsigned status, std::optional<std::string> retry_after,
                                        std::optional<std::int64_t> count) const {
  nlohmann::json body{{"mode", "reply_status"}, {"status", status}};
  if (retry_after) body["retry_after"] = *retry_after;
  if (count) body["count"] = *count;
  set_fault_json(body);
}

void ProviderProcess::reset() const { control("POST", "/__test/reset", nlohmann::json::object()); }

void ProviderProcess::hold_next(std::optional<std::int64_t> count) const {
  nlohmann::json body{{"mode", "hold"}};
  if (count) body["count"] = *count;
  set_fault_json(body);
}

std::int64_t ProviderProcess::release(std::optional<std::int64_t> count) const {
  nlohmann::json body = nlohmann::json::object();
  if (count) body["count"] = *count;
  return control("POST", "/__test/release", body)["released"].get<std::int64_t>();
}

nlohmann::json ProviderProcess::activity() const { return control("GET", "/__test/activity"); }

void ProviderProcess::set_reply_headers(const std::vector<std::pair<std::string, std::string>>& headers) const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, value] : headers) {
    const bool ascii = std::ranges::all_of(value, [](unsigned char c) { return c >= 0x20 && c <= 0x7e; });
    if (ascii) {
      list.push_back({name, value});
      continue;
    }
    // Bytes a JSON string cannot carry go as hex (control_api.hpp).
    std::string hex;
    for (unsigned char c : value) {
      hex += "0123456789abcdef"[c >> 4];
      hex += "0123456789abcdef"[c & 15];
    }
    list.push_back({name, {{"hex", hex}}});
  }
  control("POST", "/__test/reply_headers", {{"headers", list}});
}

Reply ProviderProcess::control_raw(const std::string& method, const std::string& target,
                                   const std::string& body) const {
  HttpClient c(control_port_);
  Headers h;
  if (!body.empty()) h.emplace_back("Content-Type", "application/json");
  return c.request(method, target, h, body);
}

namespace {

bool poll_until(const std::function<nlohmann::json()>& read, const std::function<bool(const nlohmann::json&)>& done,
                std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done(read())) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

bool ProviderProcess::wait_for_requests(const std::function<bool(const nlohmann::json&)>& done,
                                        std::chrono::milliseconds limit) const {
  return poll_until([this] { return requests(); }, done, limit);
}

bool ProviderProcess::wait_for_held(std::int64_t count, std::chrono::milliseconds limit) const {
  return poll_until([this] { return activity(); }, [count](const nlohmann::json& a) { return a["held"] == count; },
                    limit);
}

bool ProviderProcess::wait_until_idle(std::chrono::milliseconds limit) const {
  return poll_until([this] { return activity(); }, [](const nlohmann::json& a) { return a["in_progress"] == 0; },
                    limit);
}

bool ProviderProcess::wait_for_effects(const std::function<bool(const nlohmann::json&)>& done,
                                       std::chrono::milliseconds limit) const {
  return poll_until([this] { return effects(); }, done, limit);
}

ReleaseOnExit::~ReleaseOnExit() {
  try {
    provider_.release();
  } catch (...) {
    // The provider is gone: nothing is held any more.
  }
}

}  // namespace gw::test
