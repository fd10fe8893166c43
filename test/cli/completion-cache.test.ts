// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliServer, runCli } from "./cli.ts";

const cli = cliServer({ account: { name: "completion cache", kobo: 0 } });

const lines = (stdout: string) => stdout.split("\n").filter(Boolean);

describe("vendctl __complete keeps catalogue answers and revalidates them by ETag", () => {
  test("an unchanged catalogue is answered 304 and the kept copy is used; a change brings the new list", async () => {
    const env = cli.apiEnv();
    const args = ["__complete", "products", "cable", "gotv"];
    const first = await runCli(args, env);
    expect(first.code).toBe(0);
    expect(lines(first.stdout)).toContain("gotv-smallie");

    const path = join(env.VENDCTL_CONFIG_DIR ?? "", "catalogue-cache.json");
    const cache = JSON.parse(readFileSync(path, "utf8"));
    const [key] = Object.keys(cache);
    if (!key) throw new Error("nothing kept");
    expect(cache[key].etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // Mark the kept copy: only a 304 answered from it can print the mark.
    cache[key].data = [{ code: "kept-copy" }];
    writeFileSync(path, JSON.stringify(cache));
    expect(lines((await runCli(args, env)).stdout)).toEqual(["kept-copy"]);

    const changed = await cli.server.admin.request("PATCH", "/admin/v1/products/gotv-smallie", { name: "GOtv Smallie (new)" });
    expect(changed.status).toBe(200);
    const fresh = lines((await runCli(args, env)).stdout);
    expect(fresh).toContain("gotv-smallie");
    expect(fresh).not.toContain("kept-copy");
    expect(JSON.parse(readFileSync(path, "utf8"))[key].etag).not.toBe(cache[key].etag);
  }, 60_000);

  test("other filters are kept apart", async () => {
    const env = cli.apiEnv();
    const cable = lines((await runCli(["__complete", "networks", "cable"], env)).stdout);
    const electricity = lines((await runCli(["__complete", "networks", "electricity"], env)).stdout);
    expect(cable).toContain("dstv");
    expect(electricity).toContain("ikedc");
    expect(cable).not.toContain("ikedc");
    expect(lines((await runCli(["__complete", "networks", "cable"], env)).stdout)).toEqual(cable);
  }, 60_000);
});
