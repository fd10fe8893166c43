import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { parse } from "yaml";
import { createOperator } from "../../src/admin/operators.ts";
import { preferredCoding } from "../../src/http/compressed-asset.ts";
import { viewTags } from "../../src/system/spec-views.ts";
import { checkResponse } from "../helpers/contract.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

type Json = Record<string, unknown>;

let server: TestServer;
let adminOff: TestServer;

beforeAll(async () => {
  [server, adminOff] = await Promise.all([startTestServer(), startTestServer({ adminToken: undefined })]);
});
afterAll(async () => {
  await Promise.all([server?.close(), adminOff?.close()]);
});

const methods = ["get", "put", "post", "delete", "patch"];

/** Each operation (paths and webhooks) of a document, with its tags. */
function operationsOf(document: Json): { id: string; tags: string[] }[] {
  const items = [...Object.values((document.paths ?? {}) as Json), ...Object.values((document.webhooks ?? {}) as Json)];
  return items.flatMap((item) =>
    Object.entries(item as Json)
      .filter(([method]) => methods.includes(method))
      .map(([, operation]) => ({
        id: String((operation as Json).operationId),
        tags: ((operation as Json).tags ?? []) as string[],
      })),
  );
}

/** Every `$ref` in a document that does not resolve inside it. */
function danglingRefs(document: Json): string[] {
  const dangling: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (key === "$ref" && typeof child === "string") {
          const target = child
            .slice(2)
            .split("/")
            .reduce<unknown>(
              (node, part) => (node as Json | undefined)?.[part.replaceAll("~1", "/").replaceAll("~0", "~")],
              document,
            );
          if (target === undefined) dangling.push(child);
        } else visit(child);
      }
    }
  };
  visit(document);
  return dangling;
}

describe("the reference pages", () => {
  test("/docs renders the client view, /docs/admin the admin view", async () => {
    const client = await server.anonymous.get("/docs");
    expect(client.status).toBe(200);
    expect(client.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(client.text).toContain('"url":"/openapi.yaml?view=client"');
    const admin = await server.anonymous.get("/docs/admin");
    expect(admin.status).toBe(200);
    expect(admin.text).toContain('"url":"/openapi.yaml?view=admin"');
    expect(admin.text).toContain("<title>Vend API operator reference</title>");
  });

  test("the client view holds the client operations and webhooks, the admin view the rest; each is whole", async () => {
    const full = server.deps.spec.document;
    const views: Record<string, Json> = {};
    for (const view of ["client", "admin"] as const) {
      const res = await server.anonymous.get("/openapi.yaml", { query: { view } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/yaml; charset=utf-8");
      const document = parse(res.text) as Json;
      views[view] = document;
      expect(danglingRefs(document)).toEqual([]);
      const tags = viewTags[view];
      expect((document.tags as Json[]).map((tag) => tag.name)).toEqual(
        (full.tags as Json[]).map((tag) => tag.name).filter((name) => tags.includes(String(name))),
      );
      for (const { id, tags: its } of operationsOf(document))
        expect({ id, inView: its.some((tag) => tags.includes(tag)) }).toEqual({ id, inView: true });
    }
    // Every operation of the contract is on exactly one page.
    const shown = [...operationsOf(views.client ?? {}), ...operationsOf(views.admin ?? {})].map((op) => op.id).sort();
    expect(shown).toEqual(
      operationsOf(full)
        .map((op) => op.id)
        .sort(),
    );

    const client = views.client ?? {};
    expect(Object.keys(client.paths as Json).every((path) => path.startsWith("/api/v1/"))).toBe(true);
    expect(Object.keys(client.webhooks as Json)).toContain("transaction.successful");
    expect(Object.keys(client.webhooks as Json)).not.toContain("transaction.stuck");
    const clientSchemas = Object.keys((client.components as { schemas: Json }).schemas);
    expect(clientSchemas).toContain("Transaction");
    expect(clientSchemas).not.toContain("Operator");
    expect(clientSchemas).not.toContain("StoredCallback");
    expect(Object.keys((client.components as { securitySchemes: Json }).securitySchemes)).toEqual(["ApiKey"]);
    expect((client.info as Json).description).toContain("## Quick start");

    const admin = views.admin ?? {};
    expect(Object.keys(admin.paths as Json)).toContain("/admin/v1/accounts");
    expect(Object.keys(admin.paths as Json)).toContain("/callbacks/providers/{provider}");
    expect(Object.keys(admin.paths as Json)).toContain("/docs/admin");
    expect(Object.keys(admin.webhooks as Json)).toEqual(["transaction.stuck"]);
    expect((admin.info as Json).title).toBe("Vend API: operator reference");
    expect((admin.info as Json).description).toContain("x-required-role");

    const whole = await server.anonymous.get("/openapi.yaml");
    expect(whole.text).toBe(server.deps.spec.text);
  });

  test("with the admin API off, /docs/admin and the admin view are 404 like the rest of it; an operator turns them on", async () => {
    for (const [path, query] of [
      ["/docs/admin", {}],
      ["/openapi.yaml", { view: "admin" }],
      ["/admin/v1/accounts", {}],
    ] as const) {
      const res = await adminOff.anonymous.get(path, { query });
      expect({ path, status: res.status, code: res.json?.code }).toEqual({ path, status: 404, code: "NOT_FOUND" });
    }
    expect((await adminOff.anonymous.get("/docs")).status).toBe(200);
    expect((await adminOff.anonymous.get("/openapi.yaml", { query: { view: "client" } })).status).toBe(200);

    await createOperator(adminOff.deps.db, { name: "docs-reader", role: "viewer" }, "test");
    expect((await adminOff.anonymous.get("/docs/admin")).status).toBe(200);
    expect((await adminOff.anonymous.get("/openapi.yaml", { query: { view: "admin" } })).status).toBe(200);
  });

  test("an unknown view is 400 naming it", async () => {
    const res = await server.anonymous.get("/openapi.yaml", { query: { view: "everything" } });
    expect(res.status).toBe(400);
    expect(res.json.data.errors[0].field).toBe("view");
  });
});

describe("Accept-Encoding", () => {
  test.each([
    ["gzip, deflate, br, zstd", "br"],
    ["gzip, deflate", "gzip"],
    ["br;q=0, gzip", "gzip"],
    ["gzip;q=1, br;q=0.5", "gzip"],
    ["BR", "br"],
    ["*", "br"],
    ["*;q=0", undefined],
    ["identity", undefined],
    ["deflate", undefined],
    ["", undefined],
    [null, undefined],
  ] as const)("%p → %p", (header, coding) => {
    expect(preferredCoding(header)).toBe(coding);
  });
});

interface RawAnswer {
  status: number;
  headers: Headers;
  /** The bytes as sent. */
  sent: Uint8Array;
  /** The bytes after undoing Content-Encoding. */
  decoded: Uint8Array;
}

/** A GET as sent on the wire (no automatic decompression), held to the contract once decoded. */
async function rawGet(path: string, headers: Record<string, string>): Promise<RawAnswer> {
  const url = new URL(path, server.url).href;
  const response = await fetch(url, { headers, decompress: false });
  const sent = new Uint8Array(await response.arrayBuffer());
  const encoding = response.headers.get("content-encoding");
  const decoded = encoding === "br" ? brotliDecompressSync(sent) : encoding === "gzip" ? gunzipSync(sent) : sent;
  checkResponse("GET", url, response.status, response.headers, new TextDecoder().decode(decoded));
  return { status: response.status, headers: response.headers, sent, decoded: new Uint8Array(decoded) };
}

describe.each([
  ["/docs/scalar.js", "public, max-age=3600, must-revalidate"],
  ["/docs", "public, no-cache"],
  ["/docs/admin", "public, no-cache"],
  ["/openapi.yaml?view=client", "public, no-cache"],
  ["/openapi.yaml", "public, no-cache"],
])("%s is served compressed", (path, cacheControl) => {
  test("br, gzip and identity decode to the same bytes, each with its own strong ETag; Vary and Cache-Control", async () => {
    const br = await rawGet(path, { "accept-encoding": "gzip, deflate, br" });
    const gzip = await rawGet(path, { "accept-encoding": "gzip" });
    const identity = await rawGet(path, { "accept-encoding": "identity" });
    expect([
      br.headers.get("content-encoding"),
      gzip.headers.get("content-encoding"),
      identity.headers.get("content-encoding"),
    ]).toEqual(["br", "gzip", null]);
    expect(Buffer.from(br.decoded).equals(identity.sent)).toBe(true);
    expect(Buffer.from(gzip.decoded).equals(identity.sent)).toBe(true);
    expect(br.sent.byteLength).toBeLessThan(gzip.sent.byteLength);
    expect(gzip.sent.byteLength).toBeLessThan(identity.sent.byteLength);

    const tag = identity.headers.get("etag") ?? "";
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(br.headers.get("etag")).toBe(`${tag.slice(0, -1)}-br"`);
    expect(gzip.headers.get("etag")).toBe(`${tag.slice(0, -1)}-gzip"`);
    for (const answer of [br, gzip, identity]) {
      expect(answer.headers.get("vary")).toBe("Accept-Encoding");
      expect(answer.headers.get("cache-control")).toBe(cacheControl);
    }
    // The same bytes again: the tag is of the content, not of the moment.
    expect((await rawGet(path, { "accept-encoding": "br" })).headers.get("etag")).toBe(br.headers.get("etag"));
  });

  test("If-None-Match naming the tag of the encoding asked for is 304, with no body; another encoding's tag is not", async () => {
    const br = await rawGet(path, { "accept-encoding": "br" });
    const brTag = br.headers.get("etag") ?? "";
    const notModified = await rawGet(path, { "accept-encoding": "br", "if-none-match": brTag });
    expect(notModified.status).toBe(304);
    expect(notModified.sent.byteLength).toBe(0);
    expect(notModified.headers.get("etag")).toBe(brTag);
    expect(notModified.headers.get("vary")).toBe("Accept-Encoding");
    expect(notModified.headers.get("cache-control")).toBe(cacheControl);

    const listed = await rawGet(path, {
      "accept-encoding": "gzip",
      "if-none-match": `"other", ${brTag.replace("-br", "-gzip")}`,
    });
    expect(listed.status).toBe(304);
    const otherEncoding = await rawGet(path, { "accept-encoding": "gzip", "if-none-match": brTag });
    expect(otherEncoding.status).toBe(200);
    expect(otherEncoding.headers.get("content-encoding")).toBe("gzip");
  });
});
