/** One Server-Sent Event: its type (`message` when unnamed), the last id seen, and its data lines joined. */
export interface ServerSentEvent {
  event: string;
  id?: string;
  data: string;
}

/**
 * Splits a stream of text into lines as Server-Sent Events end them (LF, CR or CRLF), a CR at the end of a chunk
 * held back in case the LF follows.
 */
async function* linesOf(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of chunks) {
    buffer += chunk;
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      if (end < 0 || (buffer[end] === "\r" && end === buffer.length - 1)) break;
      const width = buffer.startsWith("\r\n", end) ? 2 : 1;
      yield buffer.slice(0, end);
      buffer = buffer.slice(end + width);
    }
  }
}

/** The text of a byte stream, chunk by chunk (a character split between chunks is kept for the next). */
async function* decoded(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      yield decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * The events of a `text/event-stream` body as they arrive, by the WHATWG rules: `field: value` lines (one space
 * after the colon dropped), a blank line ends an event, `id` carries over to the events after it, comment lines
 * (`: keep-alive`) and events without data are skipped. `onActivity` is called for every line, comments included:
 * a sign that the connection is alive.
 */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  onActivity: () => void = () => {},
): AsyncGenerator<ServerSentEvent> {
  let lastId: string | undefined;
  let event = "";
  let data: string[] = [];
  for await (const line of linesOf(decoded(body))) {
    onActivity();
    if (line === "") {
      if (data.length > 0) yield { event: event || "message", id: lastId, data: data.join("\n") };
      event = "";
      data = [];
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    else if (field === "id" && !value.includes("\0")) lastId = value;
  }
}
