-- Spreads wrk's threads over several servers (nodes on one database): thread i talks to the
-- i-th port of WRK_PORTS, round robin, on WRK_HOST. Runs the script WRK_SCRIPT (get.lua,
-- post.lua, interaction.lua) with the arguments after --:
--   WRK_SCRIPT=get.lua WRK_HOST=127.0.0.1 WRK_PORTS=8081,8082 wrk -t2 ... -s split.lua URL -- <paths-file>
-- Use a thread count that is a multiple of the number of ports, so each gets the same share.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. assert(os.getenv("WRK_SCRIPT"), "WRK_SCRIPT is not set"))

local inner_setup = setup
local addrs = nil
local threads = 0

function setup(thread)
  if addrs == nil then
    addrs = {}
    local host = os.getenv("WRK_HOST") or "127.0.0.1"
    for port in string.gmatch(assert(os.getenv("WRK_PORTS"), "WRK_PORTS is not set"), "%d+") do
      addrs[#addrs + 1] = wrk.lookup(host, port)[1]
    end
  end
  if inner_setup then inner_setup(thread) end
  thread.addr = addrs[threads % #addrs + 1]
  threads = threads + 1
end
