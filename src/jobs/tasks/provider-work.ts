import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import type { Logger } from "../../logger.ts";
import { providerTasks } from "../../providers/registry.ts";
import type { Task } from "../queue.ts";

/** What the providers' own periodic work needs (the sandbox posts its delayed callbacks to `apiBaseUrl`). */
export interface ProviderWorkDeps {
  db: Database;
  config: Config;
  logger: Logger;
  /** Where this service's API is reachable. */
  apiBaseUrl: string;
}

/** The periodic work each configured provider's plugin declares (the sandbox's delayed callbacks). */
export function providerWorkTasks(deps: ProviderWorkDeps): Task[] {
  return providerTasks(deps.config, {
    db: deps.db,
    logger: deps.logger,
    apiBaseUrl: deps.apiBaseUrl,
    pollMs: deps.config.worker.pollMs,
  });
}
