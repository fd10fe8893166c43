/** The origin given to a request that has no usable one: routing and the handlers read only the path and query. */
const fallbackOrigin = "http://localhost";

/**
 * The request as the router and the handlers can read it. Bun builds `request.url` from the Host header:
 * without one (an HTTP/1.0 health check) or with one no URL can hold (empty, `a b`, `[::1`, a port past
 * 65535) it is the bare path or cannot be parsed, and every `new URL(request.url)` throws. Elysia's router
 * also looks for the path from index 11 of the URL on, which assumes a host of at least four characters:
 * `Host: x` would route `/api/v1/vend` as `/v1/vend`. Such a request is re-addressed to `localhost`
 * (method, headers and body unchanged) before anything reads it.
 */
export function routableRequest(request: Request): Request {
  const url = request.url;
  const pathStart = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart >= 11 && URL.canParse(url)) return request;
  return new Request(`${fallbackOrigin}${pathStart === -1 ? "/" : url.slice(pathStart)}`, request);
}
