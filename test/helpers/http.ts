import { contractFetch } from "./contract.ts";

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
  json: any;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  /** Sent verbatim instead of JSON-encoding `body`. */
  raw?: string;
}

/** Raw HTTP over a socket, every answer checked against openapi.yaml. */
export class HttpClient {
  constructor(
    readonly baseUrl: string,
    readonly token?: string,
  ) {}

  async request(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResult> {
    const url = new URL(path, this.baseUrl);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let payload: string | undefined = options.raw;
    if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers["content-type"] = "application/json";
    const response = await contractFetch(url, { method, headers: { ...headers, ...options.headers }, body: payload });
    const text = await response.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: response.status, headers: response.headers, text, json };
  }

  get(path: string, options?: RequestOptions) {
    return this.request("GET", path, undefined, options);
  }

  post(path: string, body?: unknown, options?: RequestOptions) {
    return this.request("POST", path, body, options);
  }

  delete(path: string, options?: RequestOptions) {
    return this.request("DELETE", path, undefined, options);
  }
}
