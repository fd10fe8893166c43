import { followStream, type StreamOptions } from "../core/event-stream.js";
import type { CallOptions, ListParams } from "../core/options.js";
import { PageList } from "../core/paging.js";
import type { Requester } from "../core/requester.js";
import { getRequestLog, listRequestLogs, streamRequestLogs } from "../generated/client/sdk.gen.js";
import type { ListRequestLogsData, RequestLog, RequestLogDetail, StreamRequestLogsData } from "../generated/client/types.gen.js";

export type { StreamOptions };

/**
 * The key's own requests and answers (its account's, in its mode), kept 7 days by default: find a failed call by
 * the `requestId` its error carried (`retrieve`), list them, or follow them live (`stream`).
 */
export class RequestLogs {
  constructor(private readonly requester: Requester) {}

  /** The requests, newest first, every page (no bodies): `for await (const log of vend.requestLogs.list({ status: "4xx" }))`. */
  list(params: ListParams<ListRequestLogsData["query"]> = {}, options: CallOptions = {}): PageList<RequestLog> {
    return new PageList((cursor) =>
      this.requester.unwrap(listRequestLogs({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }

  /**
   * One request by its `X-Request-Id` (a `VendError`'s `requestId`), with the body sent and the body answered.
   * A request answered within the last second may not be recorded yet (`NotFoundError`).
   */
  retrieve(requestId: string, options: CallOptions = {}): Promise<RequestLogDetail> {
    return this.requester.unwrap(getRequestLog({ ...this.requester.with(options), path: { request_id: requestId } }));
  }

  /**
   * The requests as they are recorded (about a second after each answer), until `signal` aborts:
   * `for await (const log of vend.requestLogs.stream({ status: "5xx" }, { signal }))`. Reconnects by itself after
   * a dropped connection, resuming after the last record received; `lastEventId` resumes after an earlier one.
   */
  stream(params: StreamRequestLogsData["query"] = {}, options: StreamOptions = {}): AsyncGenerator<RequestLog, void, undefined> {
    return followStream<RequestLog>(this.requester, (connection) => streamRequestLogs({ ...connection, query: params }), options);
  }
}
