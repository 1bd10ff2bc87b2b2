-- vaultlens for Neovim: attaches `vaultlens lsp` to Markdown buffers inside a vault and adds
-- :VaultlensSearch, :VaultlensRelated, :VaultlensRestart and :VaultlensInfo, plus a Lua API for pickers.
--
--   require("vaultlens").setup({ cmd = { "vaultlens", "lsp" }, settings = { completion = { limit = 30 } } })
--   require("vaultlens").search("graph rag", { limit = 10 }, function(result, err, ctx) ... end)
--
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and newer (vim.lsp.start).

local M = {}

-- The 'omnifunc' the plugin sets: M.omnifunc (see "[[ completion for 'omnifunc'").
local OMNIFUNC = "v:lua.require'vaultlens'.omnifunc"

local NAME = "vaultlens"
local uv = vim.uv or vim.loop

local defaults = {
  -- The server command; `vaultlens` comes from `pipx install .` in a vaultlens clone (see README).
  cmd = { "vaultlens", "lsp" },
  -- Server settings (see README "Configuration"): exclude, completion = { limit, linkStyle },
  -- links = { order }, hover = { related }, diagnostics = { ... }, codeLens = { ... }.
  settings = {},
  -- A buffer belongs to the nearest folder holding the first marker found, else the second...
  root_markers = { ".obsidian", ".vaultlens.toml", "dendron.yml", ".git" },
  -- With no marker above a page: use the topmost folder of Markdown pages above it (see
  -- M.fallback_root; never /, a top-level folder such as /tmp, or your home folder). false: no fallback.
  root_fallback = true,
  filetypes = { "markdown" },
  -- Start the server for matching buffers automatically.
  autostart = true,
  -- Set 'omnifunc' (<C-x><C-o>) to the plugin's [[ completion in attached buffers (where it is
  -- unset or Markdown's HTML tag completion).
  omnifunc = true,
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

local function path_starts(path, root)
  return path == root or path:sub(1, #root + 1) == root .. "/" or path:sub(1, #root + 1) == root .. "\\"
end

-- Whether `path` lies strictly inside `root`.
local function strictly_inside(path, root)
  return path ~= root and path_starts(path, root)
end

-- The folder to start looking from: the path itself when it is a folder, else its folder.
local function start_dir(path)
  local start = vim.fn.fnamemodify(path, ":p")
  if vim.fn.isdirectory(start) == 0 then
    start = vim.fn.fnamemodify(start, ":h")
  end
  start = start:gsub("[/\\]$", "")
  if start == "" then
    start = "/"
  end
  return start
end

local function parent_of(dir)
  local parent = vim.fn.fnamemodify(dir, ":h")
  return parent ~= dir and parent or nil
end

--- The vault folder for a path by its markers: the nearest ancestor holding the first root marker
--- found, trying the markers in order (so a vault's `.obsidian` wins over the repository's `.git`).
--- Returns the folder and the marker, or nil.
function M.find_root(path, markers)
  markers = markers or M.config.root_markers
  if not path or path == "" then
    return nil
  end
  local start = start_dir(path)
  for _, marker in ipairs(markers) do
    local dir = start
    while dir do
      if exists(dir .. "/" .. marker) then
        return dir, marker
      end
      dir = parent_of(dir)
    end
  end
  return nil
end

local function home_dir()
  local home = (uv.os_homedir and uv.os_homedir()) or os.getenv("HOME") or ""
  home = home:gsub("[/\\]$", "")
  return home ~= "" and vim.fn.fnamemodify(home, ":p"):gsub("[/\\]$", "") or nil
end

-- Why the fallback never takes a folder as a vault (nil when it may): /, a top-level folder
-- (/tmp, /home, C:\\Users), the home folder or a folder above it.
local function too_wide(dir)
  if parent_of(dir) == nil then
    return "the file system's root"
  end
  if parent_of(parent_of(dir)) == nil then
    return "a top-level folder"
  end
  local home = home_dir()
  if home ~= nil and dir == home then
    return "your home folder"
  end
  if home ~= nil and strictly_inside(home, dir) then
    return "above your home folder"
  end
  return nil
end

-- Whether a folder holds a Markdown page itself (not in a subfolder).
local function holds_markdown(dir)
  local handle = uv.fs_scandir(dir)
  if not handle then
    return false
  end
  while true do
    local name, kind = uv.fs_scandir_next(handle)
    if not name then
      return false
    end
    if (kind == "file" or kind == "link") and name:lower():match("%.md$") then
      return true
    end
  end
end

--- The vault folder for a path with no root marker above it: starting at the path's folder, the
--- topmost folder of the unbroken run of folders that each hold a Markdown page, never climbing to
--- /, a top-level folder or the home folder (or above it). For notes/ai/rag/x.md it is notes/ when
--- notes/, notes/ai/ and notes/ai/rag/ each hold a page and the folder above notes/ holds none.
--- Returns the folder, or nil and why not.
function M.fallback_root(path)
  if not path or path == "" then
    return nil, "no file"
  end
  local dir = start_dir(path)
  local wide = too_wide(dir)
  if wide then
    return nil, ("%s is %s, too wide to be a vault"):format(vim.fn.fnamemodify(dir, ":~"), wide)
  end
  -- A page's own folder holds it, written yet or not.
  if not path:lower():match("%.md$") and not holds_markdown(dir) then
    return nil, ("%s holds no Markdown page"):format(vim.fn.fnamemodify(dir, ":~"))
  end
  while true do
    local parent = parent_of(dir)
    if not parent or too_wide(parent) or not holds_markdown(parent) then
      return dir
    end
    dir = parent
  end
end

-- How each vault folder was chosen, for the one-time message and :VaultlensInfo.
M.roots = {}
-- Why a buffer has no server (by buffer number), for the commands' messages and :VaultlensInfo.
M.not_attached = {}

-- The markers as words: ".obsidian, .vaultlens.toml, dendron.yml or .git".
local function markers_text()
  local markers = M.config.root_markers or {}
  if #markers < 2 then
    return markers[1] or "root marker"
  end
  return table.concat(markers, ", ", 1, #markers - 1) .. " or " .. markers[#markers]
end

--- The vault for a path: by root marker, else the fallback (when root_fallback is on).
--- Returns the folder and how it was chosen, or nil and why there is none.
function M.resolve_root(path)
  local root, marker = M.find_root(path)
  if root then
    return root, ("the nearest folder holding %s"):format(marker)
  end
  local why_none = ("no %s in its folder or above"):format(markers_text())
  if not M.config.root_fallback then
    return nil, why_none .. " (root_fallback is off)"
  end
  local fallback, why = M.fallback_root(path)
  if fallback then
    return fallback, ("no %s above the page, so the topmost of the folders holding Markdown pages above it"):format(markers_text())
  end
  return nil, why_none .. ", and " .. why
end

-- Say once per vault folder when it came from the fallback (a marker is what people expect).
local function remember_root(root, how)
  if M.roots[root] then
    return
  end
  M.roots[root] = how
  if not M.find_root(root) then
    notify(("using %s as the vault (%s). To choose another, put an empty .vaultlens.toml in the vault folder "
      .. "or set root_markers in setup(); :VaultlensInfo shows this again."):format(root, how))
  end
end


-- --- [[ completion for 'omnifunc' -----------------------------------------------------------------

-- Neovim's own vim.lsp.omnifunc (0.7-0.10) keeps only the items whose text starts with what was
-- typed, case and all, so `[[emb` lost "Embed files". The server has already chosen and ranked
-- the pages for what was typed: these items keep its order and are never filtered by Vim; typing
-- on with the popup open asks the server again (its lists are incomplete by design).

local function item_word(item)
  local text = (item.textEdit and item.textEdit.newText) or item.insertText or item.label
  if item.insertTextFormat == 2 and vim.lsp.util.parse_snippet then
    text = vim.lsp.util.parse_snippet(text)
  end
  return text ~= "" and text or item.label
end

local function byte_col(line, character, encoding)
  if encoding == "utf-8" then
    return math.min(character, #line)
  end
  local ok, col = pcall(vim.str_byteindex, line, character, encoding ~= "utf-32")
  return ok and col or #line
end

--- The complete-items (|complete-items|) for a textDocument/completion result, in the server's
--- order (sortText), each with `equal = 1` so Vim shows them whatever the case typed. Also returns
--- the byte column (0-based) where the replaced text starts: the textEdit's start on `row` (0-based),
--- else `default_col`.
function M.complete_items(result, line, row, default_col, encoding)
  local list = (result and (result.items or result)) or {}
  local order = {}
  for i, item in ipairs(list) do
    order[i] = { item = item, i = i }
  end
  table.sort(order, function(a, b)
    local ka, kb = a.item.sortText or a.item.label, b.item.sortText or b.item.label
    if ka ~= kb then
      return ka < kb
    end
    return a.i < b.i
  end)
  local start
  local items = {}
  for _, entry in ipairs(order) do
    local item = entry.item
    local edit = item.textEdit
    local range = edit and (edit.range or edit.replace or edit.insert)
    if range and range.start.line == row then
      local col = byte_col(line, range.start.character, encoding or "utf-16")
      start = start and math.min(start, col) or col
    end
    local doc = item.documentation
    if type(doc) == "table" then
      doc = doc.value
    end
    table.insert(items, {
      word = item_word(item),
      abbr = item.label,
      kind = vim.lsp.protocol.CompletionItemKind[item.kind] or "",
      menu = item.detail or "",
      info = (type(doc) == "string" and doc ~= "") and doc or " ",
      icase = 1,
      dup = 1,
      empty = 1,
      equal = 1,
      user_data = { nvim = { lsp = { completion_item = item } } },
    })
  end
  return items, start or default_col
end

-- The start column of the word before the cursor, as Vim's keyword rule says (0-based bytes).
local function keyword_start(line_to_cursor)
  return vim.fn.match(line_to_cursor, "\\k*$")
end

local completion_seq = 0

-- Ask the server and show its items (asynchronously: the popup opens when the answer comes).
local function request_completion(bufnr)
  local client = buf_clients(bufnr)[1]
  if not client then
    return false
  end
  completion_seq = completion_seq + 1
  local mine = completion_seq
  local win = vim.api.nvim_get_current_win()
  local pos = vim.api.nvim_win_get_cursor(win)
  local line = vim.api.nvim_get_current_line()
  local params = vim.lsp.util.make_position_params(win, client.offset_encoding)
  call(client, "request", "textDocument/completion", params, function(err, result)
    if mine ~= completion_seq or err or not result then
      return
    end
    -- Only while still typing in the same place (a late answer must not pop up elsewhere).
    if vim.fn.mode():sub(1, 1) ~= "i" or vim.api.nvim_get_current_buf() ~= bufnr then
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if now[1] ~= pos[1] or now[2] ~= pos[2] then
      return
    end
    local items, start = M.complete_items(result, line, pos[1] - 1, keyword_start(line:sub(1, pos[2])), client.offset_encoding)
    vim.fn.complete(start + 1, items)
    vim.b[bufnr].vaultlens_popup = true
  end, bufnr)
  return true
end

--- 'omnifunc' for attached buffers (<C-x><C-o>): the server's [[ link, heading, block and tag
--- completion, case-insensitive and in the server's ranking order. Asynchronous like
--- vim.lsp.omnifunc: it returns -2 and opens the popup when the answer arrives.
function M.omnifunc(findstart, _)
  local bufnr = vim.api.nvim_get_current_buf()
  if findstart == 1 then
    if request_completion(bufnr) then
      return -2
    end
    return -3
  end
  return {}
end

-- A chosen item's other edits (a block id added to this page for a `[[#^` link) and its command
-- (the same, in another page: the server answers with workspace/applyEdit, which Neovim applies).
local function on_complete_done(bufnr)
  local done = vim.v.completed_item
  local data = type(done) == "table" and type(done.user_data) == "table" and done.user_data or nil
  local item = data and data.nvim and data.nvim.lsp and data.nvim.lsp.completion_item
  if type(item) ~= "table" then
    return
  end
  local client = buf_clients(bufnr)[1]
  if not client then
    return
  end
  if type(item.additionalTextEdits) == "table" and #item.additionalTextEdits > 0 then
    vim.lsp.util.apply_text_edits(item.additionalTextEdits, bufnr, client.offset_encoding)
  end
  if type(item.command) == "table" and item.command.command then
    call(client, "request", "workspace/executeCommand", { command = item.command.command, arguments = item.command.arguments }, function() end, bufnr)
  end
end

-- Typing on with the plugin's popup open (nothing selected): ask again for the new text.
local function on_text_changed_p(bufnr)
  if vim.b[bufnr].vaultlens_popup and vim.fn.complete_info({ "selected" }).selected == -1 then
    request_completion(bufnr)
  end
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
  if M.config.omnifunc and (omnifunc == "" or omnifunc == "htmlcomplete#CompleteTags" or omnifunc == "v:lua.vim.lsp.omnifunc") then
    vim.bo[bufnr].omnifunc = OMNIFUNC
  end
  if vim.bo[bufnr].omnifunc == OMNIFUNC and not vim.b[bufnr].vaultlens_completion then
    vim.b[bufnr].vaultlens_completion = true
    vim.api.nvim_create_autocmd("TextChangedP", {
      buffer = bufnr,
      callback = function()
        on_text_changed_p(bufnr)
      end,
      desc = "vaultlens: ask the server again as [[ completion narrows",
    })
    vim.api.nvim_create_autocmd("CompleteDone", {
      buffer = bufnr,
      callback = function()
        vim.b[bufnr].vaultlens_popup = false
        on_complete_done(bufnr)
      end,
      desc = "vaultlens: the [[ completion popup closed (a chosen item's block id is added)",
    })
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
function M.install_command()
  local root = clone_root()
  if not root then
    return "pipx install .", " in the top folder of your vaultlens clone"
  end
  return "pipx install " .. vim.fn.shellescape(root), ""
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
  local why = M.not_attached[vim.api.nvim_get_current_buf()]
  if why then
    return { code = -32002, message = why }
  end
  local cwd = vim.fn.getcwd()
  local _, none = M.resolve_root(cwd)
  return {
    code = -32002,
    message = ("no vaultlens server: open a Markdown page of a vault first (the working directory %s is none: %s; "
      .. "root_markers in setup() says what marks a vault folder)"):format(vim.fn.fnamemodify(cwd, ":~"), tostring(none)),
  }
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
  local root, how = M.resolve_root(name)
  if not root then
    -- Said once per buffer: why this page has no server, and the option that decides it.
    local why = ("no vault for %s: %s. Put an empty .vaultlens.toml in the vault folder, or set "
      .. "root_markers in setup()"):format(vim.fn.fnamemodify(name, ":~"), how)
    if M.not_attached[bufnr] ~= why then
      M.not_attached[bufnr] = why
      notify(why)
    end
    return nil
  end
  M.not_attached[bufnr] = nil
  remember_root(root, how)
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
  local root, how = nil, nil
  if path then
    root, how = M.resolve_root(path)
  end
  if not root then
    root, how = M.resolve_root(vim.fn.getcwd())
  end
  if root then
    remember_root(root, how)
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
    notify(
      what .. " is not supported by this vaultlens server: update it (reinstall vaultlens the way you installed it)",
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

--- What :VaultlensInfo says: the server command, how vault folders are chosen, the running
--- servers with how each vault folder was chosen, and the current buffer's vault (or why none).
function M.info(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local cmd = M.config.cmd or {}
  local exe = cmd[1]
  local lines = {
    ("server: %s%s"):format(table.concat(cmd, " "), (exe and vim.fn.executable(exe) == 0) and "  (not found)" or ""),
    ("root_markers: %s; root_fallback: %s"):format(table.concat(M.config.root_markers or {}, ", "), tostring(M.config.root_fallback)),
  }
  local clients = all_clients()
  if #clients == 0 then
    table.insert(lines, "no server is running")
  end
  for _, client in ipairs(clients) do
    local root = client.config.root_dir or "?"
    local _, how = M.resolve_root(root)
    table.insert(lines, ("vault %s (%s), server id %d"):format(root, M.roots[root] or how or "?", client.id))
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local attached = buf_clients(bufnr)[1]
  if attached then
    table.insert(lines, ("this buffer: in the vault %s"):format(attached.config.root_dir))
  elseif M.not_attached[bufnr] then
    table.insert(lines, "this buffer: " .. M.not_attached[bufnr])
  elseif name == "" then
    table.insert(lines, "this buffer: no file")
  else
    local root, how = M.resolve_root(name)
    table.insert(lines, ("this buffer: not attached (filetype %q); its vault would be %s (%s)"):format(
      vim.bo[bufnr].filetype, tostring(root), tostring(how)))
  end
  return lines
end

--- :VaultlensInfo
function M.info_command()
  vim.api.nvim_echo({ { "vaultlens\n" .. table.concat(M.info(), "\n") } }, true, {})
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
