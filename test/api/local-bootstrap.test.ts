import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const secret = "vlocal_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
let server: TestServer;
let proxied: TestServer;

beforeAll(async () => {
  server = await startTestServer({ adminToken: undefined });
  server.deps.localAdminSecret = secret;
  // Behind a trusted proxy on this machine the peer is loopback, but the request is someone else's.
  proxied = await startTestServer({ adminToken: undefined, trustProxy: true });
  proxied.deps.localAdminSecret = secret;
});
afterAll(async () => {
  await server.close();
  await proxied.close();
});

const me = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/admin/v1/operators/me`, { headers: { authorization: `Bearer ${secret}`, ...headers } });

describe("the local bootstrap secret of an embedded npm start", () => {
  test("from a loopback peer it is the admin local-bootstrap", async () => {
    const res = await me(server.url);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toMatchObject({ id: null, name: "local-bootstrap", role: "admin" });
  });

  test("not for a forwarded request, nor without a peer address (in-process), nor another bearer", async () => {
    expect((await me(server.url, { "x-forwarded-for": "127.0.0.1" })).status).toBe(404);
    expect((await me(server.url, { forwarded: "for=127.0.0.1" })).status).toBe(404);
    expect((await me(proxied.url, { "x-forwarded-for": "127.0.0.1" })).status).toBe(404);
    const inProcess = await buildApp(server.deps).handle(
      new Request("http://localhost/admin/v1/operators/me", { headers: { authorization: `Bearer ${secret}` } }),
    );
    expect(inProcess.status).toBe(404);
    const other = await fetch(`${server.url}/admin/v1/operators/me`, { headers: { authorization: `Bearer ${secret}0` } });
    expect(other.status).toBe(404);
  });

  test("its name cannot be taken by an operator", async () => {
    const res = await fetch(`${server.url}/admin/v1/operators`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "local-bootstrap", role: "viewer" }),
    });
    expect(res.status).toBe(409);
  });
});
