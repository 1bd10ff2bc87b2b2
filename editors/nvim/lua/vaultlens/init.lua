-- vaultlens for Neovim: attaches `vaultlens lsp` to Markdown buffers inside a vault and adds
-- :VaultlensSearch, :VaultlensRelated and :VaultlensRestart, plus a Lua API for pickers.
--
--   require("vaultlens").setup({ cmd = { "vaultlens", "lsp" }, settings = { completion = { limit = 30 } } })
--   require("vaultlens").search("graph rag", { limit = 10 }, function(result, err, ctx) ... end)
--
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and newer (vim.lsp.start).

local M = {}

local NAME = "vaultlens"
local uv = vim.uv or vim.loop

local defaults = {
  -- The server command; `vaultlens` comes from `pipx install .` in a vaultlens clone (see README).
  cmd = { "vaultlens", "lsp" },
  -- Server settings (see README "Configuration"): exclude, completion = { limit, linkStyle },
  -- links = { order }, hover = { related }, diagnostics = { ... }, codeLens = { ... }.
  settings = {},
  -- A buffer belongs to the nearest folder holding the first marker found, else the second...
  root_markers = { ".obsidian", ".git" },
  filetypes = { "markdown" },
  -- Start the server for matching buffers automatically.
  autostart = true,
  -- Map K to hover in attached buffers (only where K has no buffer-local mapping yet).
  keymaps = true,
  -- How many hits :VaultlensSearch and :VaultlensRelated ask for.
  limit = 30,
  -- Extra client options, as for vim.lsp.start_client().
  on_attach = nil,
  capabilities = nil,
  cmd_env = nil,
}

M.config = vim.deepcopy(defaults)
local did_setup = false
local augroup = nil

-- --- small helpers -------------------------------------------------------------------------------

-- Scheduled, so that a message from inside an autocommand is not raised as an error in it.
local function notify(msg, level)
  vim.schedule(function()
    vim.notify("vaultlens: " .. msg, level or vim.log.levels.INFO)
  end)
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function is_empty(t)
  return type(t) ~= "table" or next(t) == nil
end

-- Settings as JSON: an empty table must go out as {} (an object), not [].
local function settings_object()
  if is_empty(M.config.settings) then
    return vim.empty_dict()
  end
  return M.config.settings
end

-- Call a client method: `client:name(...)` on Neovim 0.11+, `client.name(...)` before (0.7-0.10).
local has_method_syntax = vim.fn.has("nvim-0.11") == 1
local function call(client, name, ...)
  if has_method_syntax then
    return client[name](client, ...)
  end
  return client[name](...)
end

-- Start a client without attaching a buffer (vim.lsp.start_client is deprecated from 0.11 on).
local function start_client(config)
  if has_method_syntax and vim.lsp.start then
    return vim.lsp.start(config, { attach = false })
  end
  return vim.lsp.start_client(config)
end

local function all_clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local out = {}
  for _, client in ipairs(get()) do
    if client.name == NAME and not call(client, "is_stopped") then
      table.insert(out, client)
    end
  end
  return out
end

local function buf_clients(bufnr)
  local out = {}
  for _, client in ipairs(all_clients()) do
    if vim.lsp.buf_is_attached(bufnr, client.id) then
      table.insert(out, client)
    end
  end
  return out
end

--- The vault folder for a path: the nearest ancestor holding the first root marker found,
--- trying the markers in order (so a vault's `.obsidian` wins over the repository's `.git`).
function M.find_root(path, markers)
  markers = markers or M.config.root_markers
  if not path or path == "" then
    return nil
  end
  local start = vim.fn.fnamemodify(path, ":p")
  if vim.fn.isdirectory(start) == 0 then
    start = vim.fn.fnamemodify(start, ":h")
  end
  start = start:gsub("[/\\]$", "")
  if start == "" then
    start = "/"
  end
  for _, marker in ipairs(markers) do
    local dir = start
    while dir and dir ~= "" do
      if exists(dir .. "/" .. marker) then
        return dir
      end
      local parent = vim.fn.fnamemodify(dir, ":h")
      if parent == dir then
        break
      end
      dir = parent
    end
  end
  return nil
end

local function path_starts(path, root)
  return path == root or path:sub(1, #root + 1) == root .. "/" or path:sub(1, #root + 1) == root .. "\\"
end

-- --- the client ----------------------------------------------------------------------------------

-- Answer workspace/configuration for the section "vaultlens" with the configured settings.
local function on_configuration(_, params, _)
  local out = {}
  for i, item in ipairs((params and params.items) or {}) do
    if item.section == nil or item.section == "" or item.section == NAME then
      out[i] = settings_object()
    else
      out[i] = vim.NIL
    end
  end
  return out
end

local function on_attach(client, bufnr)
  -- Markdown's ftplugin sets HTML tag completion; [[ completion from the server is what a vault wants.
  local omnifunc = vim.bo[bufnr].omnifunc
  if omnifunc == "" or omnifunc == "htmlcomplete#CompleteTags" then
    vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
  end
  if M.config.keymaps and vim.fn.maparg("K", "n", false, true).buffer ~= 1 then
    vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = bufnr, desc = "vaultlens: hover" })
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

local function client_config(root)
  local capabilities = M.config.capabilities or vim.lsp.protocol.make_client_capabilities()
  capabilities = vim.deepcopy(capabilities)
  capabilities.workspace = capabilities.workspace or {}
  capabilities.workspace.configuration = true -- answered by on_configuration (0.7 does not say so)
  return {
    name = NAME,
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = settings_object(),
    settings = { [NAME] = settings_object() },
    capabilities = capabilities,
    handlers = { ["workspace/configuration"] = on_configuration },
    on_attach = on_attach,
    flags = { debounce_text_changes = 80 },
  }
end

local warned_missing = false

-- vaultlens is installed from a clone (it is on no package index); this file is
-- editors/nvim/lua/vaultlens/init.lua of one, unless the plugin was copied out of it.
local SOURCE = debug.getinfo(1, "S").source

--- The clone this plugin lives in, or nil.
local function clone_root()
  if SOURCE:sub(1, 1) ~= "@" then
    return nil
  end
  local root = vim.fn.fnamemodify(vim.fn.resolve(SOURCE:sub(2)), ":p:h:h:h:h:h")
  if vim.fn.filereadable(root .. "/pyproject.toml") == 1 then
    return root
  end
  return nil
end

--- README's install command (`pipx install .` in the clone's top folder) made to run from
--- anywhere: `pipx install '<clone>'`; and where to run it.
function M.install_command(extra)
  local root = clone_root()
  if not root then
    return "pipx install " .. (extra or "") .. ".", " in the top folder of your vaultlens clone"
  end
  return "pipx install " .. (extra or "") .. vim.fn.shellescape(root), ""
end

--- What to say when the server executable is not there: what was looked for and how to install it.
function M.missing_message()
  local exe = (M.config.cmd and M.config.cmd[1]) or "vaultlens"
  local command, where = M.install_command()
  return ("the language server %q was not found: install it with `%s`%s (or uv tool install, or pip install "
    .. "into a virtualenv: see README), or pass cmd = { '/path/to/vaultlens', 'lsp' } to setup()"):format(
    exe,
    command,
    where
  )
end

local function no_server_error()
  local exe = M.config.cmd and M.config.cmd[1]
  if exe and vim.fn.executable(exe) == 0 then
    return { code = -32002, message = M.missing_message() }
  end
  return { code = -32002, message = "no vaultlens server: open a Markdown page of a vault first" }
end

-- Whether the server executable is missing (said once per setup(), with how to install it).
local function executable_missing()
  local exe = M.config.cmd and M.config.cmd[1]
  if exe and vim.fn.executable(exe) == 0 then
    if warned_missing then
      return true
    end
    warned_missing = true
    notify(M.missing_message(), vim.log.levels.ERROR)
    return true
  end
  return false
end

--- The client for a vault root, started if needed (nil when the server cannot start).
function M.client_for_root(root)
  for _, client in ipairs(all_clients()) do
    if client.config.root_dir == root then
      return client
    end
  end
  if executable_missing() then
    return nil
  end
  local id = start_client(client_config(root))
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Attach the server to a buffer if it is a Markdown page inside a vault. Returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  if not vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype) then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  local root = M.find_root(name)
  if not root then
    return nil
  end
  if vim.lsp.start then
    -- Neovim 0.8+: reuses the client whose name and root_dir match.
    if executable_missing() then
      return nil
    end
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local client = M.client_for_root(root)
  if not client then
    return nil
  end
  vim.lsp.buf_attach_client(bufnr, client.id)
  return client.id
end

--- The client that should answer a request about a buffer: attached to it, else one whose vault
--- holds it, else one for the working directory's vault (started if needed), else any running one.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = buf_clients(bufnr)
  if #attached > 0 then
    return attached[1]
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local path = name ~= "" and vim.fn.fnamemodify(name, ":p") or nil
  local clients = all_clients()
  if path then
    for _, client in ipairs(clients) do
      if client.config.root_dir and path_starts(path, client.config.root_dir) then
        return client
      end
    end
  end
  local root = (path and M.find_root(path)) or M.find_root(vim.fn.getcwd())
  if root then
    return M.client_for_root(root)
  end
  return clients[1]
end

-- The `uri` for a request from a buffer: the buffer's page when it lies in the client's vault.
local function request_uri(client, bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= "" and not name:match("^%a[%w+.-]*://") then
    local path = vim.fn.fnamemodify(name, ":p")
    if client.config.root_dir and path_starts(path, client.config.root_dir) then
      return vim.uri_from_fname(path)
    end
  end
  return nil
end

local function request(client, method, params, bufnr, callback)
  local ok = call(client, "request", method, params, function(err, result)
    callback(result, err)
  end, bufnr)
  if ok == false then
    callback(nil, { code = -32603, message = "the server is not running" })
  end
end

-- --- the API -------------------------------------------------------------------------------------

--- Search the vault: `wiki/search` with `query` and `opts` (limit, type, folder, tag, graph, bufnr).
--- `callback(result, err, ctx)` gets the result object {command, vault, query, hits = {...}} (nil
--- on error), the error, and ctx = { root = vault folder, client_id = ... } to make paths absolute.
function M.search(query, opts, callback)
  if type(opts) == "function" then
    callback, opts = opts, {}
  end
  opts = opts or {}
  callback = callback or function() end
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local client = M.client(bufnr)
  if not client then
    callback(nil, no_server_error(), {})
    return
  end
  local params = { query = query or "", limit = opts.limit or M.config.limit }
  for _, key in ipairs({ "type", "folder", "tag", "graph" }) do
    if opts[key] ~= nil then
      params[key] = opts[key]
    end
  end
  params.uri = opts.uri or request_uri(client, bufnr)
  local ctx = { root = client.config.root_dir, client_id = client.id, bufnr = bufnr }
  request(client, "wiki/search", params, bufnr, function(result, err)
    callback(result, err, ctx)
  end)
end

--- Pages related to a page: `wiki/related` for the buffer (`opts.bufnr`, default current).
--- `callback(result, err, ctx)` as for search; result = {command, vault, page, hits}.
function M.related(opts, callback)
  if type(opts) == "function" then
    callback, opts = opts, {}
  end
  opts = opts or {}
  callback = callback or function() end
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local client = M.client(bufnr)
  local uri = client and request_uri(client, bufnr)
  if not client then
    callback(nil, no_server_error(), {})
    return
  end
  if not uri then
    callback(nil, { code = -32002, message = "open a page of a vault to see its related pages" }, {})
    return
  end
  local ctx = { root = client.config.root_dir, client_id = client.id, bufnr = bufnr }
  request(client, "wiki/related", { uri = uri, limit = opts.limit or M.config.limit }, bufnr, function(result, err)
    callback(result, err, ctx)
  end)
end

-- --- formatting (pure; also used by the tests) ---------------------------------------------------

local function number(n)
  if type(n) ~= "number" then
    return tostring(n)
  end
  if n == math.floor(n) then
    return string.format("%d", n)
  end
  return (string.format("%.6f", n):gsub("0+$", ""):gsub("%.$", ""))
end

--- One scoring component in words: `title-term “graph” +5`, `body-term “rag” ×3 +3`.
function M.format_match(m)
  local parts = { m.channel }
  if m.term and m.term ~= "" then
    table.insert(parts, "“" .. m.term .. "”")
  end
  if m.field and m.field ~= "" and m.channel:sub(1, #m.field + 1) ~= m.field .. "-" then
    table.insert(parts, "in " .. m.field)
  end
  if m.via and m.via ~= "" then
    table.insert(parts, "via " .. m.via)
  end
  if (m.hits or 1) > 1 then
    table.insert(parts, "×" .. m.hits)
  end
  table.insert(parts, "+" .. number(m.points))
  return table.concat(parts, " ")
end

--- A hit's score breakdown on one line.
function M.breakdown(hit)
  local parts = {}
  for _, m in ipairs(hit.matched or {}) do
    table.insert(parts, M.format_match(m))
  end
  return table.concat(parts, " · ")
end

local function one_line(text)
  return ((text or ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

--- A hit as one line for vim.ui.select: score, title, path.
function M.format_item(hit)
  return string.format("%5s  %s  (%s)", number(hit.score), hit.title, hit.file)
end

--- Quickfix entries for the hits of a search or related result under a vault root.
function M.quickfix_items(result, root)
  local items = {}
  for _, hit in ipairs((result and result.hits) or {}) do
    local why = hit.reasons or M.breakdown(hit)
    local snippet = one_line(hit.snippet)
    local text = string.format("%s  %s — %s", number(hit.score), hit.title, why)
    if snippet ~= "" then
      text = text .. " — " .. snippet
    end
    table.insert(items, {
      filename = root and (root .. "/" .. hit.file) or hit.file,
      lnum = 1,
      col = 1,
      text = text,
    })
  end
  return items
end

-- --- commands ------------------------------------------------------------------------------------

local function show(result, ctx, title)
  local hits = (result and result.hits) or {}
  local items = M.quickfix_items(result, ctx.root)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  if #hits == 0 then
    notify(title .. ": no pages")
    return
  end
  vim.ui.select(hits, {
    prompt = title,
    kind = "vaultlens",
    format_item = M.format_item,
  }, function(hit)
    if hit then
      vim.cmd("edit " .. vim.fn.fnameescape(ctx.root .. "/" .. hit.file))
    end
  end)
end

local function report(err, what)
  if err.code == -32601 then
    local command, where = M.install_command("--force ")
    notify(
      what .. " is not supported by this vaultlens server: upgrade it (git pull in the clone, then `"
        .. command .. "`" .. where .. ")",
      vim.log.levels.ERROR
    )
  else
    notify(what .. " failed: " .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end
end

--- :VaultlensSearch [query]: ranked hits in vim.ui.select and the quickfix list.
function M.search_command(query)
  local function run(q)
    if not q or q:match("^%s*$") then
      return
    end
    M.search(q, {}, function(result, err, ctx)
      if err then
        report(err, "search")
        return
      end
      show(result, ctx, "vaultlens: " .. q)
    end)
  end
  if query and query ~= "" then
    run(query)
  else
    vim.ui.input({ prompt = "vaultlens search: " }, run)
  end
end

--- :VaultlensRelated: pages related to the current page.
function M.related_command()
  M.related({}, function(result, err, ctx)
    if err then
      report(err, "related pages")
      return
    end
    show(result, ctx, "vaultlens: related to " .. tostring(result.page))
  end)
end

--- :VaultlensRestart: stop the servers and attach new ones to the open pages.
function M.restart()
  local clients = all_clients()
  for _, client in ipairs(clients) do
    call(client, "stop")
  end
  warned_missing = false
  vim.wait(3000, function()
    for _, client in ipairs(clients) do
      if not call(client, "is_stopped") then
        return false
      end
    end
    return true
  end, 50)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      M.attach(bufnr)
    end
  end
end

-- --- setup ---------------------------------------------------------------------------------------

--- Configure and start: `opts` overrides the defaults key by key (all optional).
function M.setup(opts)
  opts = opts or {}
  local config = vim.deepcopy(defaults)
  for key, value in pairs(opts) do
    config[key] = value -- lists such as cmd replace the default whole
  end
  M.config = config
  did_setup = true
  warned_missing = false
  augroup = vim.api.nvim_create_augroup("vaultlens", { clear = true })
  if config.autostart then
    vim.api.nvim_create_autocmd("FileType", {
      group = augroup,
      pattern = config.filetypes,
      callback = function(args)
        M.attach(args.buf)
      end,
      desc = "vaultlens: attach the language server to pages of a vault",
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end
  -- Running servers pick up new settings.
  for _, client in ipairs(all_clients()) do
    call(client, "notify", "workspace/didChangeConfiguration", { settings = { [NAME] = settings_object() } })
  end
  return M
end

--- setup() with the defaults unless it already ran (for the commands).
function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

return M
