import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { type SpecViewName, specView, viewTags } from "../../src/system/spec-views.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/** Debian's Chromium (`apt-get install chromium`); .ci/run installs it when it can. */
const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const haveChromium = existsSync(chromiumPath);
if (!haveChromium) {
  console.warn(
    `SKIPPED test/browser/docs.test.ts: no Chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH)`,
  );
}

/** Every name the browser resolves fails except 127.0.0.1, so a request outside the service cannot succeed either. */
const launchArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];

interface LoadedDocs {
  page: Page;
  /** Every URL the page asked for, outside ones included (those are aborted). */
  requested: string[];
}

describe.skipIf(!haveChromium)("/docs in a headless browser", () => {
  let browser: Browser | undefined;
  let server: TestServer;
  let proxied: TestServer;
  const publicBaseUrl = "https://vend.example.test";

  beforeAll(async () => {
    [server, proxied] = await Promise.all([startTestServer(), startTestServer({ publicBaseUrl })]);
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: launchArgs });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await proxied?.close();
  });

  async function openDocs(base: string, path = "/docs"): Promise<LoadedDocs> {
    if (!browser) throw new Error("the browser did not start");
    const context = await browser.newContext();
    const page = await context.newPage();
    const requested: string[] = [];
    // A routed request waits for this handler, so none reaches the network unrecorded.
    await context.route("**/*", (route) => {
      const url = route.request().url();
      requested.push(url);
      return isServedBy(url, base) ? route.continue() : route.abort("blockedbyclient");
    });
    page.on("request", (request) => requested.push(request.url()));
    page.on("websocket", (socket) => requested.push(socket.url()));
    await page.goto(`${base}${path}`, { waitUntil: "networkidle" });
    await page.locator('[data-sidebar-id*="/tag/"]').first().waitFor();
    await page.waitForLoadState("networkidle");
    // Network events may arrive after the page settles: a last request of our own marks the end of the record.
    await page.evaluate(() => fetch("/healthz?docs-test-end"));
    for (let i = 0; i < 100 && !requested.some((url) => url.endsWith("/healthz?docs-test-end")); i++) {
      await page.waitForTimeout(50);
    }
    const loaded = await page.evaluate(() => performance.getEntriesByType("resource").map((entry) => entry.name));
    requested.push(...loaded);
    return { page, requested };
  }

  /** The pages from the test server, each loaded once and shared by the tests that only look at it. */
  const served = new Map<SpecViewName, Promise<LoadedDocs>>();
  const servedDocs = (view: SpecViewName = "client") => {
    let loaded = served.get(view);
    if (!loaded) {
      loaded = openDocs(server.url, view === "client" ? "/docs" : "/docs/admin");
      served.set(view, loaded);
    }
    return loaded;
  };

  function outside(requested: string[], base: string): string[] {
    return [...new Set(requested)].filter((url) => !isServedBy(url, base));
  }

  test("renders the reference from the server it was served by, loading nothing from outside the service", async () => {
    const { page, requested } = await servedDocs();
    expect(await page.title()).toContain("Vend API");
    const info = server.deps.spec.document.info as { title: string };
    await page.getByRole("heading", { name: info.title, exact: true }).waitFor();

    await page.locator(".scalar-reference-intro-server").getByText(server.url, { exact: true }).waitFor();
    expect(await page.locator("body").innerText()).not.toContain("localhost:8080");

    const own = [...new Set(requested)].map((url) => {
      const { pathname, search } = new URL(url);
      return pathname + search;
    });
    expect(own).toContain("/docs/scalar.js");
    expect(own).toContain("/openapi.yaml?view=client");
    expect(outside(requested, server.url)).toEqual([]);
  });

  test("the client page opens with the Quick start, and error answers show the messages the service sends", async () => {
    const { page } = await servedDocs();
    await page.getByRole("heading", { name: "Quick start" }).first().waitFor();
    expect(await page.locator("body").innerText()).toContain('import { VendClient } from "@vend/sdk"');
    // Each status's example is an answer the service sends, not a generated `"message": "string"`.
    await page.locator('[data-sidebar-id$="/POST/api/v1/vend"] a').first().click();
    const vend = page.locator('[id$="/POST/api/v1/vend"]').first();
    for (const [status, message] of [
      ["401", '"message": "API key is unknown or revoked"'],
      ["402", '"message": "Insufficient wallet balance: available NGN 150.00, required NGN 500.00"'],
      ["503", '"message": "The service is temporarily unavailable; retry shortly"'],
    ] as const) {
      await vend.getByRole("tab", { name: new RegExp(`^Status:\\s*${status}$`, "i") }).click();
      await vend.getByText(message).first().waitFor();
    }
  });

  test("no Ask AI, MCP, developer tools, Share or Deploy", async () => {
    const { page } = await servedDocs();
    for (const label of ["Ask AI", "Generate MCP", "Developer Tools", "Share", "Deploy", "VS Code", "Cursor"]) {
      expect({ label, count: await page.getByText(label, { exact: true }).count() }).toEqual({ label, count: 0 });
    }
    expect(await page.locator(".agent-button-container, .scalar-mcp-layer, .references-developer-tools").count()).toBe(0);
  });

  test.each(["client", "admin"] as const)(
    "the %s page lists its operation groups and every operation in them, and no other",
    async (view) => {
      const { page, requested } = await servedDocs(view);
      const groups = operationGroups(specView(server.deps.spec.document, view));
      expect([...groups.keys()].sort()).toEqual([...viewTags[view]].sort());
      const shown = await page.locator("[data-sidebar-id]").evaluateAll((items) =>
        items
          .filter((item) => /\/tag\/[^/]+$/.test(item.getAttribute("data-sidebar-id") ?? ""))
          .map((item) => ({
            id: item.getAttribute("data-sidebar-id") ?? "",
            label: item.querySelector("a")?.textContent?.trim() ?? "",
          })),
      );
      expect(shown.map((group) => group.label).sort()).toEqual([...groups.keys()].sort());

      for (const { id, label } of shown) {
        const group = page.locator(`[data-sidebar-id="${id}"]`);
        const toggle = group.locator("button[aria-expanded]").first();
        if ((await toggle.getAttribute("aria-expanded")) === "false") await toggle.click();
        for (const summary of groups.get(label) ?? []) await group.getByText(summary, { exact: true }).first().waitFor();
      }
      expect(outside(requested, server.url)).toEqual([]);
    },
  );

  test("PUBLIC_BASE_URL, when set, is the server shown", async () => {
    const { page, requested } = await openDocs(proxied.url);
    try {
      await page.locator(".scalar-reference-intro-server").getByText(publicBaseUrl, { exact: true }).waitFor();
      expect(outside(requested, proxied.url)).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

function isServedBy(url: string, base: string): boolean {
  if (url.startsWith("data:") || url.startsWith("blob:")) return true;
  return new URL(url).origin === new URL(base).origin;
}

/** The operation groups Scalar shows: each tag that operations under `paths` carry, with their summaries. */
function operationGroups(document: Record<string, unknown>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  const paths = document.paths as Record<string, Record<string, { tags?: string[]; summary?: string }>>;
  for (const item of Object.values(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "put", "post", "delete", "patch"].includes(method)) continue;
      for (const tag of operation.tags ?? []) {
        const summaries = groups.get(tag) ?? [];
        summaries.push(operation.summary ?? "");
        groups.set(tag, summaries);
      }
    }
  }
  return groups;
}
