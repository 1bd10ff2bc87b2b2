/**
 * The vaultlens extension: starts `vaultlens lsp` for Markdown in Obsidian-style vaults and adds
 * the commands "vaultlens: Search wiki", "vaultlens: Related pages" and "vaultlens: Restart server".
 *
 * Everything that can be decided without VS Code lives in ./logic.ts (and is unit-tested there).
 */

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ErrorCodes,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

import {
  commandLine,
  chooseInstallSource,
  defaultVaultRoot,
  emptySearchMessage,
  expandHome,
  findPython,
  Hit,
  Host,
  installPlan,
  installSourceProblem,
  InstallStep,
  isLocalSource,
  locateServer,
  needsRestart,
  relatedItem,
  RelatedResult,
  SEARCH_DEBOUNCE_MS,
  SEARCH_LIMIT,
  searchItem,
  SearchResult,
  serverSettings,
  shouldStart,
  vaultRootFor,
} from "./logic";

const SECTION = "vaultlens";
const WIKI_SEARCH = "wiki/search";
const WIKI_RELATED = "wiki/related";

interface HitItem extends vscode.QuickPickItem {
  hit: Hit;
  root: string;
}

const OPEN_TO_SIDE: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon("split-horizontal"),
  tooltip: "Open to the Side",
};
const INSERT_LINK: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon("link"),
  tooltip: "Insert [[link]] at the cursor",
};

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) {
      return false;
    }
    if (process.platform !== "win32") {
      fs.accessSync(p, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

function host(): Host {
  return { platform: process.platform, env: process.env, home: os.homedir(), isFile };
}

function exists(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Whether the user set a key of our section in any scope (a default is not a choice). */
function isSet(key: string): boolean {
  const info = vscode.workspace.getConfiguration(SECTION).inspect(key);
  return [info?.globalValue, info?.workspaceValue, info?.workspaceFolderValue].some((v) => v !== undefined && v !== null && v !== "");
}

function folderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

class Vaultlens implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private readonly output = vscode.window.createOutputChannel("vaultlens");
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  private readonly disposables: vscode.Disposable[] = [];
  private installing: Promise<boolean> | undefined;

  /** `storageDir`: the extension's global storage folder, where it installs the server when asked;
   * `extensionDir`: the extension's own folder (its bundled server wheel is under `server/`). */
  constructor(
    private readonly storageDir: string,
    private readonly extensionDir: string,
  ) {
    this.status.name = "vaultlens";
    this.status.command = "vaultlens.search";
    this.disposables.push(this.output, this.status);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  // --- lifecycle --------------------------------------------------------------------------------

  /** Start the server if this workspace calls for it (a vault, or the user enabled it). */
  async maybeStart(): Promise<void> {
    if (this.client || this.starting) {
      return;
    }
    const enabled = vscode.workspace.getConfiguration(SECTION).get<boolean>("enable", false);
    const markdown = vscode.workspace.textDocuments
      .filter((d) => d.languageId === "markdown" && d.uri.scheme === "file")
      .map((d) => d.uri.fsPath);
    if (shouldStart(enabled, folderPaths(), markdown, isDir)) {
      await this.start();
    }
  }

  /** The running client, starting it first if needed; undefined (after telling the user) if it cannot run. */
  async start(): Promise<LanguageClient | undefined> {
    if (this.client) {
      return this.client;
    }
    if (!this.starting) {
      this.starting = this.launch().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async launch(): Promise<LanguageClient | undefined> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const command = config.get<string>("server.path", "vaultlens") || "vaultlens";
    const args = config.get<string[]>("server.args", ["lsp"]);
    const choice = locateServer(
      { path: command, pathIsSet: isSet("server.path"), storageDir: this.storageDir },
      host(),
      folderPaths()[0],
    );
    if (choice.kind === "missing") {
      this.showMissing(choice.message, choice.canInstall);
      return undefined;
    }
    const executable = choice.executable;
    this.output.appendLine(`vaultlens: starting ${executable} ${args.join(" ")} (found ${choice.from === "setting" ? "by vaultlens.server.path" : choice.from === "extension" ? "in the extension's storage" : "on PATH"})`);
    const serverOptions: ServerOptions = {
      run: { command: executable, args },
      debug: { command: executable, args: [...args, "-vv"] },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "markdown" }],
      initializationOptions: this.settings(),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      markdown: { isTrusted: false, supportHtml: false },
      middleware: {
        workspace: {
          // Answer `workspace/configuration` for our section with the settings the user set,
          // never VS Code's defaults: those would override the vault's .vaultlens.toml.
          configuration: async (params, token, next) => {
            const others = params.items.some((item) => item.section !== SECTION) ? await next(params, token) : [];
            if (others instanceof ResponseError) {
              return others;
            }
            return params.items.map((item, i) => {
              if (item.section !== SECTION) {
                return (others as unknown[])[i] ?? null;
              }
              return this.settings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined);
            });
          },
        },
      },
    };
    const client = new LanguageClient("vaultlens", "vaultlens", serverOptions, clientOptions);
    client.onDidChangeState((e) => this.showState(e.newState));
    try {
      await client.start();
    } catch (err) {
      this.output.appendLine(`vaultlens: the server did not start: ${String(err)}`);
      void vscode.window
        .showErrorMessage(`vaultlens: the server (${executable} ${args.join(" ")}) did not start: ${message(err)}`, "Show Output")
        .then((pick) => pick && this.output.show());
      await client.dispose().catch(() => undefined);
      return undefined;
    }
    this.client = client;
    return client;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.status.hide();
    if (client) {
      try {
        await client.stop();
      } catch {
        // already stopped
      }
      await client.dispose().catch(() => undefined);
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    const client = await this.start();
    if (client) {
      void vscode.window.setStatusBarMessage("vaultlens: server restarted", 3000);
    }
  }

  /** The server settings the user set, for a resource (or the window). */
  settings(scope?: vscode.Uri): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    return serverSettings((key) => config.inspect(key));
  }

  async onConfigurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration(SECTION)) {
      return;
    }
    if (needsRestart((s) => e.affectsConfiguration(s))) {
      if (this.client) {
        await this.restart();
      } else {
        await this.maybeStart();
      }
      return;
    }
    // Settings the server reads: tell it to pull them again through workspace/configuration.
    await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }

  private showState(state: State): void {
    if (state === State.Running) {
      this.status.text = "$(book) vaultlens";
      this.status.tooltip = "vaultlens is running: click to search the wiki";
      this.status.show();
    } else if (state === State.Stopped) {
      this.status.hide();
    }
  }

  private showMissing(text: string, canInstall: boolean): void {
    this.output.appendLine(text);
    const buttons = canInstall ? ["Install", "Open Settings"] : ["Open Settings"];
    void vscode.window.showErrorMessage(text, ...buttons).then(async (pick) => {
      if (pick === "Install") {
        await this.installServer();
      } else if (pick === "Open Settings") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "vaultlens.server");
      }
    });
  }

  /**
   * "vaultlens: Install or update server": a Python environment in the extension's storage with
   * vaultlens from `vaultlens.server.installSource`, then (re)start the server. True when it worked.
   */
  installServer(): Promise<boolean> {
    if (!this.installing) {
      this.installing = this.runInstall().finally(() => {
        this.installing = undefined;
      });
    }
    return this.installing;
  }

  /** The server wheels bundled in the .vsix (`server/*.whl`, put there by `.ci/run`). */
  private async bundledWheels(): Promise<string[]> {
    const folder = path.join(this.extensionDir, "server");
    try {
      return (await fs.promises.readdir(folder)).filter((f) => f.endsWith(".whl")).map((f) => path.join(folder, f));
    } catch {
      return [];
    }
  }

  private async runInstall(): Promise<boolean> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const raw = chooseInstallSource(config.get<string>("server.installSource", "") ?? "", await this.bundledWheels());
    const source = isLocalSource(raw) ? expandHome(raw, os.homedir()) : raw;
    const problem = installSourceProblem(source, exists);
    if (problem) {
      this.output.appendLine(problem);
      const pick = await vscode.window.showErrorMessage(problem, "Open Settings");
      if (pick) {
        await vscode.commands.executeCommand("workbench.action.openSettings", "vaultlens.server.installSource");
      }
      return false;
    }
    const python = findPython(config.get<string>("server.python", "") ?? "", host());
    if (!python) {
      const text =
        "vaultlens: no Python was found to install the server with (python3 or python on PATH). " +
        "Install Python 3.10 or newer, or set vaultlens.server.python to one.";
      this.output.appendLine(text);
      const pick = await vscode.window.showErrorMessage(text, "Open Settings");
      if (pick) {
        await vscode.commands.executeCommand("workbench.action.openSettings", "vaultlens.server.python");
      }
      return false;
    }
    const plan = installPlan(source, python, this.storageDir, process.platform);
    await fs.promises.mkdir(this.storageDir, { recursive: true });
    this.output.appendLine(`vaultlens: installing the server into ${plan.venv}`);
    const failed = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "vaultlens: installing the server", cancellable: false },
      async (progress) => {
        for (const step of plan.steps) {
          progress.report({ message: step.title });
          const result = await this.run(step);
          if (result !== undefined) {
            return { step, result };
          }
        }
        return undefined;
      },
    );
    if (failed) {
      const text = `vaultlens: installing the server failed (${failed.step.title}): ${failed.result}`;
      this.output.appendLine(text);
      void vscode.window.showErrorMessage(text, "Show Output").then((pick) => pick && this.output.show());
      return false;
    }
    this.output.appendLine(`vaultlens: installed ${plan.executable}`);
    void vscode.window.showInformationMessage(`vaultlens: the server is installed (${plan.executable}).`);
    if (isSet("server.path")) {
      void vscode.window.showWarningMessage(
        "vaultlens: the setting vaultlens.server.path is set, so that executable is used, not the one just installed. Remove the setting to use it.",
      );
    }
    await this.restart();
    return true;
  }

  /** Run one install step, its output to the output channel; undefined when it worked, else what went wrong. */
  private run(step: InstallStep): Promise<string | undefined> {
    this.output.appendLine(`$ ${commandLine(step)}`);
    return new Promise((resolve) => {
      let tail = "";
      const child = spawn(step.command, step.args, { env: process.env, windowsHide: true });
      const take = (chunk: Buffer) => {
        const text = chunk.toString();
        this.output.append(text);
        tail = (tail + text).slice(-2000);
      };
      child.stdout.on("data", take);
      child.stderr.on("data", take);
      child.on("error", (err) => resolve(message(err)));
      child.on("close", (code, signal) => {
        if (code === 0) {
          resolve(undefined);
          return;
        }
        const last = tail.trim().split(/\r?\n/).pop() ?? "";
        resolve(`${signal ? `killed by ${signal}` : `exit status ${code}`}${last ? `: ${last}` : ""}`);
      });
    });
  }

  /** The client for a command; offers to enable vaultlens when this workspace is no vault. */
  private async clientForCommand(): Promise<LanguageClient | undefined> {
    if (this.client) {
      return this.client;
    }
    const enabled = vscode.workspace.getConfiguration(SECTION).get<boolean>("enable", false);
    const markdown = vscode.workspace.textDocuments
      .filter((d) => d.languageId === "markdown" && d.uri.scheme === "file")
      .map((d) => d.uri.fsPath);
    if (!shouldStart(enabled, folderPaths(), markdown, isDir)) {
      const pick = await vscode.window.showInformationMessage(
        "vaultlens is not running: no folder of this workspace holds .obsidian/. Enable vaultlens for this workspace?",
        "Enable",
      );
      if (pick !== "Enable") {
        return undefined;
      }
      const target = vscode.workspace.workspaceFolders?.length
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
      await vscode.workspace.getConfiguration(SECTION).update("enable", true, target);
    }
    return this.start();
  }

  // --- commands ---------------------------------------------------------------------------------

  /** "vaultlens: Search wiki": a QuickPick that asks `wiki/search` again as you type. */
  async search(initial?: string): Promise<void> {
    const client = await this.clientForCommand();
    if (!client) {
      return;
    }
    const active = vscode.window.activeTextEditor?.document;
    const folders = folderPaths();
    let uri: string | undefined;
    let root: string | undefined;
    if (active && active.uri.scheme === "file" && active.languageId === "markdown") {
      uri = active.uri.toString();
      root = vaultRootFor(active.uri.fsPath, folders, isDir);
    } else {
      root = defaultVaultRoot(folders);
    }
    if (!root) {
      void vscode.window.showInformationMessage("vaultlens: open a vault folder or one of its pages to search it.");
      return;
    }
    const vaultRoot = root;
    const editor = vscode.window.activeTextEditor;
    const qp = vscode.window.createQuickPick<HitItem>();
    qp.title = "vaultlens: Search wiki";
    qp.placeholder = "Search pages: title, aliases, tags and text, ranked and explained";
    qp.matchOnDescription = false;
    qp.matchOnDetail = false;
    let seq = 0;
    let timer: NodeJS.Timeout | undefined;
    const run = async (query: string): Promise<void> => {
      const mine = ++seq;
      if (!query.trim()) {
        qp.items = [];
        qp.busy = false;
        qp.placeholder = emptySearchMessage("");
        return;
      }
      qp.busy = true;
      try {
        const params: Record<string, unknown> = { query, limit: SEARCH_LIMIT };
        if (uri) {
          params.uri = uri;
        }
        const result = await client.sendRequest<SearchResult>(WIKI_SEARCH, params);
        if (mine !== seq) {
          return; // a newer query is on its way
        }
        // alwaysShow: the server already ranked and filtered; VS Code must not hide hits.
        qp.items = result.hits.map((hit) => ({
          ...searchItem(hit),
          alwaysShow: true,
          buttons: [OPEN_TO_SIDE, INSERT_LINK],
          hit,
          root: vaultRoot,
        }));
        if (!result.hits.length) {
          qp.placeholder = emptySearchMessage(query);
        }
      } catch (err) {
        if (mine === seq) {
          qp.items = [];
          this.output.appendLine(`wiki/search failed: ${message(err)}`);
          void vscode.window.showErrorMessage(`vaultlens: search failed: ${message(err)}`);
        }
      } finally {
        if (mine === seq) {
          qp.busy = false;
        }
      }
    };
    qp.onDidChangeValue((value) => {
      if (timer) {
        clearTimeout(timer);
      }
      timer = setTimeout(() => void run(value), SEARCH_DEBOUNCE_MS);
    });
    openOnPick(qp, editor);
    qp.onDidHide(() => {
      if (timer) {
        clearTimeout(timer);
      }
      seq++;
      qp.dispose();
    });
    const seed = initial ?? selectedText(editor);
    if (seed) {
      qp.value = seed;
      void run(seed);
    }
    qp.show();
  }

  /** "vaultlens: Related pages": the pages most related to the active page. */
  async related(): Promise<void> {
    const doc = vscode.window.activeTextEditor?.document;
    if (!doc || doc.languageId !== "markdown" || doc.uri.scheme !== "file") {
      void vscode.window.showInformationMessage("vaultlens: open a page of the vault to see its related pages.");
      return;
    }
    const client = await this.clientForCommand();
    if (!client) {
      return;
    }
    let result: RelatedResult;
    try {
      result = await client.sendRequest<RelatedResult>(WIKI_RELATED, { uri: doc.uri.toString(), limit: 20 });
    } catch (err) {
      if (err instanceof ResponseError && err.code === ErrorCodes.MethodNotFound) {
        void vscode.window.showErrorMessage(
          "vaultlens: this vaultlens server has no “wiki/related” request. Update it (“vaultlens: Install or update server”, or reinstall the one vaultlens.server.path names), then run “vaultlens: Restart server”. Hovering a link also lists related pages.",
        );
      } else {
        void vscode.window.showErrorMessage(`vaultlens: related pages failed: ${message(err)}`);
      }
      return;
    }
    const name = doc.uri.path.split("/").pop() ?? "this page";
    if (!result.hits.length) {
      void vscode.window.showInformationMessage(`vaultlens: no page is related to ${name} yet.`);
      return;
    }
    const root = vaultRootFor(doc.uri.fsPath, folderPaths(), isDir);
    const editor = vscode.window.activeTextEditor;
    const qp = vscode.window.createQuickPick<HitItem>();
    qp.title = `vaultlens: Related pages of ${result.page ?? name}`;
    qp.placeholder = "Pick a page to open (ranked by links, shared tags, co-citation and titles)";
    qp.matchOnDescription = true;
    qp.items = result.hits.map((hit) => ({ ...relatedItem(hit), buttons: [OPEN_TO_SIDE, INSERT_LINK], hit, root }));
    openOnPick(qp, editor);
    qp.onDidHide(() => qp.dispose());
    qp.show();
  }

  showOutput(): void {
    this.output.show();
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function selectedText(editor: vscode.TextEditor | undefined): string {
  if (!editor || editor.selection.isEmpty) {
    return "";
  }
  const text = editor.document.getText(editor.selection);
  return text.includes("\n") ? "" : text.trim();
}

/** A picker of hits: Enter opens the page, its buttons open it to the side or insert its link. */
function openOnPick(qp: vscode.QuickPick<HitItem>, editor: vscode.TextEditor | undefined): void {
  qp.onDidAccept(() => {
    const item = qp.selectedItems[0] ?? qp.activeItems[0];
    if (item) {
      qp.hide();
      void openHit(item);
    }
  });
  qp.onDidTriggerItemButton((e) => {
    qp.hide();
    if (e.button === INSERT_LINK) {
      void insertLink(editor, e.item.hit.wikilink);
    } else {
      void openHit(e.item, vscode.ViewColumn.Beside);
    }
  });
}

async function openHit(item: HitItem, column?: vscode.ViewColumn): Promise<void> {
  const uri = vscode.Uri.joinPath(vscode.Uri.file(item.root), ...item.hit.file.split("/"));
  try {
    await vscode.window.showTextDocument(uri, { viewColumn: column, preview: column === undefined });
  } catch (err) {
    void vscode.window.showErrorMessage(`vaultlens: could not open ${item.hit.file}: ${message(err)}`);
  }
}

async function insertLink(editor: vscode.TextEditor | undefined, link: string): Promise<void> {
  if (!editor) {
    await vscode.env.clipboard.writeText(link);
    void vscode.window.showInformationMessage(`vaultlens: copied ${link}`);
    return;
  }
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  await editor.edit((edit) => {
    for (const sel of editor.selections) {
      edit.replace(sel, link);
    }
  });
}

let extension: Vaultlens | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const vl = new Vaultlens(context.globalStorageUri.fsPath, context.extensionPath);
  extension = vl;
  context.subscriptions.push(
    vl,
    vscode.commands.registerCommand("vaultlens.search", (query?: string) => vl.search(typeof query === "string" ? query : undefined)),
    vscode.commands.registerCommand("vaultlens.related", () => vl.related()),
    vscode.commands.registerCommand("vaultlens.restart", () => vl.restart()),
    vscode.commands.registerCommand("vaultlens.installServer", () => vl.installServer()),
    vscode.commands.registerCommand("vaultlens.showOutput", () => vl.showOutput()),
    vscode.workspace.onDidChangeConfiguration((e) => vl.onConfigurationChanged(e)),
    vscode.workspace.onDidChangeWorkspaceFolders(() => vl.maybeStart()),
    vscode.workspace.onDidOpenTextDocument((doc) => {
      if (doc.languageId === "markdown") {
        void vl.maybeStart();
      }
    }),
  );
  await vl.maybeStart();
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
  extension = undefined;
}
