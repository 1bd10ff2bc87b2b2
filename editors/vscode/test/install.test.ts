// The one-click install for real: the steps of installPlan run as the extension runs them, into a
// temporary storage folder, from the checkout named by $VAULTLENS_INSTALL_SOURCE (skipped without
// it: it needs Python 3.10+ and pip able to fetch vaultlens's dependencies, ~10 s). For example:
//   VAULTLENS_INSTALL_SOURCE=$PWD/../.. npm test
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";

import { findPython, Host, installPlan, locateServer } from "../src/logic";

const SOURCE = process.env.VAULTLENS_INSTALL_SOURCE;

describe("installing the server into the extension's storage", { skip: SOURCE ? false : "set VAULTLENS_INSTALL_SOURCE to a checkout" }, () => {
  it("creates the venv, installs vaultlens, and then finds and runs it", { timeout: 600_000 }, () => {
    const source = path.resolve(SOURCE ?? ".");
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), "vaultlens-storage-"));
    const isFile = (p: string) => fs.existsSync(p) && fs.statSync(p).isFile();
    // No vaultlens on this PATH, so only the installed one can be found.
    const host: Host = { platform: process.platform, env: { PATH: "/usr/bin:/bin" }, home: storage, isFile };
    const lookup = { path: "vaultlens", pathIsSet: false, storageDir: storage };
    try {
      assert.equal(locateServer(lookup, host).kind, "missing");
      const python = findPython(process.env.VAULTLENS_INSTALL_PYTHON ?? "", host);
      assert.ok(python, "no python3 on /usr/bin:/bin");
      const plan = installPlan(source, python, storage, process.platform);
      for (const step of plan.steps) {
        const run = spawnSync(step.command, step.args, { encoding: "utf8" });
        assert.equal(run.status, 0, `${step.title}: ${run.stderr}`);
      }
      assert.deepEqual(locateServer(lookup, host), { kind: "found", executable: plan.executable, from: "extension" });
      const search = spawnSync(plan.executable, ["search", "tomatoes", "--vault", path.join(source, "examples", "vault"), "--json", "--limit", "1"], {
        encoding: "utf8",
      });
      assert.equal(search.status, 0, search.stderr);
      assert.equal(JSON.parse(search.stdout).hits[0].file, "garden/Tomatoes.md");
    } finally {
      fs.rmSync(storage, { recursive: true, force: true });
    }
  });
});
