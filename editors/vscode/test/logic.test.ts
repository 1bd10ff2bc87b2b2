// Unit tests for the extension's own logic (no VS Code needed): `npm test` runs them with `node --test`.
import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";

import {
  breakdownLine,
  emptySearchMessage,
  commandLine,
  findExecutable,
  findPython,
  formatMatch,
  formatNumber,
  Hit,
  Host,
  chooseInstallSource,
  installPlan,
  installSourceProblem,
  isLocalSource,
  locateServer,
  missingServerMessage,
  needsRestart,
  relatedItem,
  searchItem,
  serverSettings,
  CLIENT_SETTING_KEYS,
  SERVER_SETTING_KEYS,
  shouldStart,
  vaultRootFor,
} from "../src/logic";

// What `vaultlens search "graph rag" --vault examples/vault --json` returns as its first hit.
const GRAPH_RAG: Hit = {
  title: "Graph RAG",
  wikilink: "[[graph-rag|Graph RAG]]",
  file: "ai/rag/graph-rag.md",
  type: "concept",
  score: 31,
  snippet: "# Graph RAG",
  matched: [
    { channel: "title-phrase", term: "", hits: 1, points: 10 },
    { channel: "title-term", term: "graph", hits: 1, points: 5 },
    { channel: "title-term", term: "rag", hits: 1, points: 5 },
    { channel: "tag-term", term: "rag", hits: 1, points: 4 },
    { channel: "body-term", term: "graph", field: "body", hits: 6, points: 3 },
    { channel: "body-term", term: "rag", field: "body", hits: 3, points: 3 },
    { channel: "stem-term", term: "graph", field: "tag", via: "graphs", hits: 1, points: 1 },
  ],
};

describe("QuickPick items", () => {
  it("show the title as the label, score · path · snippet as the description", () => {
    const item = searchItem(GRAPH_RAG);
    assert.equal(item.label, "Graph RAG");
    assert.equal(item.description, "31 · ai/rag/graph-rag.md · # Graph RAG");
  });

  it("put the whole breakdown in the detail line, in the server's order", () => {
    assert.equal(
      searchItem(GRAPH_RAG).detail,
      "title-phrase +10 · title-term “graph” +5 · title-term “rag” +5 · tag-term “rag” +4 · " +
        "body-term “graph” ×6 +3 · body-term “rag” ×3 +3 · stem-term “graph” in tag via graphs +1",
    );
  });

  it("add up to the score they show", () => {
    const points = GRAPH_RAG.matched.reduce((sum, m) => sum + m.points, 0);
    assert.equal(points, GRAPH_RAG.score);
  });

  it("keep a long multi-line snippet on one short line", () => {
    const hit: Hit = { ...GRAPH_RAG, snippet: "first line\n\n  second " + "x".repeat(300) };
    const { description } = searchItem(hit);
    assert.ok(!description.includes("\n"));
    assert.ok(description.startsWith("31 · ai/rag/graph-rag.md · first line second x"));
    assert.ok(description.endsWith("…"));
    assert.ok(description.length < 200);
  });

  it("leave out an empty snippet and an empty breakdown", () => {
    const item = searchItem({ ...GRAPH_RAG, snippet: "", matched: [] });
    assert.equal(item.description, "31 · ai/rag/graph-rag.md");
    assert.equal(item.detail, "");
  });

  it("show a related page's reasons before its breakdown", () => {
    const hit: Hit = {
      title: "Retrieval-Augmented Generation",
      wikilink: "[[Retrieval-Augmented Generation]]",
      file: "ai/rag/Retrieval-Augmented Generation.md",
      type: "concept",
      score: 8,
      snippet: "",
      matched: [
        { channel: "links-to", term: "", hits: 1, points: 4 },
        { channel: "co-cited", term: "", via: "Home, Reranking", hits: 2, points: 2 },
        { channel: "shared-tag", term: "ai/rag", hits: 1, points: 2 },
      ],
      reasons: "linked from here; shares #ai/rag; cited together by 2 pages",
    };
    const item = relatedItem(hit);
    assert.equal(item.label, "Retrieval-Augmented Generation");
    assert.equal(item.description, "8 · ai/rag/Retrieval-Augmented Generation.md");
    assert.equal(
      item.detail,
      "linked from here; shares #ai/rag; cited together by 2 pages — " +
        "links-to +4 · co-cited via Home, Reranking ×2 +2 · shared-tag “ai/rag” +2",
    );
    assert.equal(relatedItem({ ...hit, reasons: undefined }).detail, breakdownLine(hit.matched));
  });

  it("format points as the engine prints them", () => {
    assert.equal(formatNumber(3), "3");
    assert.equal(formatNumber(0.5), "0.5");
    assert.equal(formatNumber(1 / 3), "0.333333");
    assert.equal(formatMatch({ channel: "synonym-term", term: "car", field: "title", via: "automobile", hits: 1, points: 2 }),
      "synonym-term “car” in title via automobile +2");
  });

  it("say what to do when nothing matches", () => {
    assert.equal(emptySearchMessage(""), "Type to search the vault.");
    assert.equal(emptySearchMessage(" zzz "), "No page matches “zzz”.");
  });
});

describe("server settings", () => {
  it("pass only what the user set, nested by section, most specific scope first", () => {
    const set: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }> = {
      "completion.limit": { globalValue: 20, workspaceValue: 30 },
      "completion.linkStyle": { workspaceFolderValue: "title", globalValue: "path" },
      "hover.related": { globalValue: false },
      "diagnostics.unresolvedSeverity": { workspaceValue: "hint" },
      exclude: { workspaceValue: ["templates/"] },
    };
    const settings = serverSettings((key) => ({ defaultValue: "ignored", ...set[key] }));
    assert.deepEqual(settings, {
      exclude: ["templates/"],
      completion: { limit: 30, linkStyle: "title" },
      hover: { related: false },
      diagnostics: { unresolvedSeverity: "hint" },
    });
  });

  it("send every contributed setting that is not the extension's own", () => {
    const manifest = require(path.join(__dirname, "..", "..", "package.json"));
    const contributed = Object.keys(manifest.contributes.configuration.properties).map((k) => k.replace(/^vaultlens\./, ""));
    const own: readonly string[] = CLIENT_SETTING_KEYS;
    const sent: readonly string[] = SERVER_SETTING_KEYS;
    assert.deepEqual(contributed.filter((k) => !own.includes(k)).sort(), [...sent].sort());
  });

  it("send nothing when nothing was set, so .vaultlens.toml decides", () => {
    assert.deepEqual(serverSettings(() => ({ defaultValue: 50 })), {});
    assert.deepEqual(serverSettings(() => undefined), {});
  });

  it("restart the server only for the server's own command line", () => {
    const affects = (changed: string) => (s: string) => changed === s || changed.startsWith(s + ".");
    assert.equal(needsRestart(affects("vaultlens.server.path")), true);
    assert.equal(needsRestart(affects("vaultlens.enable")), true);
    assert.equal(needsRestart(affects("vaultlens.completion.limit")), false);
    assert.equal(needsRestart(affects("vaultlens.trace.server")), false);
  });
});

describe("finding the server executable", () => {
  const posix = (files: string[], env: Record<string, string> = { PATH: "/usr/bin:/opt/tools/bin" }): Host => ({
    platform: "linux",
    env,
    home: "/home/ada",
    isFile: (p) => files.includes(p),
  });

  it("looks the name up on PATH", () => {
    assert.equal(findExecutable("vaultlens", posix(["/opt/tools/bin/vaultlens"])), "/opt/tools/bin/vaultlens");
  });

  it("falls back to ~/.local/bin, where pipx installs", () => {
    assert.equal(findExecutable("vaultlens", posix(["/home/ada/.local/bin/vaultlens"])), "/home/ada/.local/bin/vaultlens");
  });

  it("takes paths as paths, with ~ expanded and relative ones against the workspace", () => {
    const host = posix(["/home/ada/venvs/vl/bin/vaultlens", "/work/wiki/.venv/bin/vaultlens"]);
    assert.equal(findExecutable("~/venvs/vl/bin/vaultlens", host), "/home/ada/venvs/vl/bin/vaultlens");
    assert.equal(findExecutable(".venv/bin/vaultlens", host, "/work/wiki"), "/work/wiki/.venv/bin/vaultlens");
    assert.equal(findExecutable("/nowhere/vaultlens", host), undefined);
  });

  it("tries PATHEXT on Windows", () => {
    const host: Host = {
      platform: "win32",
      env: { PATH: "C:\\Python\\Scripts;C:\\Windows", PATHEXT: ".COM;.EXE" },
      home: "C:\\Users\\ada",
      isFile: (p) => p === "C:\\Python\\Scripts\\vaultlens.exe",
    };
    assert.equal(findExecutable("vaultlens", host), "C:\\Python\\Scripts\\vaultlens.exe");
  });

  it("reports a missing one with where it looked and the two ways out", () => {
    assert.equal(findExecutable("vaultlens", posix([])), undefined);
    const text = missingServerMessage("vaultlens");
    assert.match(text, /PATH, in ~\/\.local\/bin or in the extension's own storage/);
    assert.match(text, /Install it there/);
    assert.match(text, /vaultlens\.server\.path/);
    assert.doesNotMatch(text, /pipx install vaultlens|pip install vaultlens/); // no such package on the index
  });
});

describe("finding or installing the server", () => {
  const STORAGE = "/home/ada/.config/Code/User/globalStorage/vaultlens.vaultlens";
  const MANAGED = `${STORAGE}/venv/bin/vaultlens`;
  const host = (files: string[], platform = "linux", env: Record<string, string> = { PATH: "/usr/bin:/opt/tools/bin" }): Host => ({
    platform,
    env,
    home: "/home/ada",
    isFile: (p) => files.includes(p),
  });
  const lookup = (over: Partial<{ path: string; pathIsSet: boolean }> = {}) => ({
    path: "vaultlens",
    pathIsSet: false,
    storageDir: STORAGE,
    ...over,
  });

  it("uses the server the extension installed, before one on PATH", () => {
    assert.deepEqual(locateServer(lookup(), host([MANAGED, "/usr/bin/vaultlens"])), {
      kind: "found",
      executable: MANAGED,
      from: "extension",
    });
  });

  it("finds vaultlens on PATH and in ~/.local/bin", () => {
    assert.deepEqual(locateServer(lookup(), host(["/opt/tools/bin/vaultlens"])), {
      kind: "found",
      executable: "/opt/tools/bin/vaultlens",
      from: "PATH",
    });
    const local = locateServer(lookup(), host(["/home/ada/.local/bin/vaultlens"]));
    assert.equal(local.kind === "found" && local.executable, "/home/ada/.local/bin/vaultlens");
  });

  it("offers to install when there is none", () => {
    const choice = locateServer(lookup(), host([]));
    assert.equal(choice.kind, "missing");
    assert.equal(choice.kind === "missing" && choice.canInstall, true);
    assert.equal(choice.kind === "missing" && choice.message, missingServerMessage("vaultlens"));
  });

  it("uses a vaultlens.server.path the user set alone, and says when it is wrong", () => {
    const set = lookup({ path: "~/venvs/vl/bin/vaultlens", pathIsSet: true });
    assert.deepEqual(locateServer(set, host(["/home/ada/venvs/vl/bin/vaultlens", MANAGED])), {
      kind: "found",
      executable: "/home/ada/venvs/vl/bin/vaultlens",
      from: "setting",
    });
    const wrong = locateServer(lookup({ path: "/nowhere/vaultlens", pathIsSet: true }), host([MANAGED, "/usr/bin/vaultlens"]));
    assert.equal(wrong.kind, "missing");
    assert.equal(wrong.kind === "missing" && wrong.canInstall, false);
    assert.match(wrong.kind === "missing" ? wrong.message : "", /vaultlens\.server\.path is “\/nowhere\/vaultlens”, and there is no such executable/);
  });

  it("finds the server of the extension's environment on Windows", () => {
    const store = "C:\\Users\\ada\\AppData\\Roaming\\Code\\User\\globalStorage\\vaultlens.vaultlens";
    const exe = `${store}\\venv\\Scripts\\vaultlens.exe`;
    assert.deepEqual(locateServer({ path: "vaultlens", pathIsSet: false, storageDir: store }, host([exe], "win32", { PATH: "C:\\Windows" })), {
      kind: "found",
      executable: exe,
      from: "extension",
    });
  });

  it("finds Python: the setting, else python3, else python", () => {
    assert.equal(findPython("", host(["/usr/bin/python3", "/usr/bin/python"])), "/usr/bin/python3");
    assert.equal(findPython("", host(["/usr/bin/python"])), "/usr/bin/python");
    assert.equal(findPython("/opt/py312/bin/python3.12", host(["/opt/py312/bin/python3.12", "/usr/bin/python3"])), "/opt/py312/bin/python3.12");
    assert.equal(findPython("/opt/none/python", host(["/usr/bin/python3"])), undefined);
    assert.equal(findPython("", host([])), undefined);
  });

  it("installs the setting's source, else the newest bundled wheel", () => {
    const bundled = [
      "/ext/server/vaultlens-0.9.0-py3-none-any.whl",
      "/ext/server/vaultlens-0.10.1-py3-none-any.whl",
      "/ext/server/vaultlens-0.10.0-py3-none-any.whl",
      "/ext/server/notes.txt",
      "/ext/server/other-9.0-py3-none-any.whl",
    ];
    assert.equal(chooseInstallSource("", bundled), "/ext/server/vaultlens-0.10.1-py3-none-any.whl");
    assert.equal(chooseInstallSource("  ", bundled), "/ext/server/vaultlens-0.10.1-py3-none-any.whl");
    assert.equal(chooseInstallSource(" ~/src/vaultlens ", bundled), "~/src/vaultlens");
    assert.equal(chooseInstallSource("", ["/ext/server/vaultlens-1.0.dev0-py3-none-any.whl", "/ext/server/vaultlens-0.2-py3-none-any.whl"]),
      "/ext/server/vaultlens-1.0.dev0-py3-none-any.whl");
    assert.equal(chooseInstallSource("", []), "");
    assert.equal(chooseInstallSource("", ["/ext/server/notes.txt"]), "");
  });

  it("needs an install source, and a local one that exists", () => {
    const none = installSourceProblem("", () => true);
    assert.match(none ?? "", /set vaultlens\.server\.installSource/);
    assert.match(none ?? "", /checkout of the vaultlens repository.*git URL.*wheel file/);
    assert.equal(installSourceProblem("/src/vaultlens", (p) => p === "/src/vaultlens"), undefined);
    assert.match(installSourceProblem("/src/gone", () => false) ?? "", /“\/src\/gone”, which does not exist/);
    assert.equal(installSourceProblem("git+https://example.org/vaultlens.git", () => false), undefined);
    assert.equal(installSourceProblem("vaultlens==0.1.0", () => false), undefined);
    assert.equal(isLocalSource("~/src/vaultlens"), true);
    assert.equal(isLocalSource("./vaultlens"), true);
    assert.equal(isLocalSource("C:\\src\\vaultlens"), true);
    assert.equal(isLocalSource("git+https://example.org/vaultlens.git"), false);
  });

  it("installs into a venv in the extension's storage with that venv's pip", () => {
    const plan = installPlan("/src/vaultlens", "/usr/bin/python3", STORAGE, "linux");
    assert.equal(plan.venv, `${STORAGE}/venv`);
    assert.equal(plan.executable, MANAGED);
    assert.deepEqual(
      plan.steps.map((s) => [s.command, ...s.args].slice(0, 3)),
      [
        ["/usr/bin/python3", "-c", plan.steps[0].args[1]],
        ["/usr/bin/python3", "-m", "venv"],
        [`${STORAGE}/venv/bin/python`, "-m", "pip"],
      ],
    );
    assert.deepEqual(plan.steps[1].args, ["-m", "venv", `${STORAGE}/venv`]);
    assert.deepEqual(plan.steps[2].args.slice(2), ["install", "--upgrade", "--disable-pip-version-check", "/src/vaultlens"]);
    assert.equal(commandLine(plan.steps[1]), `/usr/bin/python3 -m venv ${STORAGE}/venv`);
    assert.match(commandLine(plan.steps[0]), /^\/usr\/bin\/python3 -c 'import sys; .*'$/);
    const win = installPlan("C:\\src\\vaultlens", "C:\\Python312\\python.exe", "C:\\store", "win32");
    assert.equal(win.executable, "C:\\store\\venv\\Scripts\\vaultlens.exe");
    assert.equal(win.steps[2].command, "C:\\store\\venv\\Scripts\\python.exe");
  });
});

describe("vaults", () => {
  const dirs = new Set(["/notes/.obsidian", "/work/.obsidian"].map((p) => path.resolve(p)));
  const isDir = (p: string) => dirs.has(path.resolve(p));

  it("put a page in the deepest workspace folder that holds it, as the server does", () => {
    assert.equal(vaultRootFor("/work/wiki/ai/x.md", ["/work", "/work/wiki"], isDir), "/work/wiki");
    assert.equal(vaultRootFor("/work/a.md", ["/work", "/work/wiki"], isDir), "/work");
  });

  it("put a page opened without a folder in the nearest vault above it, else its own folder", () => {
    assert.equal(vaultRootFor(path.resolve("/notes/garden/Tomatoes.md"), [], isDir), path.resolve("/notes"));
    assert.equal(vaultRootFor(path.resolve("/tmp/loose/a.md"), [], isDir), path.resolve("/tmp/loose"));
  });

  it("start the server in a vault, for a page inside one, or when enabled", () => {
    assert.equal(shouldStart(false, ["/notes"], [], isDir), true);
    assert.equal(shouldStart(false, ["/code"], [path.resolve("/notes/a/b.md")], isDir), true);
    assert.equal(shouldStart(false, ["/code"], [path.resolve("/code/README.md")], isDir), false);
    assert.equal(shouldStart(true, ["/code"], [], isDir), true);
  });
});
