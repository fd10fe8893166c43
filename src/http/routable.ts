/**
 * Elysia's router looks for the path from index 11 of the URL on, which assumes a host of at least
 * four characters: `Host: x` would route `/api/v1/vend` as `/v1/vend`. Such a request is re-addressed
 * to `localhost` (method, headers and body unchanged) before routing.
 */
export function routableRequest(request: Request): Request {
  const url = request.url;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart === -1 || pathStart >= 11) return request;
  return new Request(`http://localhost${url.slice(pathStart)}`, request);
}
