import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkDocs, pathPattern } from "../../scripts/doc-links.ts";

/** A small repository of its own: a source file, a guide with headings, and the pages under test. */
const root = mkdtempSync(join(tmpdir(), "vend-doc-links-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

write("src/providers/vtu/config.ts", "export {};\n");
write("ops/haproxy.cfg", "global\n");
write("docs/runbooks/queue-age.md", "# Queue age\n");
write("ARCHITECTURE.md", "# Architecture\n");
write("docs/guide.md", "# Guide\n\n## Two database roles\n\nText.\n");

const clean = `# Clean

## Local section

See [the guide](guide.md), [its roles](guide.md#two-database-roles), [this section](#local-section),
[the architecture](../ARCHITECTURE.md) and [the proxy](../ops/haproxy.cfg).

Paths: \`src/providers/vtu/config.ts\`, \`ops/haproxy.cfg\`, \`docs/runbooks/*.md\`, \`src/providers/<name>/\`,
\`src/providers/vtu/config.ts:12\`, \`ARCHITECTURE.md\`, \`docs/guide.md#two-database-roles\`.

Not paths: \`GET /api/v1/events\`, \`src\`, \`dist/vend\`, \`config.json\`, \`rg_test_…\`, \`a/b\`.

\`\`\`sh
cat src/not/a/checked/path.ts
\`\`\`
`;

const broken = `# Broken

A dead link: [gone](gone.md).

A dead anchor here: [nowhere](#no-such-section).

A dead anchor there: [roles](guide.md#no-such-role).

A missing path: \`src/providers/gone/config.ts\`, a glob that matches nothing: \`docs/runbooks/*.yaml\`, and a
root document that is not there: \`DECISIONS.md\`.
`;

describe("the documentation link check", () => {
  test("a page whose links, anchors and paths all resolve has no problems", async () => {
    write("docs/clean.md", clean);
    expect(await checkDocs(root, ["docs/clean.md", "docs/guide.md"])).toEqual([]);
  });

  test("a dead link, a dead anchor in the page and in another, and missing backquoted paths are each reported", async () => {
    write("docs/broken.md", broken);
    const problems = await checkDocs(root, ["docs/broken.md", "docs/guide.md"]);
    const reported = problems.map((problem) => `${problem.file}:${problem.line} ${problem.rule}`);
    expect(reported.sort()).toEqual(
      [
        "docs/broken.md:3 missing-file",
        "docs/broken.md:5 missing-heading",
        "docs/broken.md:7 missing-heading-in-file",
        "docs/broken.md:9 missing-path",
        "docs/broken.md:9 missing-path",
        "docs/broken.md:10 missing-path",
      ].sort(),
    );
    expect(problems.filter((problem) => problem.rule === "missing-path").map((problem) => problem.message)).toEqual([
      "Cannot find path `src/providers/gone/config.ts` in the repository",
      "Cannot find path `docs/runbooks/*.yaml` in the repository",
      "Cannot find path `DECISIONS.md` in the repository",
    ]);
  });

  test.each([
    ["src/foo.ts", "src/foo.ts"],
    ["ops/haproxy.cfg", "ops/haproxy.cfg"],
    ["docs/runbooks/*.md", "docs/runbooks/*.md"],
    ["src/providers/<name>/", "src/providers/*"],
    ["src/db/client.ts:99", "src/db/client.ts"],
    ["docs/operating.md#two-database-roles", "docs/operating.md"],
    ["README.md", "README.md"],
    ["package.json", "package.json"],
    ["GET /api/v1/events", undefined],
    ["dist/vend", undefined],
    ["config.json", undefined],
    ["src", undefined],
    ["vendctl keys roll", undefined],
    ["RETENTION_…", undefined],
  ])("`%s` is checked as %p", (token, pattern) => {
    expect(pathPattern(token)).toBe(pattern);
  });
});
