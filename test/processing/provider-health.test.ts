import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/logger.ts";
import { ProviderHealth } from "../../src/providers/health.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

// The breakers and switches on a clock the test moves; two instances on one database stand for two processes.
let database: TestDatabase;
let now = 1_700_000_000_000;
const rules = { breaker: { failures: 3, cooldownMs: 10_000 }, healthRefreshMs: 100_000 };
const health = () => new ProviderHealth(database.handle.db, rules, createLogger("silent"), () => now);

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describe("provider health", () => {
  test("a failing service opens its own breaker; the provider's other services, answering, stay usable", () => {
    const one = health();
    for (let i = 0; i < 3; i++) {
      one.failed("alpha", "data");
      one.succeeded("alpha", "airtime");
    }
    expect(one.usable("alpha", "data", false)).toBe(false);
    expect(one.usable("alpha", "airtime", false)).toBe(true);
    const [wide, ...services] = one.breakersOf("alpha");
    expect(wide).toMatchObject({ service: null, state: "closed", consecutiveFailures: 0 });
    expect(services.find((b) => b.service === "data")).toMatchObject({ state: "open", consecutiveFailures: 3 });
  });

  test("N failures in a row open the provider-wide breaker: every service of it is refused", () => {
    const one = health();
    one.failed("beta", "data");
    one.failed("beta", "airtime");
    expect(one.usable("beta", "cable", false)).toBe(true);
    one.failed("beta", "electricity");
    for (const service of ["data", "airtime", "cable"]) expect(one.usable("beta", service, false)).toBe(false);
  });

  test("after the cool-down one probe goes through; its success closes the breaker, its failure re-opens it", () => {
    const one = health();
    for (let i = 0; i < 3; i++) one.failed("gamma", "data");
    now += 10_001;
    expect(one.breakersOf("gamma")[0]?.state).toBe("half_open");
    // Acceptance sends nothing: a half-open provider may be chosen there.
    expect(one.usable("gamma", "data", false)).toBe(true);
    expect(one.usable("gamma", "data", true)).toBe(true);
    expect(one.usable("gamma", "data", true)).toBe(false);
    one.failed("gamma", "data");
    expect(one.breakersOf("gamma")[0]?.state).toBe("open");
    now += 10_001;
    expect(one.usable("gamma", "data", true)).toBe(true);
    one.succeeded("gamma", "data");
    expect(one.breakersOf("gamma")[0]).toMatchObject({ state: "closed", consecutiveFailures: 0 });
    expect(one.usable("gamma", "data", true)).toBe(true);
  });

  test("a breaker one process opens, and an operator's switch, reach the other process on its refresh", async () => {
    const one = health();
    const two = health();
    for (let i = 0; i < 3; i++) one.failed("delta", "airtime");
    await one.flush();
    expect(two.usable("delta", "airtime", false)).toBe(true);
    await two.refresh();
    expect(two.usable("delta", "airtime", false)).toBe(false);
    expect(two.breakersOf("delta")[0]?.state).toBe("open");

    // Closed by a probe in the first process: the second adopts that too.
    now += 10_001;
    expect(one.usable("delta", "airtime", true)).toBe(true);
    one.succeeded("delta", "airtime");
    await one.flush();
    await two.refresh();
    expect(two.breakersOf("delta")[0]?.state).toBe("closed");

    const disabled = await one.setEnabled("delta", false, "outage");
    expect(disabled).toMatchObject({ enabled: false, disabledReason: "outage" });
    expect(one.usable("delta", "airtime", false)).toBe(false);
    await two.refresh();
    expect(two.switchOf("delta")).toMatchObject({ enabled: false, disabledReason: "outage" });
    // Disabling again keeps the first reason and time; enabling clears them.
    await one.setEnabled("delta", false, "another");
    expect(one.switchOf("delta").disabledReason).toBe("outage");
    await two.setEnabled("delta", true, null);
    await one.refresh();
    expect(one.switchOf("delta")).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
  });

  test("a process that listens follows another's switch, breaker and float at once, without its poll", async () => {
    // The poll is 100 s (rules): only the notification can bring the change within the test.
    const one = health();
    const two = health();
    await two.start(database.handle);
    const within = async (ms: number, done: () => boolean) => {
      const started = Date.now();
      while (!done() && Date.now() - started < ms) await Bun.sleep(10);
      return done();
    };
    try {
      await one.setEnabled("epsilon", false, "maintenance");
      expect(await within(2000, () => !two.switchOf("epsilon").enabled)).toBe(true);
      expect(two.switchOf("epsilon").disabledReason).toBe("maintenance");

      for (let i = 0; i < 3; i++) one.failed("epsilon", "data");
      await one.flush();
      expect(await within(2000, () => !two.usable("epsilon", "data", false))).toBe(true);

      await one.recordBalance("epsilon", 123_400);
      expect(await within(2000, () => two.switchOf("epsilon").balanceKobo === 123_400)).toBe(true);
    } finally {
      await two.stop();
    }
    // Stopped: it listens no more.
    await one.setEnabled("epsilon", true, null);
    await Bun.sleep(300);
    expect(two.switchOf("epsilon").enabled).toBe(false);
  });
});
