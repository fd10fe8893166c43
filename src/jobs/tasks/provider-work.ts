import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import type { Queue, Task } from "../../lib/job-queue.ts";
import type { Logger } from "../../logger.ts";
import { providerQueues, providerTasks } from "../../providers/registry.ts";
import type { ProviderTaskContext } from "../../providers/types.ts";

/** What the providers' own periodic work needs (the sandbox posts its delayed callbacks to `apiBaseUrl`). */
export interface ProviderWorkDeps {
  db: Database;
  config: Config;
  logger: Logger;
  /** Where this service's API is reachable. */
  apiBaseUrl: string;
}

const contextOf = (deps: ProviderWorkDeps): ProviderTaskContext => ({
  db: deps.db,
  logger: deps.logger,
  apiBaseUrl: deps.apiBaseUrl,
  pollMs: deps.config.worker.pollMs,
});

/** The periodic work each configured provider's plugin declares. */
export function providerWorkTasks(deps: ProviderWorkDeps): Task[] {
  return providerTasks(deps.config, contextOf(deps));
}

/** The queues each configured provider's plugin declares (the sandbox's delayed callbacks). */
export function providerWorkQueues(deps: ProviderWorkDeps): Queue[] {
  return providerQueues(deps.config, contextOf(deps));
}
