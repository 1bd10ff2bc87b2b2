-- vaultlens: user commands. The language server starts once require("vaultlens").setup() has run
-- (any command runs setup() with the defaults if it has not).
if vim.g.loaded_vaultlens then
  return
end
vim.g.loaded_vaultlens = true

local function vaultlens()
  local m = require("vaultlens")
  m.ensure_setup()
  return m
end

vim.api.nvim_create_user_command("VaultlensSearch", function(opts)
  vaultlens().search_command(opts.args)
end, { nargs = "*", desc = "vaultlens: search the vault (ranked, explained) into vim.ui.select and the quickfix list" })

vim.api.nvim_create_user_command("VaultlensRelated", function()
  vaultlens().related_command()
end, { nargs = 0, desc = "vaultlens: pages related to the current page" })

vim.api.nvim_create_user_command("VaultlensRestart", function()
  vaultlens().restart()
end, { nargs = 0, desc = "vaultlens: restart the language server" })

vim.api.nvim_create_user_command("VaultlensInfo", function()
  vaultlens().info_command()
end, { nargs = 0, desc = "vaultlens: the server, the vault folders and how they were chosen" })
