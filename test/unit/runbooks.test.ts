import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { parse } from "yaml";

const root = join(import.meta.dir, "..", "..");
const runbooks = "docs/runbooks";
const index = `${runbooks}/README.md`;
/** What an operator woken by a page needs, in the order they need it: every runbook has these `##` sections. */
const sections = ["What it means", "What to look at first", "Fixing the common causes", "When to escalate"];

interface Rule {
  alert: string;
  annotations?: Record<string, string>;
}

/** `VendApiDown` → `docs/runbooks/vend-api-down.md`. */
const pageOf = (alert: string) => `${runbooks}/${alert.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()}.md`;

const read = (tree: string, path: string) => readFileSync(join(tree, path), "utf8");

function rulesOf(tree: string): Rule[] {
  const document = parse(read(tree, "ops/prometheus-alerts.yml")) as { groups: { rules: Rule[] }[] };
  return document.groups.flatMap((group) => group.rules);
}

const pagesOf = (tree: string) =>
  readdirSync(join(tree, runbooks))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `${runbooks}/${name}`)
    .sort();

/** The text a reader sees as prose: fenced blocks and inline code removed (their brackets are not links). */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line.replace(/`[^`]*`/g, "");
  });
}

/** The anchors of a Markdown file's headings, as GitHub makes them (lower case, punctuation dropped, spaces as `-`). */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : line.match(/^#{1,6}\s+(.+?)\s*#*\s*$/);
    if (!heading?.[1]) continue;
    const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Inline links `[text](target)` and reference definitions `[name]: target` outside code. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown).join("\n");
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? "");
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1] ?? "");
  return [...inline, ...references];
}

/** Every relative link of `markdown` (at `path` in `tree`) whose file, or whose anchor in it, does not exist. */
function deadLinks(tree: string, path: string, markdown: string): string[] {
  const dead: string[] = [];
  for (const link of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
    const [target = "", anchor] = link.split("#");
    const file = target === "" ? path : posix.normalize(posix.join(posix.dirname(path), decodeURIComponent(target)));
    if (file.startsWith("..") || !existsSync(join(tree, file))) {
      dead.push(`${path}: ${link}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    const isMarkdown = file.endsWith(".md") && statSync(join(tree, file)).isFile();
    const text = file === path ? markdown : isMarkdown ? read(tree, file) : "";
    if (!anchorsOf(text).has(decodeURIComponent(anchor))) dead.push(`${path}: ${link}: no heading #${anchor} in ${file}`);
  }
  return dead;
}

function missingRunbookUrls(tree: string): string[] {
  return rulesOf(tree).flatMap((rule) => {
    const url = rule.annotations?.runbook_url;
    if (!url) return [`${rule.alert}: no runbook_url`];
    if (url !== pageOf(rule.alert)) return [`${rule.alert}: runbook_url ${url}, expected ${pageOf(rule.alert)}`];
    return existsSync(join(tree, url)) ? [] : [`${rule.alert}: runbook_url ${url} does not exist`];
  });
}

function orphanPages(tree: string): string[] {
  const pages = new Set(rulesOf(tree).map((rule) => pageOf(rule.alert)));
  return pagesOf(tree)
    .filter((page) => page !== index && !pages.has(page))
    .map((page) => `${page}: no alert in ops/prometheus-alerts.yml has this page`);
}

/** A page starts with `# <Alert>` and has every section, in order; the index links every page. */
function incompletePages(tree: string): string[] {
  const problems: string[] = [];
  const alerts = new Map(rulesOf(tree).map((rule) => [pageOf(rule.alert), rule.alert]));
  const indexed = new Set(linksOf(read(tree, index)).map((link) => posix.join(runbooks, link.split("#")[0] ?? "")));
  for (const page of pagesOf(tree).filter((name) => name !== index)) {
    const lines = prose(read(tree, page));
    const alert = alerts.get(page);
    if (alert && lines[0] !== `# ${alert}`) problems.push(`${page}: the first line is not "# ${alert}"`);
    const found = lines.filter((line) => line.startsWith("## ")).map((line) => line.slice(3).trim());
    const present = sections.filter((section) => found.includes(section));
    for (const section of sections.filter((name) => !found.includes(name))) problems.push(`${page}: no "## ${section}"`);
    if (present.join("|") !== found.filter((name) => sections.includes(name)).join("|"))
      problems.push(`${page}: sections out of order`);
    if (!indexed.has(page)) problems.push(`${index}: does not link ${page}`);
  }
  return problems;
}

const deadRunbookLinks = (tree: string) => pagesOf(tree).flatMap((page) => deadLinks(tree, page, read(tree, page)));

/** The part of docs/operating.md under `## Alerts and runbooks`, up to the next `## ` heading. */
function operatingSection(tree: string): string {
  const text = read(tree, "docs/operating.md");
  const start = text.indexOf("\n## Alerts and runbooks\n");
  if (start < 0) return "";
  const next = text.indexOf("\n## ", start + 1);
  return text.slice(start, next < 0 ? undefined : next);
}

describe("runbooks: one page per alert, complete, linked both ways", () => {
  test("every alert has a runbook_url naming its page, and the page exists", () => {
    expect(rulesOf(root).length).toBeGreaterThan(0);
    expect(missingRunbookUrls(root)).toEqual([]);
  });

  test("every page in docs/runbooks/ belongs to an alert (README.md is the index)", () => {
    expect(orphanPages(root)).toEqual([]);
  });

  test("every page has its title and the sections an operator reads, and the index links it", () => {
    expect(incompletePages(root)).toEqual([]);
  });

  test("every relative link and #anchor in the runbooks resolves", () => {
    expect(deadRunbookLinks(root)).toEqual([]);
  });

  test("docs/operating.md's Alerts and runbooks section links every runbook, and its links resolve", () => {
    const section = operatingSection(root);
    const linked = new Set(linksOf(section).map((link) => posix.normalize(posix.join("docs", link.split("#")[0] ?? ""))));
    const unlinked = rulesOf(root)
      .map((rule) => rule.alert)
      .filter((alert) => !linked.has(pageOf(alert)));
    expect(unlinked).toEqual([]);
    expect(deadLinks(root, "docs/operating.md", section)).toEqual([]);
  });
});

describe("runbooks: each check fails on a tree that breaks it", () => {
  const page = (alert: string, extra = "") =>
    `# ${alert}\n\n${sections.map((section) => `## ${section}\n\nText.\n`).join("\n")}${extra}`;
  const rules = `groups:
  - name: g
    rules:
      - alert: FineAlert
        expr: up == 0
        annotations: { summary: s, runbook_url: docs/runbooks/fine-alert.md }
      - alert: NoLink
        expr: up == 0
        annotations: { summary: s }
      - alert: WrongName
        expr: up == 0
        annotations: { summary: s, runbook_url: docs/runbooks/fine-alert.md }
      - alert: GoneLink
        expr: up == 0
        annotations: { summary: s, runbook_url: docs/runbooks/gone-link.md }
      - alert: ShortPage
        expr: up == 0
        annotations: { summary: s, runbook_url: docs/runbooks/short-page.md }
`;
  const files: Record<string, string> = {
    "ops/prometheus-alerts.yml": rules,
    [index]: "# Runbooks\n\n- [Fine](fine-alert.md)\n- [Orphan](orphan.md)\n- [Missing](gone-link.md)\n",
    [pageOf("FineAlert")]: page(
      "FineAlert",
      "See [short](short-page.md#what-it-means), [here](#when-to-escalate), `[code](nowhere.md)` and\n" +
        "[gone](nowhere.md), [no anchor](short-page.md#no-such-heading), [no local anchor](#nothing-here).\n\n" +
        "```sh\n[fenced](nowhere.md)\n```\n",
    ),
    [pageOf("ShortPage")]: "# ShortPage\n\n## When to escalate\n\nNow.\n\n## What it means\n\nThis.\n",
    [`${runbooks}/orphan.md`]: page("Orphan"),
  };
  const tree = mkdtempSync(join(tmpdir(), "vend-runbooks-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
  afterAll(() => rmSync(tree, { recursive: true, force: true }));

  test("an alert without runbook_url, one naming another alert's page, one whose page does not exist", () => {
    expect(missingRunbookUrls(tree)).toEqual([
      "NoLink: no runbook_url",
      "WrongName: runbook_url docs/runbooks/fine-alert.md, expected docs/runbooks/wrong-name.md",
      "GoneLink: runbook_url docs/runbooks/gone-link.md does not exist",
    ]);
  });

  test("a page no alert names", () => {
    expect(orphanPages(tree)).toEqual(["docs/runbooks/orphan.md: no alert in ops/prometheus-alerts.yml has this page"]);
  });

  test("a page without its sections, or with them out of order, and a page the index does not link", () => {
    expect(incompletePages(tree)).toEqual([
      'docs/runbooks/short-page.md: no "## What to look at first"',
      'docs/runbooks/short-page.md: no "## Fixing the common causes"',
      "docs/runbooks/short-page.md: sections out of order",
      "docs/runbooks/README.md: does not link docs/runbooks/short-page.md",
    ]);
  });

  test("a dead relative link, a dead anchor in another page or in the same page; code is not read as links", () => {
    expect(deadRunbookLinks(tree)).toEqual([
      "docs/runbooks/README.md: gone-link.md: no such file",
      "docs/runbooks/fine-alert.md: nowhere.md: no such file",
      "docs/runbooks/fine-alert.md: short-page.md#no-such-heading: no heading #no-such-heading in docs/runbooks/short-page.md",
      "docs/runbooks/fine-alert.md: #nothing-here: no heading #nothing-here in docs/runbooks/fine-alert.md",
    ]);
  });
});
