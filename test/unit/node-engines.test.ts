import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * package.json's `engines.node` is the Node the README promises; every package the lock installs must say it
 * runs there too, or `npm ci` greets a fresh machine with EBADENGINE warnings and the promise is not kept.
 * The oldest release of each line the range admits is checked (20.19.0, 22.13.0, …).
 */
const root = join(import.meta.dir, "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

/** @scalar/* is the /docs page's browser bundle, served as files and never run by Node; its version is kept apart. */
const neverRunByNode = /(^|\/)node_modules\/@scalar\//;

/** The lowest x.y.z of each alternative of a range like `^20.19.0 || ^22.13.0 || >=23.5.0`. */
function lowestOfEachAlternative(range: string): string[] {
  return range.split("||").map((alternative) => {
    const parts = alternative.match(/\d+(\.\d+){0,2}/)?.[0].split(".");
    if (!parts) throw new Error(`cannot read a lowest version from "${alternative.trim()}"`);
    return [0, 1, 2].map((i) => parts[i] ?? "0").join(".");
  });
}

describe("the Node the README promises", () => {
  const lowest = lowestOfEachAlternative(pkg.engines.node);

  test("package.json's engines.node is the range the README states", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme).toContain(`\`engines\`: \`${pkg.engines.node}\``);
  });

  for (const node of lowest) {
    test(`every package in package-lock.json admits Node ${node}`, () => {
      expect(Bun.semver.satisfies(node, pkg.engines.node)).toBe(true);
      const refusing = Object.entries(lock.packages)
        .filter(([path]) => path !== "" && !neverRunByNode.test(path))
        .flatMap(([path, entry]) => {
          const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
          if (!range || Bun.semver.satisfies(node, range)) return [];
          return [`${path.replace(/^.*node_modules\//, "")}@${entry.version} wants ${range}`];
        });
      expect(refusing).toEqual([]);
    });
  }
});
