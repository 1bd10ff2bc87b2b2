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
  "codeLens.enabled",
] as const;

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

/** The error shown when the executable is missing: what was looked for and how to install it. */
export function missingServerMessage(command: string): string {
  return (
    `vaultlens: the language server executable “${command}” was not found. ` +
    "Install it with `pipx install vaultlens` (or `pip install vaultlens`), " +
    "or point the setting vaultlens.server.path at it, then run “vaultlens: Restart server”."
  );
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
