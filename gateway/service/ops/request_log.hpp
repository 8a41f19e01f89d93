// Which requests leave a log line, at which level: pure rules, tested in
// tests/service/request_log_tests.cpp. The line itself is App::log_request.
#pragma once

#include "config/config.hpp"

#include <string_view>

namespace gw {

// internal_error is error; what an operator must see (unknown_outcome,
// authority_unavailable, provider_unavailable, an unrecorded outcome) is
// warn; probes and scrapes (healthz, readyz, metrics, openapi) are debug;
// everything else info.
LogLevel request_line_level(std::string_view route, std::string_view code);

// Written when its level is enabled, and either the access log is on or the
// line is warn or worse: an unknown_outcome never goes unlogged.
bool request_line_wanted(LogLevel line, const LogConfig& config);

}  // namespace gw
