// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { stripVTControlCharacters } from "node:util";

const root = join(import.meta.dir, "..", "..");
const depcruise = join(root, "node_modules", ".bin", "depcruise");
const config = join(root, ".dependency-cruiser.cjs");

/** Runs the import-direction rule of `.ci/run` (`npm run lint:layers`) over `paths` in `cwd`. */
function cruise(cwd: string, paths: string[]) {
  const env = { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" };
  const run = spawnSync(depcruise, [...paths, "--config", config, "--output-type", "err"], { cwd, encoding: "utf8", env });
  // Colours may be forced by the environment (CI); the rule names and paths are what is checked.
  return { status: run.status, output: stripVTControlCharacters(`${run.stdout}${run.stderr}`) };
}

/** A tree with the repository's layout holding only the given files. */
function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "vend-layers-"));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true } }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A tree in which each edge's first module imports its second (a side-effect import: the edge is all the rule sees). */
function importing(edges: readonly string[]): Record<string, string> {
  const imports = new Map<string, string[]>();
  for (const edge of edges) {
    const [from = "", to = ""] = edge.split(": ").at(-1)?.split(" → ") ?? [];
    if (!imports.has(to)) imports.set(to, []);
    const path = relative(dirname(from), to);
    imports.set(from, [...(imports.get(from) ?? []), `import "${path.startsWith(".") ? path : `./${path}`}";`]);
  }
  return Object.fromEntries([...imports].map(([file, lines]) => [file, [...lines, "export const value = 1;", ""].join("\n")]));
}

/** Each rule of the stricter floors and an upward import it catches, as the rule reports it. */
const floors = [
  "domain-imports-runner: src/providers/types.ts → src/jobs/queue.ts",
  "domain-imports-across: src/providers/anomalies.ts → src/webhooks/outbox.ts",
  "domain-imports-orders: src/ledger/movements.ts → src/orders/completion.ts",
  "runner-imports-domain: src/retention/pass.ts → src/webhooks/statements/delete-old-attempts.ts",
  "domain-imports-upward: src/orders/waiters.ts → src/transactions/lookup.ts",
  "deps-imports-features: src/deps.ts → src/callbacks/apply.ts",
  "service-imports-upward: src/wallet/statement.ts → src/deps.ts",
  "background-imports-upward: src/jobs/tasks/sweep.ts → src/deps.ts",
  "base-imports-upward: src/settings/reads.ts → src/deps.ts",
  "http-imports-features: src/http/pipeline.ts → src/jobs/tasks/work.ts",
  "routes-import-routes: src/vend/routes.ts → src/transactions/routes.ts",
];

/**
 * What the floors allow: a type lower layers share, in base; an owner's statement on the retention pass's batch
 * delete; orders on an owner; the credential state auth keeps for the process, named by the bag; a route picking
 * from the bag; a route calling a verb.
 */
const allowed = [
  "src/providers/registry.ts → src/lib/job-queue.ts",
  "src/webhooks/statements/delete-old-attempts.ts → src/retention/delete-batch.ts",
  "src/orders/completion.ts → src/webhooks/outbox.ts",
  "src/deps.ts → src/auth/guard.ts",
  "src/wallet/routes.ts → src/deps.ts",
  "src/vend/routes.ts → src/orders/accept-order.ts",
];

describe("imports point one way (dependency-cruiser)", () => {
  test("a backward import fails the rule: base → feature, domain → feature, http → feature, cli → service", () => {
    const dir = fixture({
      "src/vend/service.ts": "export const accept = 1;\n",
      "src/lib/money.ts": 'import { accept } from "../vend/service.ts";\nexport const x = accept;\n',
      "src/ledger/movements.ts": 'import { accept } from "../vend/service.ts";\nexport const y = accept;\n',
      "src/http/operations.ts": 'import { accept } from "../vend/service.ts";\nexport const z = accept;\n',
      "cli/commands/vend.ts": 'import { accept } from "../../src/vend/service.ts";\nexport const w = accept;\n',
    });
    try {
      const { status, output } = cruise(dir, ["src", "cli"]);
      expect(status).not.toBe(0);
      expect(output).toContain("base-imports-upward: src/lib/money.ts → src/vend/service.ts");
      expect(output).toContain("domain-imports-upward: src/ledger/movements.ts → src/vend/service.ts");
      expect(output).toContain("http-imports-features: src/http/operations.ts → src/vend/service.ts");
      expect(output).toContain("cli-imports-service: cli/commands/vend.ts → src/vend/service.ts");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("provider-admin is a feature: domain and base code may not import it, and its services import no route", () => {
    const dir = fixture({
      "src/provider-admin/overview.ts": 'import { r } from "../vend/routes.ts";\nexport const overview = r;\n',
      "src/provider-admin/routes.ts": 'import { overview } from "./overview.ts";\nexport const routes = overview;\n',
      "src/vend/routes.ts": "export const r = 1;\n",
      "src/providers/registry.ts": 'import { overview } from "../provider-admin/overview.ts";\nexport const p = overview;\n',
      "src/db/keyset.ts": 'import { overview } from "../provider-admin/overview.ts";\nexport const k = overview;\n',
    });
    try {
      const { status, output } = cruise(dir, ["src"]);
      expect(status).not.toBe(0);
      expect(output).toContain("domain-imports-upward: src/providers/registry.ts → src/provider-admin/overview.ts");
      expect(output).toContain("base-imports-upward: src/db/keyset.ts → src/provider-admin/overview.ts");
      expect(output).toContain("service-imports-upward: src/provider-admin/overview.ts → src/vend/routes.ts");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the same imports pointing forward pass", () => {
    const dir = fixture({
      "src/lib/money.ts": "export const formatted = 1;\n",
      "src/ledger/movements.ts": 'import { formatted } from "../lib/money.ts";\nexport const y = formatted;\n',
      "src/vend/service.ts": 'import { y } from "../ledger/movements.ts";\nexport const accept = y;\n',
      "src/vend/routes.ts": 'import { accept } from "./service.ts";\nexport const r = accept;\n',
    });
    try {
      const { status, output } = cruise(dir, ["src"]);
      expect(output).toContain("no dependency violations");
      expect(status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("orders are domain code; queues and tasks sit above the features and below the routes", () => {
    const dir = fixture({
      "src/callbacks/apply.ts": "export const apply = 1;\n",
      "src/vend/routes.ts": "export const r = 1;\n",
      "src/orders/completion.ts": 'import { apply } from "../callbacks/apply.ts";\nexport const c = apply;\n',
      "src/jobs/tasks/sweep.ts": 'import { r } from "../../vend/routes.ts";\nexport const t = r;\n',
      "src/jobs/queues/work.ts": 'import { apply } from "../../callbacks/apply.ts";\nexport const q = apply;\n',
      "src/wallet/statement.ts": 'import { q } from "../jobs/queues/work.ts";\nexport const s = q;\n',
    });
    try {
      const { status, output } = cruise(dir, ["src"]);
      expect(status).not.toBe(0);
      expect(output).toContain("domain-imports-upward: src/orders/completion.ts → src/callbacks/apply.ts");
      expect(output).toContain("background-imports-upward: src/jobs/tasks/sweep.ts → src/vend/routes.ts");
      expect(output).toContain("service-imports-upward: src/wallet/statement.ts → src/jobs/queues/work.ts");
      // A queue running feature code is the layer's purpose.
      expect(output).not.toContain("src/jobs/queues/work.ts → src/callbacks/apply.ts");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("webhooks are domain code but their routes: orders write events through them, they import no feature", () => {
    const dir = fixture({
      "src/callbacks/apply.ts": "export const apply = 1;\n",
      "src/webhooks/outbox.ts": "export const emit = 1;\n",
      "src/webhooks/delivery.ts": 'import { apply } from "../callbacks/apply.ts";\nexport const deliver = apply;\n',
      "src/webhooks/routes.ts": 'import { emit } from "./outbox.ts";\nexport const routes = emit;\n',
      "src/orders/completion.ts": 'import { emit } from "../webhooks/outbox.ts";\nexport const c = emit;\n',
      "src/orders/leases.ts": 'import { routes } from "../webhooks/routes.ts";\nexport const l = routes;\n',
    });
    try {
      const { status, output } = cruise(dir, ["src"]);
      expect(status).not.toBe(0);
      expect(output).toContain("domain-imports-upward: src/webhooks/delivery.ts → src/callbacks/apply.ts");
      expect(output).toContain("domain-imports-upward: src/orders/leases.ts → src/webhooks/routes.ts");
      expect(output).not.toContain("src/orders/completion.ts → src/webhooks/outbox.ts");
      expect(output).not.toContain("src/webhooks/routes.ts → src/webhooks/outbox.ts");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the floors, strictly: each rule catches its planted upward import, and the imports the floors allow pass", () => {
    const dir = fixture(importing([...floors, ...allowed]));
    try {
      const { status, output } = cruise(dir, ["src"]);
      expect(status).not.toBe(0);
      for (const caught of floors) expect(output).toContain(caught);
      for (const edge of allowed) expect(output).not.toContain(edge);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the repository itself has no backward import", () => {
    const { status, output } = cruise(root, ["src", "cli"]);
    expect(output).toContain("no dependency violations");
    expect(status).toBe(0);
  }, 60_000);
});
