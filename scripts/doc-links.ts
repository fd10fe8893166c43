/**
 * `npm run lint:docs`: the project's Markdown (README.md, ARCHITECTURE.md, cli/README.md, docs/**) checked offline
 * for what goes stale as the tree moves: a relative link to a file that is not there, a link to a heading that is
 * not there (`#section`, `file.md#section`), and a repository path in backquotes (`src/foo.ts`) that names
 * nothing. Links and anchors are remark-validate-links' (GitHub's heading slugs); the backquoted paths are
 * `backquotedPaths` below.
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve as resolvePath } from "node:path";
import type { InlineCode, Root } from "mdast";
import { remark } from "remark";
import remarkGfm from "remark-gfm";
import remarkValidateLinks from "remark-validate-links";
import { type Options as EngineOptions, engine } from "unified-engine";
import { visit } from "unist-util-visit";

/** The top-level folders whose paths are checked when written in backquotes. */
export const repositoryFolders = ["src", "test", "docs", "ops", "cli", "sdk", "scripts", "bench", "generated", "examples"];

/** A bare name checked at the top level (or beside the page): a root document such as `ARCHITECTURE.md`, or one of these. */
const topLevelFile =
  /^(?:[A-Z][A-Z0-9_-]*\.md|package(?:-lock)?\.json|openapi\.yaml|tsconfig\.json|biome\.json|bunfig\.toml|redocly\.yaml|drizzle\.config\.ts|providers\.example\.yaml)$/;

/**
 * The path a backquoted token names, as a glob, or undefined when it is not a repository path: one word of path
 * characters that starts with a top-level folder and a slash, or a top-level file name. `<name>`, `…` and `*` are
 * wildcards; a `:line` or `#anchor` after a path is left off.
 */
export function pathPattern(token: string): string | undefined {
  const value = token.trim();
  if (!/^[\w.\-/*<>…{},]+(?::\d+(?:-\d+)?|#[\w-]+)?$/.test(value)) return undefined;
  const path = value.replace(/(?::\d+(?:-\d+)?|#[\w-]+)$/, "");
  const first = path.split("/")[0] ?? "";
  const isRepositoryPath = path.includes("/") && repositoryFolders.includes(first);
  if (!isRepositoryPath && !topLevelFile.test(path)) return undefined;
  return path
    .replace(/<[^>]*>/g, "*")
    .replace(/…|\.\.\./g, "*")
    .replace(/\/+$/, "");
}

/** Whether anything in `root` matches the pattern (a plain path, or a glob over the folders it names). */
export function pathExists(root: string, pattern: string): boolean {
  if (!/[*?{[]/.test(pattern)) return existsSync(join(root, pattern));
  const segments = pattern.split("/");
  const firstWild = segments.findIndex((segment) => /[*?{[]/.test(segment));
  const base = join(root, ...segments.slice(0, firstWild));
  if (!existsSync(base)) return false;
  const rest = segments.slice(firstWild).join("/");
  for (const _ of new Bun.Glob(rest).scanSync({ cwd: base, onlyFiles: false, dot: true })) return true;
  return false;
}

/** What the plugin uses of a vfile. */
interface CheckedFile {
  cwd: string;
  path: string;
  message(reason: string, place: InlineCode): { ruleId?: string | undefined; source?: string | undefined };
}

/** A remark plugin: each backquoted repository path that names nothing is a message on the file. */
function backquotedPaths(options: { root: string }) {
  return (tree: Root, file: CheckedFile) => {
    visit(tree, "inlineCode", (node: InlineCode) => {
      const pattern = pathPattern(node.value);
      if (pattern === undefined) return;
      const beside = relative(options.root, join(dirname(resolvePath(file.cwd, file.path)), pattern));
      const found = pathExists(options.root, pattern) || (!pattern.includes("/") && pathExists(options.root, beside));
      if (found) return;
      const message = file.message(`Cannot find path \`${node.value}\` in the repository`, node);
      message.ruleId = "missing-path";
      message.source = "doc-links";
    });
  };
}

type Plugins = EngineOptions["plugins"];

export interface DocProblem {
  file: string;
  line: number | undefined;
  rule: string;
  message: string;
}

/** The problems in `files` (paths relative to `root`), each checked against the others and the tree. */
export function checkDocs(root: string, files: string[]): Promise<DocProblem[]> {
  const asked = new Set(files);
  return new Promise((resolve, reject) => {
    engine(
      {
        processor: remark(),
        // As engine plugins, so remark-validate-links sees every file and checks headings across them.
        // The engine's list takes plugins of any parameters as `unknown`, which typed plugins are not assignable from.
        plugins: [
          [remarkGfm],
          [remarkValidateLinks, { repository: false, root }],
          [backquotedPaths, { root }],
        ] as unknown as Plugins,
        files: files.map((file) => join(root, file)),
        cwd: root,
        out: false,
        output: false,
        quiet: true,
        silent: true,
        color: false,
        detectConfig: false,
        detectIgnore: false,
        streamError: { write: () => true } as unknown as NodeJS.WritableStream,
      },
      (error, _code, context) => {
        if (error) return reject(error);
        // Pages the checked ones link to are read for their headings; only the checked ones are reported.
        const checked = (context?.files ?? []).filter((file) => asked.has(relative(root, resolvePath(file.cwd, file.path))));
        const problems = checked.flatMap((file) =>
          file.messages.map((message) => ({
            file: relative(root, resolvePath(file.cwd, file.path)),
            line: message.line,
            rule: message.ruleId ?? "",
            message: message.reason,
          })),
        );
        resolve(problems);
      },
    );
  });
}

/** The pages checked: the front door, the architecture, the CLI guide and everything under docs/. */
export function projectDocs(root: string): string[] {
  const docs = [...new Bun.Glob("docs/**/*.md").scanSync({ cwd: root })].sort();
  return [...["README.md", "ARCHITECTURE.md", "cli/README.md"].filter((file) => existsSync(join(root, file))), ...docs];
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..");
  const files = projectDocs(root);
  const problems = await checkDocs(root, files);
  for (const problem of problems) console.error(`${problem.file}:${problem.line ?? "?"}: ${problem.message} (${problem.rule})`);
  if (problems.length > 0) {
    console.error(
      `${problems.length} dead link${problems.length === 1 ? "" : "s"}, anchor${problems.length === 1 ? "" : "s"} or path${problems.length === 1 ? "" : "s"} in ${files.length} pages`,
    );
    process.exit(1);
  }
  console.log(`${files.length} pages: every relative link, anchor and backquoted path resolves`);
}
