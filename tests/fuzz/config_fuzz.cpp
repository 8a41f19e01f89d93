// gw::parse_config (config/config.hpp) on arbitrary text: a bad config must
// stop the gateway with a ConfigError naming the field, never crash it or
// run into undefined behaviour. Any other exception escapes and counts as a
// finding: the header documents ConfigError only.
//
// The environment holds the variables the repo's configs and the config
// tests name (database URL, provider credentials, webhook secrets), so that
// inputs derived from them get past credential resolution into the rest of
// the validation. A config that loads is also asked what the gateway asks
// of it at start (lookup lease, forward budgets, credentials per tenant).
#include "config/config.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* vars[][2] = {
      {"GATEWAY_DATABASE_URL", "host=127.0.0.1 dbname=gateway"},
      {"BOOKING_KEY_TENANT_A", "booking-secret-tenant-a"},
      {"BOOKING_KEY_TENANT_B", "booking-secret-tenant-b"},
      {"CRM_KEY_TENANT_A", "crm-secret-tenant-a"},
      {"CRM_KEY_TENANT_B", "crm-secret-tenant-b"},
      {"GW_TEST_DB_URL", "host=db"},
      {"GW_TEST_BOOKING_KEY", "k-123-booking-test"},
      {"GW_TEST_CRM_KEY", "crm-test-credential"},
      {"GW_TEST_WH_NEW", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},
      {"GW_TEST_WH_OLD", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
      {"GW_TEST_WH_BAD", "whsec_short"},
  };
  for (const auto& [name, value] : vars) ::setenv(name, value, /*overwrite=*/0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gw::Config config;
  try {
    config = gw::parse_config(text);
  } catch (const gw::ConfigError&) {
    return 0;
  }
  (void)gw::lookup_providers(config);
  (void)gw::lookup_lease(config);
  for (const auto& provider : config.providers) {
    (void)provider.forward_budget();
    for (const auto& agent : config.agents)
      for (const auto& tenant : agent.tenants)
        if (const auto* credential = provider.credential_for(tenant))
          if (!provider.reveals_credential(*credential)) __builtin_trap();
  }
  return 0;
}
