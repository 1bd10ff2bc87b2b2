-- Headless Neovim test of editors/nvim with the real server, driven by tests/e2e/test_neovim.py:
--
--   VAULTLENS_TEST_VAULT=<copy of examples/vault> VAULTLENS_TEST_PYTHON=<python> PYTHONPATH=<repo> \
--   nvim --headless -u NONE -i NONE --cmd "set rtp^=<repo>/editors/nvim" -c "luafile tests/nvim/test_nvim.lua"
--
-- Opens Home.md with the plugin loaded as a user would (setup(), FileType autocommand), waits for
-- the server, then checks [[ completion, the search function and command, hover and related pages
-- against what a person expects of the example vault. Exits non-zero on any failure.

local failures = {}
local checks, failed = 0, 0

local function log(msg)
  io.stdout:write(msg .. "\n")
  io.stdout:flush()
end

local function check(cond, what, detail)
  checks = checks + 1
  if cond then
    log("ok   " .. what)
  else
    log("FAIL " .. what .. (detail and ("\n     " .. detail) or ""))
    table.insert(failures, what)
    failed = failed + 1
  end
  return cond
end

local function wait_for(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what)
  end
end

local function show(value)
  return vim.inspect(value, { newline = " ", indent = "" })
end

local vault = assert(os.getenv("VAULTLENS_TEST_VAULT"), "VAULTLENS_TEST_VAULT is not set")
local plain = assert(os.getenv("VAULTLENS_TEST_PLAIN"), "VAULTLENS_TEST_PLAIN is not set")
local dendron = assert(os.getenv("VAULTLENS_TEST_DENDRON"), "VAULTLENS_TEST_DENDRON is not set")
local home_dir = assert(os.getenv("VAULTLENS_TEST_HOME"), "VAULTLENS_TEST_HOME is not set")

-- Every message the plugin shows (vim.notify), to check what a person is told.
local messages = {}
vim.notify = function(msg, level)
  table.insert(messages, { msg = msg, level = level })
end
local function said(pattern_plain)
  local out = {}
  for _, m in ipairs(messages) do
    if m.msg:find(pattern_plain, 1, true) then
      table.insert(out, m.msg)
    end
  end
  return out
end
local function flush()
  vim.wait(50, function()
    return false
  end)
end
local python = assert(os.getenv("VAULTLENS_TEST_PYTHON"), "VAULTLENS_TEST_PYTHON is not set")
vault = vim.fn.fnamemodify(vault, ":p"):gsub("/$", "")

local function vaultlens_clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return vim.tbl_filter(function(c)
    return c.name == "vaultlens"
  end, get())
end

local function attached(bufnr)
  for _, c in ipairs(vaultlens_clients()) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then
      return c
    end
  end
  return nil
end

-- A request to the buffer's server, synchronously: the result (or raises with the error).
local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, 20000)
  assert(responses, method .. ": " .. tostring(err))
  for _, response in pairs(responses) do
    if response.err then
      error(method .. ": " .. show(response.err))
    end
    return response.result
  end
  error(method .. ": no answer")
end

-- The completion labels after typing `text` on a fresh last line, in the order a client shows
-- them (by sortText), and the items themselves.
local function complete(bufnr, text)
  local last = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, last - 1, last, false, { text })
  local result = request(bufnr, "textDocument/completion", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = last - 1, character = #text },
  })
  local items = (result and (result.items or result)) or {}
  table.sort(items, function(a, b)
    return (a.sortText or a.label) < (b.sortText or b.label)
  end)
  return vim.tbl_map(function(i)
    return i.label
  end, items), items
end

-- Typing in Insert mode as a person does, with the popup Neovim really shows. Starts Insert mode
-- on a new last line and feeds `steps` one after the other: each step's keys, then a wait (up to
-- 15 s) until its `until_(info)` holds for complete_info(); records complete_info() and the line
-- after each step, then leaves Insert mode. Returns the records (info = nil when a step timed out).
local function type_keys(bufnr, steps)
  vim.api.nvim_set_current_buf(bufnr)
  local records = {}
  local i, started = 0, nil
  local uv = vim.uv or vim.loop
  local function keys(k)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "t", false)
  end
  local timer = uv.new_timer()
  local function next_step()
    i = i + 1
    if i > #steps then
      timer:stop()
      timer:close()
      keys("<Esc>")
      return
    end
    started = uv.now()
    keys(steps[i].keys)
  end
  timer:start(30, 30, vim.schedule_wrap(function()
    if i == 0 or i > #steps then
      return
    end
    local info = vim.fn.complete_info({ "items", "selected", "pum_visible", "mode" })
    local step = steps[i]
    if step.until_(info) then
      records[i] = { info = info, line = vim.api.nvim_get_current_line() }
      next_step()
    elseif uv.now() - started > 15000 then
      records[i] = { info = nil, line = vim.api.nvim_get_current_line() }
      next_step()
    end
  end))
  -- "x!": run the keys now and stay in Insert mode (the timer above feeds <Esc> at the end).
  vim.schedule(next_step)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("Go", true, false, true), "nx!", false)
  return records
end

local function words(info)
  return vim.tbl_map(function(item)
    return item.abbr ~= "" and item.abbr or item.word
  end, (info and info.items) or {})
end

-- The popup offered for `text` typed after <C-x><C-o>: labels (abbr) in the order shown, and the record.
local function omni(bufnr, text)
  local records = type_keys(bufnr, {
    {
      keys = text .. "<C-x><C-o>",
      until_ = function(info)
        return #info.items > 0
      end,
    },
  })
  local rec = records[1] or {}
  return words(rec.info), rec
end

local function search(query, opts)
  local done, res, err, ctx = false, nil, nil, nil
  require("vaultlens").search(query, opts, function(r, e, c)
    done, res, err, ctx = true, r, e, c
  end)
  wait_for(30000, function()
    return done
  end, "wiki/search " .. query)
  return res, err, ctx
end

local function files(result)
  return vim.tbl_map(function(h)
    return h.file
  end, (result and result.hits) or {})
end

-- Extract to a new page (refactor.extract, issue 21): the cursor on a heading of Composting.md,
-- the action applied as Neovim applies any workspace edit; the link left behind and the block
-- reference from Soil Health.md follow the moved section to its new page.
local function extract_step()
  local page = vault .. "/garden/Composting.md"
  vim.cmd("edit " .. vim.fn.fnameescape(page))
  local bufnr = vim.api.nvim_get_current_buf()
  wait_for(15000, function()
    return attached(bufnr) ~= nil
  end, "the server to attach to Composting.md")
  local client = attached(bufnr)
  local at = { line = 20, character = 3 } -- "## Greens and browns"
  local actions = request(bufnr, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = at, ["end"] = at },
    context = { diagnostics = {}, only = { "refactor.extract" } },
  })
  check(actions and #actions == 1 and actions[1].kind == "refactor.extract",
    "a heading offers one refactor.extract action", show(actions))
  if not (actions and actions[1] and actions[1].edit) then
    return
  end
  check(actions[1].title:find("inbox/Greens and browns.md", 1, true) ~= nil, "it names the new page in inbox/", actions[1].title)
  vim.lsp.util.apply_workspace_edit(actions[1].edit, client.offset_encoding)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 18, 23, false)
  check(lines[3] == "[[Greens and browns]]" and lines[5] == "## Turning and moisture",
    "the section is replaced by a link to the new page", show(lines))
  local new = vim.fn.bufnr(vault .. "/inbox/Greens and browns.md")
  local moved = new > 0 and vim.api.nvim_buf_get_lines(new, 0, -1, false) or {}
  check(moved[1] == "## Greens and browns" and table.concat(moved, "\n"):find("slimy heap needs more browns. ^green-brown-ratio", 1, true) ~= nil,
    "the new page holds the section", show(moved))
  local soil = vim.fn.bufnr(vault .. "/garden/Soil Health.md")
  local soil_text = soil > 0 and table.concat(vim.api.nvim_buf_get_lines(soil, 0, -1, false), "\n") or ""
  check(soil_text:find("[[Greens and browns#^green-brown-ratio]]", 1, true) ~= nil,
    "the block reference from Soil Health.md follows the block to the new page", soil_text)
end

local function main()
  -- As a user's config would: filetype plugins on, the plugin's plugin/ file sourced, setup().
  vim.cmd("filetype plugin on")
  vim.cmd("runtime! plugin/vaultlens.lua")
  check(vim.fn.exists(":VaultlensSearch") == 2, "plugin/vaultlens.lua defines :VaultlensSearch")
  check(vim.fn.exists(":VaultlensRelated") == 2, "plugin/vaultlens.lua defines :VaultlensRelated")

  local vl = require("vaultlens")
  vl.setup({
    cmd = { python, "-m", "vaultlens.lsp", "lsp" },
    -- Passed as initializationOptions and through workspace/configuration: completion shows 4 pages.
    settings = { completion = { limit = 4 } },
  })
  check(vl.find_root(vault .. "/ai/rag/graph-rag.md") == vault, "the vault root is found from a page by .obsidian")

  -- A page in the home folder, with no marker above it: no server, and the user is told why.
  vim.env.HOME = home_dir
  vim.cmd("cd " .. vim.fn.fnameescape(home_dir))
  vim.cmd("edit " .. vim.fn.fnameescape(home_dir .. "/todo.md"))
  local todo = vim.api.nvim_get_current_buf()
  flush()
  check(attached(todo) == nil and #vaultlens_clients() == 0, "a page in the home folder starts no server")
  local why = said("no vault for ~/todo.md")
  check(#why == 1, "the user is told once why ~/todo.md has no vault", show(messages))
  check(why[1] and why[1]:find("root_markers", 1, true) ~= nil and why[1]:find("home folder", 1, true) ~= nil,
    "the message says the home folder is too wide and names root_markers", why[1])
  vim.cmd("VaultlensSearch tomatoes")
  flush()
  local failed_search = said("search failed")
  check(#failed_search == 1 and failed_search[1]:find("root_markers", 1, true) ~= nil,
    ":VaultlensSearch there says why there is no server and names root_markers", show(failed_search))
  local info = table.concat(vl.info(todo), "\n")
  check(info:find("no vault for ~/todo.md", 1, true) ~= nil and info:find("root_markers: .obsidian", 1, true) ~= nil,
    "vaultlens.info() (:VaultlensInfo) says why the buffer has no vault", info)
  vim.cmd("bwipeout! " .. todo)

  -- Started in the vault with no page open yet (`cd vault && nvim`): the search starts a server.
  vim.cmd("cd " .. vim.fn.fnameescape(vault))
  local early, early_err = search("tomatoes", { limit = 3 })
  check(early_err == nil and files(early)[1] == "garden/Tomatoes.md", "search works before any page is open", show(early_err or files(early)))

  vim.cmd("edit " .. vim.fn.fnameescape(vault .. "/Home.md"))
  local home = vim.api.nvim_get_current_buf()
  check(vim.bo[home].filetype == "markdown", "Home.md is a markdown buffer")
  wait_for(15000, function()
    return attached(home) ~= nil
  end, "the server to attach to Home.md")
  local client = attached(home)
  check(client.config.root_dir == vault, "the client's root is the vault", client.config.root_dir)
  check(#vaultlens_clients() == 1, "the page joins the server the search started", show(#vaultlens_clients()))

  -- Search first: wiki/search waits until the vault is indexed.
  local res, err, ctx = search("graph rag", { limit = 5 })
  check(err == nil, "search answers without error", show(err))
  check(res and res.command == "search" and res.query == "graph rag", "search returns the wiki/search result object")
  local found = files(res)
  check(found[1] == "ai/rag/graph-rag.md", "search 'graph rag' ranks Graph RAG first", show(found))
  check(
    vim.tbl_contains({ found[2], found[3] }, "ai/rag/Retrieval-Augmented Generation.md"),
    "search 'graph rag' ranks Retrieval-Augmented Generation in the top 3",
    show(found)
  )
  check(ctx and ctx.root == vault, "the search callback gets the vault root", show(ctx))
  local hit = res.hits[1]
  local sum = 0
  for _, m in ipairs(hit.matched) do
    sum = sum + m.points
  end
  check(math.abs(sum - hit.score) < 1e-9, "a hit's breakdown adds up to its score", show(hit))

  -- The same bytes as the command line gives for the same vault and query.
  local out = vim.fn.system({ python, "-m", "vaultlens.lsp", "search", "graph rag", "--vault", vault, "--json", "--limit", "5" })
  check(vim.v.shell_error == 0, "vaultlens search --json runs", out)
  local cli = vim.json.decode(out, { luanil = { object = true } })
  check(vim.deep_equal(cli, res), "search() returns exactly what vaultlens search --json prints", show(cli) .. "\n     " .. show(res))

  local compost = files(search("compost", { limit = 3 }))
  check(compost[1] == "garden/Composting.md", "search 'compost' ranks Composting first", show(compost))
  local gardened = search("soil", { folder = "garden", limit = 10 })
  check(#gardened.hits > 0, "search with a folder filter finds pages")
  check(vim.tbl_isempty(vim.tbl_filter(function(f)
    return f:sub(1, 7) ~= "garden/"
  end, files(gardened))), "search with folder = 'garden' keeps to garden/", show(files(gardened)))

  -- [[ completion, ranked as a person would expect.
  vim.api.nvim_buf_set_lines(home, -1, -1, false, { "" })
  local labels, items = complete(home, "See [[graph")
  check(labels[1] == "Graph RAG", "[[graph offers Graph RAG first", show(labels))
  -- (only pages whose names match are offered: "[[r" names seven of them)
  local limited = complete(home, "See [[r")
  check(#limited == 4, "completion.limit = 4 from setup({ settings }) reaches the server", show(limited))
  local doc = items[1] and items[1].documentation
  doc = type(doc) == "table" and doc.value or doc or ""
  check(doc:find("| channel | term | field | hits | points |", 1, true) ~= nil, "the completion documentation holds the breakdown table", doc)
  check(doc:find("| title-term | graph |", 1, true) ~= nil, "the breakdown names the title-term match", doc)
  check(items[1] and items[1].detail and items[1].detail:find("ai/rag/graph-rag.md", 1, true) ~= nil, "the completion detail has the path", show(items[1] and items[1].detail))
  labels = complete(home, "[[tom")
  check(labels[1] == "Tomatoes", "[[tom offers Tomatoes first", show(labels))
  labels = complete(home, "Read [[retrieval aug")
  check(labels[1] == "Retrieval-Augmented Generation", "[[retrieval aug offers Retrieval-Augmented Generation first", show(labels))
  labels = complete(home, "[[att")
  check(labels[1] == "Attention" and labels[2] == "Attention Is All You Need", "[[att offers Attention, then Attention Is All You Need", show(labels))
  labels = complete(home, "[[compo")
  check(labels[1] == "Composting", "[[compo offers Composting first", show(labels))

  -- <C-x><C-o> as typed in Neovim: the popup holds the server's pages in its order, whatever the case.
  vim.o.completeopt = "menuone,noselect"
  vim.o.showmode = false
  vim.opt.shortmess:append("c")
  check(vim.bo[home].omnifunc == "v:lua.require'vaultlens'.omnifunc", "omnifunc is the plugin's [[ completion (not HTML tags)", vim.bo[home].omnifunc)
  local shown, rec = omni(home, "[[emb")
  check(shown[1] == "Embeddings", "<C-x><C-o> after [[emb (lower case) offers Embeddings first", show(shown))
  check(rec.info and rec.info.pum_visible == 1, "the completion popup is visible", show(rec.info))
  check(vim.deep_equal(shown, (complete(home, "[[emb"))), "the popup shows the server's items in the server's order", show(shown))
  shown = omni(home, "See [[retrieval aug")
  check(shown[1] == "Retrieval-Augmented Generation", "<C-x><C-o> after [[retrieval aug offers Retrieval-Augmented Generation", show(shown))
  shown = omni(home, "[[vector d")
  check(shown[1] == "Vector Databases", "<C-x><C-o> after [[vector d offers Vector Databases", show(shown))
  shown = omni(home, "[[TOMA")
  check(shown[1] == "Tomatoes", "<C-x><C-o> after [[TOMA (upper case) offers Tomatoes", show(shown))
  -- Typing on with the popup open asks the server again; <C-n> then <C-y> inserts the link.
  local narrowed = complete(home, "[[compo")
  check(not vim.deep_equal(narrowed, (complete(home, "[[co"))), "the server offers other pages for [[compo than for [[co")
  local records = type_keys(home, {
    { keys = "[[co<C-x><C-o>", until_ = function(info) return #info.items > 0 end },
    { keys = "mpo", until_ = function(info) return vim.deep_equal(words(info), narrowed) end },
    { keys = "<C-n><C-y>", until_ = function(info) return info.pum_visible == 0 end },
  })
  check(records[1] and records[1].info ~= nil, "[[co<C-x><C-o> opens the popup", show(records[1]))
  check(records[2] and records[2].info ~= nil, "typing on to [[compo shows the server's pages for [[compo", show(records[2]))
  check(records[3] and records[3].line == "[[" .. narrowed[1] .. "]]", "<C-n><C-y> inserts the first page's link, closed", show(records[3]))

  -- Daily notes: [[today completes to today's note in the vault's format (YYYY-MM-DD, no
  -- .obsidian/daily-notes.json here), from the local date as the server reads it.
  local daily_labels, daily_items = complete(home, "[[today")
  check(daily_labels[1] == "today", "[[today offers today's daily note first", show(daily_labels))
  check(daily_items[1] and daily_items[1].textEdit.newText == os.date("%Y-%m-%d") .. "]]", "[[today inserts today's date as the link", show(daily_items[1]))

  -- Block references: choosing a paragraph of this page adds its ^id at the paragraph's end
  -- (the item's additionalTextEdits, applied by the plugin's CompleteDone).
  local before_lines = vim.api.nvim_buf_get_lines(home, 0, -1, false)
  local para_row
  for i, line in ipairs(before_lines) do
    if line:find("that reward good inputs", 1, true) then
      para_row = i
    end
  end
  check(para_row ~= nil, "Home.md has the paragraph about patient systems")
  local block_records = type_keys(home, {
    { keys = "[[#^patient<C-x><C-o>", until_ = function(info) return #info.items > 0 end },
    { keys = "<C-n><C-y>", until_ = function(info) return info.pum_visible == 0 end },
  })
  flush()
  local linked = block_records[2] and block_records[2].line or ""
  local block_id = linked:match("^%[%[#%^([%w%-]+)%]%]$")
  check(block_id ~= nil, "choosing the paragraph inserts [[#^id]]", show(block_records))
  local para = vim.api.nvim_buf_get_lines(home, para_row - 1, para_row, false)[1] or ""
  check(block_id ~= nil and para:sub(-(#block_id + 2)) == " ^" .. block_id, "the paragraph gets ^id in the same edit", para)
  vim.api.nvim_buf_set_lines(home, 0, -1, false, before_lines)


  local lines = vim.api.nvim_buf_get_lines(home, 0, -1, false)
  local row, col
  for i, line in ipairs(lines) do
    local s = line:find("[[Graph RAG]]", 1, true)
    if s then
      row, col = i - 1, s + 2
      break
    end
  end
  check(row ~= nil, "Home.md links [[Graph RAG]]")
  local hover = request(home, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(home) },
    position = { line = row, character = col },
  })
  local text = hover and hover.contents and (hover.contents.value or hover.contents) or ""
  text = type(text) == "string" and text or show(text)
  check(text:find("### Graph RAG", 1, true) ~= nil, "the hover names the page", text)
  check(text:find("`ai/rag/graph-rag.md`", 1, true) ~= nil, "the hover gives the path", text)
  check(text:find("**Related pages**", 1, true) ~= nil, "the hover lists related pages", text)
  check(text:find("| Retrieval-Augmented Generation | ", 1, true) ~= nil, "the related pages include Retrieval-Augmented Generation", text)
  check(text:find("links here", 1, true) ~= nil, "the related pages give their reasons", text)

  -- Unlinked mentions: the lens on Courgettes, the hint in Watering Schedule, "Link mention" applied.
  vim.cmd("edit " .. vim.fn.fnameescape(vault .. "/garden/Courgettes.md"))
  local courgettes = vim.api.nvim_get_current_buf()
  wait_for(15000, function()
    return attached(courgettes) ~= nil
  end, "the server to attach to Courgettes.md")
  local lenses = request(courgettes, "textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(courgettes) } })
  local lens_titles = vim.tbl_map(function(l) return l.command and l.command.title or "" end, lenses or {})
  check(vim.tbl_contains(lens_titles, "1 unlinked mention"), "Courgettes.md has the lens \"1 unlinked mention\"", show(lens_titles))
  vim.cmd("edit " .. vim.fn.fnameescape(vault .. "/garden/Watering Schedule.md"))
  local watering = vim.api.nvim_get_current_buf()
  local hint
  wait_for(15000, function()
    for _, d in ipairs(vim.diagnostic.get(watering)) do
      if d.code == "link-suggestion" and d.message:find("Courgettes", 1, true) then
        hint = d
      end
    end
    return hint ~= nil
  end, "a link-suggestion hint on Courgettes in Watering Schedule.md")
  check(hint.severity == vim.diagnostic.severity.HINT, "the suggestion is a hint", show(hint))
  local at = { line = hint.lnum, character = hint.col }
  local offered = request(watering, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(watering) }, range = { start = at, ["end"] = at },
    context = { diagnostics = {} },
  })
  local link_action
  for _, a in ipairs(offered or {}) do
    if a.title == "Link mention to [[Courgettes]]" then
      link_action = a
    end
  end
  check(link_action ~= nil and link_action.edit ~= nil, "\"Link mention to [[Courgettes]]\" is offered with its edit", show(offered))
  vim.lsp.util.apply_workspace_edit(link_action.edit, attached(watering).offset_encoding or "utf-16")
  local linked_line = vim.api.nvim_buf_get_lines(watering, hint.lnum, hint.lnum + 1, false)[1]
  check(linked_line:find("- **[[Courgettes]] and squash**", 1, true) == 1, "the mention is now a link", linked_line)
  vim.cmd("write")
  local left
  wait_for(15000, function()
    local got = request(watering, "wiki/mentions", { page = "Courgettes" })
    left = got
    return got and got.count == 0
  end, "wiki/mentions to find no unlinked mention of Courgettes once linked")
  check(left.page == "garden/Courgettes.md", "wiki/mentions names the page", show(left))
  vim.cmd("buffer " .. home)

  -- :VaultlensSearch: quickfix list with scores, vim.ui.select, Enter opens the page.
  local picked
  vim.ui.select = function(choices, opts, on_choice)
    picked = { choices = choices, opts = opts }
    on_choice(choices[1])
  end
  vim.cmd("VaultlensSearch graph rag")
  wait_for(20000, function()
    return picked ~= nil
  end, ":VaultlensSearch")
  local first = picked.opts.format_item(picked.choices[1])
  check(first:match("^%s*%d[%d.]*  Graph RAG  %(ai/rag/graph%-rag%.md%)$") ~= nil, "vim.ui.select shows score, title and path", first)
  local qf = vim.fn.getqflist()
  check(#qf == #picked.choices and #qf > 0, "the quickfix list holds every hit", show(#qf))
  check(vim.api.nvim_buf_get_name(qf[1].bufnr) == vault .. "/ai/rag/graph-rag.md", "the first quickfix entry is Graph RAG's file", vim.api.nvim_buf_get_name(qf[1].bufnr))
  check(
    qf[1].text:match("^%d[%d.]*  Graph RAG — ") ~= nil and qf[1].text:find(vl.breakdown(picked.choices[1]), 1, true) ~= nil,
    "the quickfix text gives score, title and breakdown",
    qf[1].text
  )
  local page = vim.api.nvim_get_current_buf()
  check(vim.api.nvim_buf_get_name(page) == vault .. "/ai/rag/graph-rag.md", "choosing a hit opens its page")
  wait_for(10000, function()
    return attached(page) ~= nil
  end, "the server to attach to graph-rag.md")
  check(#vaultlens_clients() == 1, "one server serves the whole vault", show(#vaultlens_clients()))

  -- :VaultlensRelated and require("vaultlens").related().
  local rdone, rres, rerr
  vl.related({}, function(r, e)
    rdone, rres, rerr = true, r, e
  end)
  wait_for(20000, function()
    return rdone
  end, "wiki/related")
  check(rerr == nil, "wiki/related answers without error", show(rerr))
  check(rres and rres.command == "related" and rres.page == "ai/rag/graph-rag.md", "wiki/related names the page", show(rres and rres.page))
  local rfiles = files(rres)
  check(rfiles[1] == "ai/rag/Retrieval-Augmented Generation.md", "Graph RAG's most related page is Retrieval-Augmented Generation", show(rfiles))
  check(rres.hits[1] and (rres.hits[1].reasons or ""):find("links here", 1, true) ~= nil, "related hits carry their reasons", show(rres.hits[1]))

  picked = nil
  vim.cmd("VaultlensRelated")
  wait_for(20000, function()
    return picked ~= nil
  end, ":VaultlensRelated")
  check(picked.choices[1].title == "Retrieval-Augmented Generation", ":VaultlensRelated lists Retrieval-Augmented Generation first")
  qf = vim.fn.getqflist()
  check(#qf > 0 and qf[1].text:find("links here", 1, true) ~= nil, "the related quickfix text gives the reasons", qf[1] and qf[1].text)
  check(vim.api.nvim_buf_get_name(0) == vault .. "/ai/rag/Retrieval-Augmented Generation.md", "choosing a related page opens it")
  check(#said("using ") == 0, "a vault with .obsidian gets no message about its folder", show(messages))

  -- A plain notes folder (no .obsidian, no .git): the topmost folder of Markdown pages is the vault.
  vim.cmd("edit " .. vim.fn.fnameescape(plain .. "/ai/rag/graph-rag.md"))
  local plain_page = vim.api.nvim_get_current_buf()
  wait_for(15000, function()
    return attached(plain_page) ~= nil
  end, "the server to attach to a page of a folder without .obsidian")
  check(attached(plain_page).config.root_dir == plain, "a folder without markers: its top folder of pages is the vault", attached(plain_page).config.root_dir)
  flush()
  local using = said("using " .. plain .. " as the vault")
  check(#using == 1 and using[1]:find("topmost of the folders holding Markdown pages", 1, true) ~= nil and using[1]:find("root_markers", 1, true) ~= nil,
    "the chosen folder is said once, with how it was chosen and how to choose another", show(messages))
  vim.cmd("edit " .. vim.fn.fnameescape(plain .. "/garden/Tomatoes.md"))
  local plain_tomatoes = vim.api.nvim_get_current_buf()
  wait_for(15000, function()
    return attached(plain_tomatoes) ~= nil
  end, "the server to attach to garden/Tomatoes.md of the plain folder")
  check(attached(plain_tomatoes).id == attached(plain_page).id, "both pages of the plain folder share one server")
  flush()
  check(#said("using " .. plain .. " as the vault") == 1, "the plain folder's message is not repeated", show(messages))
  local plain_hits = files(search("compost", { limit = 3 }))
  check(plain_hits[1] == "garden/Composting.md", "search works in the plain folder", show(plain_hits))
  shown = omni(plain_tomatoes, "[[emb")
  check(shown[1] == "Embeddings", "<C-x><C-o> after [[emb works in the plain folder", show(shown))
  info = table.concat(vl.info(plain_tomatoes), "\n")
  check(info:find("vault " .. plain .. " (no ", 1, true) ~= nil and info:find("this buffer: in the vault " .. plain, 1, true) ~= nil,
    "vaultlens.info() names the plain folder's vault and how it was chosen", info)

  -- A Dendron workspace: dendron.yml marks the vault folder.
  vim.cmd("edit " .. vim.fn.fnameescape(dendron .. "/notes/garden.tomatoes.md"))
  local dendron_page = vim.api.nvim_get_current_buf()
  wait_for(15000, function()
    return attached(dendron_page) ~= nil
  end, "the server to attach to a Dendron note")
  check(attached(dendron_page).config.root_dir == dendron, "a Dendron workspace: the folder holding dendron.yml is the vault", attached(dendron_page).config.root_dir)
  flush()
  check(#said("using " .. dendron) == 0, "a marked Dendron vault gets no message about its folder", show(messages))
  local dendron_hits = files(search("compost", { limit = 3 }))
  check(dendron_hits[1] == "notes/garden.compost.md", "search works in the Dendron vault", show(dendron_hits))
  shown = omni(dendron_page, "[[tom")
  check(shown[1] == "Tomatoes", "<C-x><C-o> after [[tom works in the Dendron vault", show(shown))

  extract_step()
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  log("FAIL error: " .. tostring(err))
  table.insert(failures, "error")
end
if #failures > 0 or os.getenv("VAULTLENS_TEST_VERBOSE") then
  for _, m in ipairs(messages) do
    log("message: " .. m.msg)
  end
end
log(string.format("nvim: %d passed, %d failed", checks - failed, #failures))
for _, client in ipairs(vaultlens_clients()) do
  if vim.fn.has("nvim-0.11") == 1 then
    client:stop()
  else
    client.stop()
  end
end
vim.wait(2000, function()
  return #vaultlens_clients() == 0
end, 50)
if #failures > 0 then
  vim.cmd("cquit 1")
else
  vim.cmd("qa!")
end
