-- agentd as an ACP agent in CodeCompanion.nvim (https://codecompanion.olimorris.dev).
-- CodeCompanion starts agentd itself and speaks ACP with it over stdio. The adapter extends the built-in
-- "goose" ACP adapter, which is a plain ACP agent with no vendor login, and swaps in agentd's command.
-- Put this in your Neovim config (e.g. ~/.config/nvim/lua/plugins/codecompanion.lua as the lazy.nvim `config`
-- function, or straight into init.lua) after CodeCompanion is installed. See README.md next to this file.

-- Where agentd is: $AGENTD if set, else a checkout's default build.
local agentd = vim.env.AGENTD or vim.fn.expand("~/src/agentd/build/default/daemon/agentd")

require("codecompanion").setup({
  adapters = {
    acp = {
      agentd = function()
        return require("codecompanion.adapters").extend("goose", {
          name = "agentd",
          formatted_name = "agentd",
          commands = {
            -- Add "--demo" to try the scripted model without an API key,
            -- or "--model", "openai:gpt-4.1" to pick a model.
            default = { agentd },
          },
          defaults = {
            mcpServers = {},
            timeout = 20000, -- ms to wait for agentd to start and answer initialize
          },
          -- agentd inherits Neovim's environment: ANTHROPIC_API_KEY / OPENAI_API_KEY, AGENTD_MODEL, AGENTD_LOG.
          env = {},
        })
      end,
    },
  },
  -- CodeCompanion v18 and later; before v18 this table was called `strategies`.
  interactions = {
    chat = {
      adapter = "agentd",
    },
  },
})
