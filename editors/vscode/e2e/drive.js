// Drives the vaultlens extension inside a running Theia host (see ../e2e-host) with Playwright on
// Debian's Chromium: open a page, [[ completion, hover on a link, "Search wiki". Screenshots go to
// the folder given. Usage: node drive.js URL WORKSPACE SHOTS_DIR. Exit 0 only if every check held.
"use strict";
const path = require("path");
const { chromium } = require(path.join(__dirname, "..", "e2e-host", "node_modules", "playwright-core"));

const [url, workspace, shots] = process.argv.slice(2);
const chrome = process.env.CHROMIUM || "/usr/bin/chromium";

// Monaco renders spaces as no-break spaces.
const nbsp = (text) => text.replace(/\u00a0/g, " ");

function check(ok, what) {
  if (!ok) throw new Error("check failed: " + what);
  console.log("ok: " + what);
}

(async () => {
  const browser = await chromium.launch({ executablePath: chrome, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const shot = (name) => page.screenshot({ path: path.join(shots, name + ".png") });
  try {
    await page.goto(url + "/#" + workspace);
    await page.waitForSelector("#theia-app-shell", { timeout: 90000 });
    // The extension is running once its status bar item shows.
    await page.locator("#theia-statusBar").getByText("vaultlens", { exact: true }).waitFor({ timeout: 90000 });
    check(true, "the extension started the server (status bar shows vaultlens)");

    // Open a page with quick open.
    await page.keyboard.press("Control+p");
    await page.locator(".quick-input-widget input").waitFor({ timeout: 20000 });
    await page.keyboard.type("Tomatoes.md");
    // Wait until the list is filtered: the first row is the page (before, it lists recent files).
    await page.locator(".quick-input-list .monaco-list-row").first().filter({ hasText: "Tomatoes.md" }).waitFor({ timeout: 20000 });
    await page.keyboard.press("Enter");
    await page.locator(".p-TabBar-tab, .lm-TabBar-tab", { hasText: "Tomatoes.md" }).first().waitFor({ timeout: 20000 });
    const editor = page.locator(".monaco-editor").first();
    await editor.waitFor({ timeout: 20000 });
    await page.locator("#theia-statusBar").getByText("Markdown", { exact: true }).waitFor({ timeout: 20000 });
    check(true, "Tomatoes.md is open as Markdown");
    await shot("1-page");

    // [[ completion.
    await page.locator(".monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("[[compan", { delay: 60 });
    const rows = page.locator(".suggest-widget .monaco-list-row");
    await rows.first().waitFor({ timeout: 30000 });
    await page.waitForTimeout(500);
    const labels = (await rows.allInnerTexts()).map(nbsp);
    console.log("completion rows:", JSON.stringify(labels.slice(0, 5)));
    check(labels.length > 0 && labels[0].includes("Companion Planting"), "[[compan offers Companion Planting first");
    await shot("2-completion");
    await page.keyboard.press("Enter");
    await page.waitForTimeout(500);
    await page.keyboard.press("End");
    await page.keyboard.type(" zzq");
    const typed = nbsp(await page.locator(".monaco-editor .view-line", { hasText: "zzq" }).first().innerText());
    console.log("the new line:", JSON.stringify(typed));
    check(/^\[\[Companion Planting\]\] zzq$/.test(typed), "accepting the item inserts [[Companion Planting]] on the new line");

    // Hover a link: [[Seed Starting]] on Tomatoes.md's line 21.
    await page.keyboard.press("Control+Home");
    await page.waitForTimeout(500);
    const wiki = page.locator(".monaco-editor .view-line", { hasText: /\[\[Seed.Starting\]\]/ }).first();
    await wiki.waitFor({ timeout: 10000 });
    const text = nbsp(await wiki.innerText());
    const m = /\[\[([^\]|#]+)/.exec(text);
    check(!!m && m[1] === "Seed Starting", "Tomatoes.md shows the link [[Seed Starting]]: " + (m && m[1]));
    // The screen position of the link's text: a DOM range over the characters inside [[ ]].
    const box = await wiki.evaluate((el, name) => {
      // Monaco splits a line into token spans: find the offset in the joined text, then its node.
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      const nodes = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
      const joined = nodes.map((n) => n.textContent).join("").replace(/\u00a0/g, " ");
      let at = joined.indexOf("[[" + name);
      if (at < 0) return null;
      at += 3;
      for (const node of nodes) {
        if (at < node.textContent.length) {
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, Math.min(at + 2, node.textContent.length));
          const r = range.getBoundingClientRect();
          return { x: r.x, y: r.y, width: r.width, height: r.height };
        }
        at -= node.textContent.length;
      }
      return null;
    }, m[1]);
    check(!!box, "found the link on screen");
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.waitForTimeout(300);
    await page.mouse.move(box.x + 4, box.y + box.height / 2);
    const hover = page.locator(".monaco-hover .hover-contents, .monaco-hover .markdown-hover").first();
    await hover.waitFor({ timeout: 30000 });
    await page.waitForTimeout(800);
    const hoverText = nbsp(await page.locator(".monaco-hover").first().innerText());
    console.log("hover:", JSON.stringify(hoverText.slice(0, 400)));
    check(hoverText.startsWith("Seed Starting") && hoverText.includes("garden/Seed Starting.md"), "the hover names the linked page and its path");
    check(/\d+ backlinks?/.test(hoverText), "the hover counts backlinks");
    check(hoverText.includes("Related pages") && /page\s+score\s+why/.test(hoverText), "the hover has the Related pages breakdown (page, score, why)");
    await shot("3-hover");
    await page.keyboard.press("Escape");
    await page.mouse.move(5, 5);

    // "Search wiki" from the command palette, pick a hit.
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").waitFor({ timeout: 20000 });
    await page.keyboard.type("Search wiki");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "Search wiki" }).first().waitFor({ timeout: 20000 });
    await page.keyboard.press("Enter");
    await page.locator(".quick-input-widget .quick-input-title", { hasText: "Search wiki" }).waitFor({ timeout: 20000 });
    await page.keyboard.type("compost", { delay: 40 });
    const hits = page.locator(".quick-input-list .monaco-list-row");
    await hits.first().waitFor({ timeout: 30000 });
    await page.waitForTimeout(1000);
    const hitTexts = (await hits.allInnerTexts()).map(nbsp);
    console.log("search hits:", JSON.stringify(hitTexts.slice(0, 5)));
    check(hitTexts.length > 0 && hitTexts[0].startsWith("Composting"), "Search wiki 'compost' ranks Composting first");
    check(/title-phrase .* \+\d/.test(hitTexts[0]), "the hit explains its score (title-phrase … +N)");
    await shot("4-search");
    await page.keyboard.press("Enter");
    await page.locator(".p-TabBar-tab, .lm-TabBar-tab", { hasText: "Composting.md" }).first().waitFor({ timeout: 20000 });
    check(true, "picking the hit opens Composting.md");
    await shot("5-picked");
  } catch (err) {
    await shot("failure").catch(() => undefined);
    throw err;
  } finally {
    await browser.close();
  }
})().catch((err) => {
  console.error("FAILED:", err && err.message ? err.message : err);
  process.exit(1);
});
