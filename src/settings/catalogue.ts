/**
 * What each environment variable of the service is for, and which of vend's commands it changes. Its shape, default
 * and bounds are not here: the readers in src/config.ts note them as they read (src/settings/reads.ts), and
 * scripts/configuration-page.ts joins the two into docs/configuration.md. test/unit/docs-freshness.test.ts fails when a
 * variable is read but not described here, or described here but never read.
 */
import { providerSettings, retentionSettings } from "./provider-settings.ts";
import { apiSettings, databaseSettings, observabilitySettings, requestLogSettings, workerSettings } from "./service-settings.ts";
import type { SettingDoc } from "./setting-doc.ts";

/** Every variable the service reads, by name. */
export const settingsCatalogue: Readonly<Record<string, SettingDoc>> = {
  ...databaseSettings,
  ...apiSettings,
  ...workerSettings,
  ...providerSettings,
  ...retentionSettings,
  ...requestLogSettings,
  ...observabilitySettings,
};
