-- POST /v1/contacts/CR-<random>/interactions with varied bodies (bodies.lua):
--   wrk ... -s interaction.lua URL -- <contact-count> [<interaction-type-ids-file>]
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")
dofile(dir .. "bodies.lua")

local contacts = 1
local headers

function init(args)
  seed_thread()
  contacts = tonumber(args[1]) or 1
  load_types(args[2])
  headers = json_headers()
end

function request()
  local path, body = interaction_request(contacts)
  return wrk.format("POST", path, headers, body)
end
