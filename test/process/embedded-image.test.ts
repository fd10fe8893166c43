// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embeddedImagePath } from "../../src/db/embedded-image.ts";
import { idem } from "../helpers/accounts.ts";
import { HttpClient } from "../helpers/http.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";

/**
 * `npm install` prepares a migrated embedded data directory (scripts/embedded-image.ts, run by postinstall) and a
 * first `npm start` on a new directory copies it instead of running initdb and every migration. Real processes,
 * each on a directory of its own; the image in a file of this test's (VEND_EMBEDDED_IMAGE), not the checkout's.
 */
const root = mkdtempSync(join(tmpdir(), "vend-image-"));
const image = join(root, "image.tar");
const main = join(import.meta.dir, "../../src/main.ts");
const script = join(import.meta.dir, "../../scripts/embedded-image.ts");
const started: StartedProcess[] = [];

afterAll(async () => {
  await Promise.all(started.map((server) => server.stop("SIGKILL")));
  rmSync(root, { recursive: true, force: true });
});

/** `npm start` on a new directory with `imagePath` as the prepared image: its URL, test key and output. */
async function firstStart(name: string, imagePath: string) {
  const env = { VEND_DATA_DIR: join(root, name), PORT: "0", LOG_LEVEL: "info", VEND_EMBEDDED_IMAGE: imagePath };
  const server = spawnProcess([process.execPath, main], childEnv(env));
  started.push(server);
  const [, key = ""] = await server.waitFor(/Test API key \(shown once, store it now\): (\S+)/);
  const [, url = ""] = await server.waitFor(/listening on (http:\/\/[^\s]+)/);
  return { url, key, client: new HttpClient(url, key), output: server.output() };
}

describe("the embedded image npm install prepares", () => {
  test("by default it is named for the PGlite version and the committed migrations, so a stale one is never used", () => {
    const saved = process.env.VEND_EMBEDDED_IMAGE;
    try {
      delete process.env.VEND_EMBEDDED_IMAGE;
      expect(embeddedImagePath()).toMatch(
        /\/node_modules\/\.cache\/vend\/embedded-pglite-\d+\.\d+\.\d+-migrations-[0-9a-f]{12}\.tar$/,
      );
      process.env.VEND_EMBEDDED_IMAGE = "off";
      expect(embeddedImagePath()).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.VEND_EMBEDDED_IMAGE;
      else process.env.VEND_EMBEDDED_IMAGE = saved;
    }
  });

  test(
    "the postinstall script writes it and says where",
    async () => {
      const run = spawnProcess([process.execPath, script], childEnv({ VEND_EMBEDDED_IMAGE: image }));
      expect(await run.finished()).toBe(0);
      expect(run.output()).toContain(`embedded database image for first starts: ${image}`);
      expect(statSync(image).size).toBeGreaterThan(1_000_000);
      // Written whole: no draft left beside it.
      expect(readdirSync(root)).toEqual(["image.tar"]);
    },
    processTestMs,
  );

  test(
    "a first start copies it: no initdb, no migration left, its own account and key; the database works",
    async () => {
      const size = statSync(image).size;
      const one = await firstStart("one", image);
      expect(one.output).toContain(`Creating the database files from the image prepared at install (${image})`);
      expect(one.output).toContain("Database files created");
      expect(one.output).not.toContain("initdb");
      // The image holds every committed migration.
      expect(one.output).not.toContain("Migrating the database");
      expect(one.output).toContain('Creating the first account "default"');
      expect((await one.client.post("/api/v1/wallet/fund", { amount_kobo: 100_000 }, idem())).status).toBe(200);
      const order = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
      const vend = await one.client.post("/api/v1/vend", order, idem());
      expect(vend.status).toBe(202);
      const wallet = await one.client.get("/api/v1/wallet");
      // Funded 100,000; the order's price held or spent, whichever the worker has reached: nothing else moved.
      const price = vend.json.data.price_kobo as number;
      expect(price).toBeGreaterThan(0);
      const {
        balance_kobo: balance = 0,
        held_kobo: held = 0,
        available_kobo: available,
      } = wallet.json.data as Record<string, number>;
      expect(available).toBe(100_000 - price);
      expect(balance - held).toBe(100_000 - price);

      // The image carries no account: a second directory made from it has its own key, and the first one's is unknown there.
      const two = await firstStart("two", image);
      expect(two.key).not.toBe(one.key);
      expect((await new HttpClient(two.url, one.key).get("/api/v1/wallet")).status).toBe(401);
      expect((await two.client.get("/api/v1/wallet")).status).toBe(200);
      expect(statSync(image).size).toBe(size);
    },
    processTestMs,
  );

  test(
    "an image that cannot be used is said so and initdb runs instead; the database works",
    async () => {
      const broken = join(root, "broken.tar");
      writeFileSync(broken, "not a tarball ".repeat(10_000));
      const three = await firstStart("three", broken);
      const said = three.output.indexOf("The prepared image could not be used");
      expect(said).toBeGreaterThan(-1);
      expect(three.output.indexOf("Creating the database files (initdb)")).toBeGreaterThan(said);
      expect(three.output).toContain("Migrating the database: 1 of");
      expect((await three.client.get("/api/v1/wallet")).status).toBe(200);
    },
    processTestMs,
  );
});
