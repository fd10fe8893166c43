import { Argument, Command, InvalidArgumentError } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand, type Context } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import type { Printer } from "../../output.ts";
import { logsScope, type RequestLogDetail, requestLogDetailColumns } from "../../request-logs.ts";
import { renderRecord } from "../../table.ts";

interface ShowFlags {
  admin?: boolean;
}

const requestIdArgument = (): Argument =>
  new Argument("<request_id>", "the request's X-Request-Id (a failed command prints it: `Request id: …`)").argParser(
    (value: string) => {
      if (!/^[A-Za-z0-9._:-]{1,128}$/.test(value))
        throw new InvalidArgumentError("expected a request id such as req_6bTq0cWk2Zr9YpLhV3sD");
      return value;
    },
  );

/**
 * The key's own record; a request the key cannot see (one made with the admin token, say) is looked up through the
 * admin API when an admin token is configured too, so `vendctl logs show ID` works for every error vendctl printed.
 */
async function findLog(ctx: Context, requestId: string, flags: ShowFlags): Promise<RequestLogDetail> {
  const scope = logsScope(ctx, flags);
  const params = { path: { request_id: requestId } };
  if (scope.admin) return unwrap(scope.client.GET("/admin/v1/request-logs/{request_id}", { params }));
  try {
    return await unwrap(scope.client.GET("/api/v1/request-logs/{request_id}", { params }));
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404 || !ctx.config.adminToken) throw error;
    return unwrap(ctx.clients.admin().GET("/admin/v1/request-logs/{request_id}", { params }));
  }
}

/** A body as sent or answered: JSON indented, anything else as it is, a cut one marked. */
export function formatBody(body: string | null, truncated: boolean): string {
  if (body === null || body === "") return "(none)\n";
  let text = body;
  try {
    text = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // not JSON (or cut in the middle): shown as text
  }
  return `${text}\n${truncated ? "(truncated)\n" : ""}`;
}

/** The record, then the request body and the response body, paged together; other formats: the API's record. */
async function printLog(printer: Printer, log: RequestLogDetail): Promise<void> {
  if (printer.format !== "table") return printer.record(log, requestLogDetailColumns);
  const { bold } = printer.colors;
  const sections = [
    renderRecord(requestLogDetailColumns, log, printer.style),
    `${bold(`Request body (${log.method} ${log.path})`)}\n${formatBody(log.request_body, log.request_body_truncated)}`,
    `${bold(`Response body (${log.status})`)}\n${formatBody(log.response_body, log.response_body_truncated)}`,
  ];
  await printer.table(sections.join("\n"));
}

export const logsShowCommand = (): Command =>
  actionCommand(
    new Command("show")
      .summary("Show one request with the body sent and the body answered")
      .description(
        "Show one request with the body sent and the body answered (JSON indented; secrets never stored, " +
          "destinations masked). An API key sees its own account's requests in its mode; a request it cannot see is " +
          "looked up through the admin API when an admin token is configured too (--admin: only there).",
      )
      .addArgument(requestIdArgument())
      .option("--admin", "look it up through the admin API (any account), even when an API key is configured"),
    ["vendctl logs show req_6bTq0cWk2Zr9YpLhV3sD", "vendctl logs show req_6bTq0cWk2Zr9YpLhV3sD --json | jq -r .response_body"],
    async (ctx, requestId: string, flags: ShowFlags) => printLog(ctx.printer, await findLog(ctx, requestId, flags)),
  );
