/**
 * The extension's own logic, free of any `vscode` import so that `node --test` can check it:
 * how hits become QuickPick items, which settings go to the server, where the server
 * executable is, and which folder is the vault of a page.
 */

import * as path from "node:path";

/** One scoring component of a hit, as `wiki/search` returns it. */
export interface Match {
  channel: string;
  term: string;
  field?: string;
  via?: string;
  hits: number;
  points: number;
}

/** One hit of `wiki/search` (and of `wiki/related`, which adds `reasons`). */
export interface Hit {
  title: string;
  wikilink: string;
  file: string;
  type?: string | null;
  score: number;
  snippet: string;
  matched: Match[];
  reasons?: string;
}

/** The `wiki/search` result: the same object `vaultlens search --json` prints. */
export interface SearchResult {
  command: string;
  vault: string;
  query: string;
  hits: Hit[];
}

/** The `wiki/related` result. */
export interface RelatedResult {
  command: string;
  vault: string;
  page: string | null;
  hits: Hit[];
}

/** The fields of a QuickPick item this module decides (the extension adds the rest). */
export interface ItemText {
  label: string;
  description: string;
  detail: string;
}

/** How long the search box waits after a keystroke before asking the server again. */
export const SEARCH_DEBOUNCE_MS = 120;
/** How many hits the search box asks for. */
export const SEARCH_LIMIT = 30;

/** A number as the engine prints it: integers plainly, fractions with at most 6 decimals. */
export function formatNumber(value: number): string {
  if (Number.isInteger(value)) {
    return String(value);
  }
  return value.toFixed(6).replace(/0+$/, "").replace(/\.$/, "");
}

/** Text on one line with runs of white space collapsed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Text cut to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)).trimEnd() + "…";
}

/**
 * One component in words: `title-term “graph” +5`, `body-term “rag” ×3 +3`,
 * `stem-term “graph” in tag via graphs +1`, `title-phrase +10`.
 */
export function formatMatch(m: Match): string {
  const parts = [m.channel];
  if (m.term) {
    parts.push(`“${m.term}”`);
  }
  if (m.field && !m.channel.startsWith(m.field + "-")) {
    parts.push(`in ${m.field}`);
  }
  if (m.via) {
    parts.push(`via ${m.via}`);
  }
  if (m.hits > 1) {
    parts.push(`×${m.hits}`);
  }
  parts.push(`+${formatNumber(m.points)}`);
  return parts.join(" ");
}

/** The whole breakdown on one line, components joined with " · ". */
export function breakdownLine(matched: readonly Match[]): string {
  return matched.map(formatMatch).join(" · ");
}

/** The QuickPick text of a `wiki/search` hit: title; score, path and snippet; the breakdown. */
export function searchItem(hit: Hit): ItemText {
  const facts = [`${formatNumber(hit.score)}`, hit.file];
  const snippet = oneLine(hit.snippet || "");
  if (snippet) {
    facts.push(truncate(snippet, 120));
  }
  return {
    label: hit.title,
    description: facts.join(" · "),
    detail: breakdownLine(hit.matched),
  };
}

/** The QuickPick text of a `wiki/related` hit: title; score and path; why it is related. */
export function relatedItem(hit: Hit): ItemText {
  return {
    label: hit.title,
    description: `${formatNumber(hit.score)} · ${hit.file}`,
    detail: hit.reasons ? `${hit.reasons} — ${breakdownLine(hit.matched)}` : breakdownLine(hit.matched),
  };
}

/** The message shown when a search finds nothing (or nothing was typed yet). */
export function emptySearchMessage(query: string): string {
  return query.trim() ? `No page matches “${query.trim()}”.` : "Type to search the vault.";
}

// --- settings ---------------------------------------------------------------------------------

/**
 * The `vaultlens.*` settings that belong to the server (lsp/settings.py), in VS Code's dotted
 * spelling. The server ignores keys it does not know, so keys for features it may not have yet
 * (diagnostics, code lenses) are harmless.
 */
export const SERVER_SETTING_KEYS = [
  "exclude",
  "completion.limit",
  "completion.linkStyle",
  "links.order",
  "hover.related",
  "diagnostics.enabled",
  "diagnostics.unresolvedSeverity",
  "diagnostics.linkSuggestions",
  "codeLens.enabled",
  "inlayHints.headingBacklinks",
  "inlayHints.linkTitles",
  "semanticTokens.enabled",
  "dailyNotes.format",
  "dailyNotes.folder",
  "extract.leaves",
  "search.hintsThreshold",
] as const;

/** The contributed settings that are the extension's own, never sent to the server. */
export const CLIENT_SETTING_KEYS = ["enable", "server.path", "server.python", "server.args", "server.installSource", "trace.server"] as const;

/** What `WorkspaceConfiguration.inspect(key)` tells about one key (the parts used here). */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The server settings the user has actually set, as a nested object (`{completion: {limit: 30}}`).
 *
 * Defaults are left out on purpose: the server's own defaults are the same, and a value the
 * user never set must not override the vault's `.vaultlens.toml`.
 */
export function serverSettings(inspect: (key: string) => Inspected | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const info = inspect(key);
    if (!info) {
      continue;
    }
    const value = info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue;
    if (value === undefined || value === null) {
      continue;
    }
    const parts = key.split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) {
      if (typeof node[part] !== "object" || node[part] === null) {
        node[part] = {};
      }
      node = node[part] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

/** Whether a change of configuration needs the server restarted (it starts another process). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects("vaultlens.server") || affects("vaultlens.enable");
}

// --- the server executable ----------------------------------------------------------------------

/** The environment and file checks `findExecutable` needs (real ones in the extension, fakes in tests). */
export interface Host {
  platform: string;
  env: Record<string, string | undefined>;
  home: string;
  isFile(p: string): boolean;
}

/** `~` and `~/…` expanded to the home folder. */
export function expandHome(p: string, home: string): string {
  if (p === "~") {
    return home;
  }
  if (p.startsWith("~/") || p.startsWith("~\\")) {
    return path.join(home, p.slice(2));
  }
  return p;
}

/**
 * The absolute path of the server executable, or undefined when there is none.
 *
 * A command with a folder in it is a path (relative ones against `cwd`); a bare name is looked
 * up on PATH (with PATHEXT on Windows), then in the folder pipx and `pip install --user` use
 * (`~/.local/bin`), which programs started from a desktop often lack on PATH.
 */
export function findExecutable(command: string, host: Host, cwd?: string): string | undefined {
  const win = host.platform === "win32";
  const pathApi = win ? path.win32 : path.posix;
  const cmd = expandHome(command.trim(), host.home);
  if (!cmd) {
    return undefined;
  }
  const exts = win
    ? ["", ...(host.env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean).map((e) => e.toLowerCase())]
    : [""];
  const tryPath = (p: string): string | undefined => exts.map((e) => p + e).find((c) => host.isFile(c));
  if (cmd.includes("/") || (win && cmd.includes("\\"))) {
    const full = pathApi.isAbsolute(cmd) ? cmd : pathApi.resolve(cwd ?? host.home, cmd);
    return tryPath(full);
  }
  const dirs = (host.env.PATH ?? host.env.Path ?? "").split(win ? ";" : ":").filter(Boolean);
  dirs.push(pathApi.join(host.home, ".local", "bin"));
  for (const dir of dirs) {
    const found = tryPath(pathApi.join(dir, cmd));
    if (found) {
      return found;
    }
  }
  return undefined;
}

// --- finding or installing the server -----------------------------------------------------------

/** The Python environment the extension installs the server into, inside its global storage. */
export function managedVenv(storageDir: string, platform: string): string {
  return (platform === "win32" ? path.win32 : path.posix).join(storageDir, "venv");
}

/** A program of that environment: `venv/bin/<name>`, or `venv\Scripts\<name>.exe` on Windows. */
export function venvProgram(venv: string, name: string, platform: string): string {
  return platform === "win32" ? path.win32.join(venv, "Scripts", `${name}.exe`) : path.posix.join(venv, "bin", name);
}

/** What decides where the server is: the settings `vaultlens.server.path` and whether the user set it. */
export interface ServerLookup {
  /** `vaultlens.server.path` (its default is `vaultlens`). */
  path: string;
  /** Whether the user set `vaultlens.server.path` (in any scope); a set path is used alone. */
  pathIsSet: boolean;
  /** The extension's global storage folder (ExtensionContext.globalStorageUri). */
  storageDir: string;
}

/** Where the server was found, or that it was not (with what to tell the user). */
export type ServerChoice =
  | { kind: "found"; executable: string; from: "setting" | "extension" | "PATH" }
  | { kind: "missing"; message: string; canInstall: boolean };

/**
 * Where the server executable is. A `vaultlens.server.path` the user set is used alone (a wrong
 * one is reported, never silently replaced). Otherwise: the environment the extension installed
 * into its own storage (only there because the user asked for it), then `vaultlens` on PATH and
 * in `~/.local/bin`. When there is none, the extension offers to install it (`canInstall`).
 */
export function locateServer(lookup: ServerLookup, host: Host, cwd?: string): ServerChoice {
  const configured = lookup.path.trim();
  if (lookup.pathIsSet && configured) {
    const found = findExecutable(configured, host, cwd);
    if (found) {
      return { kind: "found", executable: found, from: "setting" };
    }
    return {
      kind: "missing",
      canInstall: false,
      message:
        `vaultlens: the setting vaultlens.server.path is “${configured}”, and there is no such executable. ` +
        "Correct it, or remove it to use the server the extension installs for you.",
    };
  }
  const managed = venvProgram(managedVenv(lookup.storageDir, host.platform), "vaultlens", host.platform);
  if (host.isFile(managed)) {
    return { kind: "found", executable: managed, from: "extension" };
  }
  const onPath = findExecutable(configured || "vaultlens", host, cwd);
  if (onPath) {
    return { kind: "found", executable: onPath, from: "PATH" };
  }
  return { kind: "missing", canInstall: true, message: missingServerMessage(configured || "vaultlens") };
}

/** The message shown when no server was found: where it was looked for and the two ways out. */
export function missingServerMessage(command: string): string {
  return (
    `vaultlens: the language server “${command}” was not found on PATH, in ~/.local/bin or in the ` +
    "extension's own storage. Install it there (a Python environment; needs Python 3.10 or newer), " +
    "or point the setting vaultlens.server.path at a vaultlens executable."
  );
}

/** The Python that creates the environment: `vaultlens.server.python` if set, else the first found of the usual names. */
export function findPython(setting: string, host: Host): string | undefined {
  if (setting.trim()) {
    return findExecutable(setting.trim(), host);
  }
  const names = host.platform === "win32" ? ["python", "py", "python3"] : ["python3", "python"];
  for (const name of names) {
    const found = findExecutable(name, host);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/** Whether an install source names something on this machine (a folder or a file) rather than a URL or package name. */
export function isLocalSource(source: string): boolean {
  return /^(~|\.{1,2})([\\/]|$)/.test(source) || path.posix.isAbsolute(source) || /^[A-Za-z]:[\\/]/.test(source) || source.startsWith("\\\\");
}

/**
 * What is wrong with `vaultlens.server.installSource`, or undefined when it can be installed from.
 * `source` has `~` expanded already; `exists` checks a local path.
 */
export function installSourceProblem(source: string, exists: (p: string) => boolean): string | undefined {
  if (!source.trim()) {
    return (
      "vaultlens: to install the server, set vaultlens.server.installSource to where vaultlens comes from: " +
      "a checkout of the vaultlens repository (the folder holding pyproject.toml), a git URL " +
      "(git+https://…/vaultlens.git), or a wheel file. This build of the extension bundles no wheel of the server."
    );
  }
  if (isLocalSource(source) && !exists(source)) {
    return `vaultlens: vaultlens.server.installSource is “${source}”, which does not exist on this machine.`;
  }
  return undefined;
}

/** The version in a vaultlens wheel's file name (`vaultlens-0.4.0-py3-none-any.whl`), as numbers; undefined for another file. */
export function wheelVersion(file: string): number[] | undefined {
  const found = /^vaultlens-(\d+(?:\.\d+)*)(?:[.-]?[A-Za-z][\w.]*)?-py3-none-any\.whl$/.exec(path.basename(file));
  return found ? found[1].split(".").map(Number) : undefined;
}

/**
 * What **Install or update server** installs from: the `vaultlens.server.installSource` setting when set,
 * else the newest vaultlens wheel bundled in the extension (`bundledWheels`: paths of its `server/*.whl`),
 * else "" (nothing to install from: `installSourceProblem` says what to set).
 */
export function chooseInstallSource(configured: string, bundledWheels: readonly string[]): string {
  if (configured.trim()) {
    return configured.trim();
  }
  let best: { file: string; version: number[] } | undefined;
  for (const file of bundledWheels) {
    const version = wheelVersion(file);
    if (version && (!best || compareVersions(version, best.version) > 0 || (compareVersions(version, best.version) === 0 && file > best.file))) {
      best = { file, version };
    }
  }
  return best ? best.file : "";
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return 0;
}

/** One program run of the install (no shell: the arguments go as they are). */
export interface InstallStep {
  title: string;
  command: string;
  args: string[];
}

/** The install into the extension's storage: the steps, and where the server is afterwards. */
export interface InstallPlan {
  venv: string;
  executable: string;
  steps: InstallStep[];
}

/**
 * Install the server into `<storage>/venv`: check the Python version, `python -m venv <venv>`
 * (reused when it is there), then `<venv>/bin/python -m pip install --upgrade <source>` (so the
 * same steps update it).
 */
export function installPlan(source: string, python: string, storageDir: string, platform: string): InstallPlan {
  const venv = managedVenv(storageDir, platform);
  const venvPython = venvProgram(venv, "python", platform);
  return {
    venv,
    executable: venvProgram(venv, "vaultlens", platform),
    steps: [
      {
        title: "Checking the Python version",
        command: python,
        args: [
          "-c",
          "import sys; v = sys.version_info; sys.exit(0 if v >= (3, 10) else " +
            "'vaultlens needs Python 3.10 or newer; this is %d.%d (set vaultlens.server.python)' % v[:2])",
        ],
      },
      { title: "Creating a Python environment", command: python, args: ["-m", "venv", venv] },
      {
        title: `Installing vaultlens from ${source}`,
        command: venvPython,
        args: ["-m", "pip", "install", "--upgrade", "--disable-pip-version-check", source],
      },
    ],
  };
}

/** A command line as a person would type it (for the output channel). */
export function commandLine(step: InstallStep): string {
  const quote = (a: string) => (/^[\w@%+=:,./~-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
  return [step.command, ...step.args].map(quote).join(" ");
}

// --- vaults -------------------------------------------------------------------------------------

/** The nearest folder at or above `dir` that holds `.obsidian/`, else undefined. */
export function obsidianRoot(dir: string, isDir: (p: string) => boolean, pathApi = path): string | undefined {
  let current = pathApi.resolve(dir);
  for (;;) {
    if (isDir(pathApi.join(current, ".obsidian"))) {
      return current;
    }
    const parent = pathApi.dirname(current);
    if (parent === current) {
      return undefined;
    }
    current = parent;
  }
}

/** Whether `child` is `parent` or inside it. */
export function isInside(child: string, parent: string, pathApi = path): boolean {
  const rel = pathApi.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !pathApi.isAbsolute(rel));
}

/**
 * The vault the server puts a page in: the deepest workspace folder holding it, else (a file
 * opened without a folder) the nearest ancestor holding `.obsidian/`, else the file's folder.
 */
export function vaultRootFor(
  file: string,
  folders: readonly string[],
  isDir: (p: string) => boolean,
  pathApi = path,
): string {
  const holding = folders.filter((f) => isInside(file, f, pathApi)).sort((a, b) => b.length - a.length);
  if (holding.length) {
    return holding[0];
  }
  const dir = pathApi.dirname(file);
  return obsidianRoot(dir, isDir, pathApi) ?? dir;
}

/** The vault the server answers from when a request names no page: the first folder by path. */
export function defaultVaultRoot(folders: readonly string[]): string | undefined {
  return [...folders].sort()[0];
}

/**
 * Whether to start the server: the user enabled it, or a workspace folder is a vault (holds
 * `.obsidian/`), or an open Markdown file lies inside a vault.
 */
export function shouldStart(
  enabled: boolean,
  folders: readonly string[],
  markdownFiles: readonly string[],
  isDir: (p: string) => boolean,
): boolean {
  if (enabled) {
    return true;
  }
  if (folders.some((f) => isDir(path.join(f, ".obsidian")))) {
    return true;
  }
  return markdownFiles.some((f) => obsidianRoot(path.dirname(f), isDir) !== undefined);
}
