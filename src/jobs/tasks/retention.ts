import type { Task } from "../../lib/job-queue.ts";
import type { RetentionStatements } from "../../retention/delete-batch.ts";
import { type RetentionDeps, retentionEveryMs, runRetentionPass } from "../../retention/pass.ts";

/** The retention pass as a periodic task of every worker process's runner; the rows it deleted are its count. */
export function retentionTask(deps: RetentionDeps, statements: RetentionStatements): Task {
  return {
    name: "retention",
    everyMs: retentionEveryMs,
    async run() {
      const pass = await runRetentionPass(deps, statements);
      if (pass.total > 0 || pass.unfinished) {
        deps.logger.info(
          {
            deleted: pass.deleted,
            statements: pass.statements,
            longestMs: Math.round(pass.longestMs),
            unfinished: pass.unfinished,
          },
          "retention pass",
        );
      }
      return pass.total;
    },
  };
}
