import { afterAll, describe, expect, test } from "bun:test";
import { type ServiceBehindProxy, startServiceBehindProxy } from "../helpers/behind-proxy.ts";
import { processTestMs } from "../helpers/process.ts";

// A partition between the API process and PostgreSQL (a proxy that stops forwarding), as in
// database-outage.test.ts, with the rate limit on and a claim for every request (RATE_LIMIT_MAX_BLOCK=1),
// so every request asks the unreachable database for budget.
const baseUrl = process.env.DATABASE_URL;
let behind: ServiceBehindProxy | undefined;

afterAll(async () => {
  await behind?.stop();
});

describe.skipIf(!baseUrl)("the rate limit while PostgreSQL does not answer", () => {
  test(
    "requests are not turned into 500s: the limiter fails open (one error line) and the request answers 503 like without it; then 200 again",
    async () => {
      behind = await startServiceBehindProxy({
        args: ["serve"],
        env: { DATABASE_POOL_SIZE: "4", RATE_LIMIT_PER_MINUTE: "1000", RATE_LIMIT_MAX_BLOCK: "1", LOG_LEVEL: "error" },
      });
      const { proxy, service, client } = behind;
      expect((await client.get("/api/v1/wallet")).status).toBe(200);

      proxy.blackhole();
      const answers = await Promise.all(Array.from({ length: 3 }, () => client.get("/api/v1/wallet")));
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.json.code).toBe("SERVICE_UNAVAILABLE");
        expect(answer.headers.get("ratelimit-limit")).toBe("1000");
      }
      await service.waitFor(/rate limit store unavailable; counting in this process alone until the window ends/);
      const outageLines = service.output().match(/rate limit store unavailable/g) ?? [];
      // One line per window (two if the outage straddled a minute).
      expect(outageLines.length).toBeGreaterThanOrEqual(1);
      expect(outageLines.length).toBeLessThanOrEqual(2);

      proxy.heal();
      let recovered = await client.get("/api/v1/wallet");
      for (let i = 0; i < 100 && recovered.status !== 200; i++) recovered = await client.get("/api/v1/wallet");
      expect(recovered.status).toBe(200);
      expect(recovered.headers.get("ratelimit-limit")).toBe("1000");
    },
    processTestMs,
  );
});
