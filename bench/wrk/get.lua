-- GET a random path from a file of paths, one per line: wrk ... -s get.lua URL -- <paths-file>
-- (wrk runs each thread in its own Lua state; init() loads the list there.)
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local paths = {}

function init(args)
  seed_thread()
  for line in io.lines(args[1]) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  assert(#paths > 0, "no paths in " .. tostring(args[1]))
end

function request()
  return wrk.format("GET", paths[math.random(#paths)])
end
