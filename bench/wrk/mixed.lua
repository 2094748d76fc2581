-- Mixed load for stress/soak.ts: GET one, lists, searches, creates, patches, interactions.
--   wrk ... -s mixed.lua URL -- <contact-count> <get-paths> <list-paths> <search-paths> <types-file> <delay-ms>
-- delay-ms > 0 paces each connection (wrk's delay(): ms between a response and the next
-- request; fractional values are rounded at random so the mean is exact): a rate-limited
-- generator at about connections × 1000 / delay-ms requests/s.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")
dofile(dir .. "bodies.lua")

-- [weight, kind]; writes are about a quarter of the requests.
local MIX = { { 40, "get" }, { 20, "list" }, { 15, "search" }, { 10, "create" }, { 8, "patch" }, { 7, "interaction" } }
local contacts, delay_ms = 1, 0
local lists = { get = {}, list = {}, search = {} }
local headers

local function load_paths(file, into)
  for line in io.lines(file) do if #line > 0 then into[#into + 1] = line end end
  assert(#into > 0, "no paths in " .. tostring(file))
end

function init(args)
  seed_thread()
  contacts = tonumber(args[1]) or 1
  load_paths(args[2], lists.get)
  load_paths(args[3], lists.list)
  load_paths(args[4], lists.search)
  load_types(args[5])
  delay_ms = tonumber(args[6]) or 0
  headers = json_headers()
end

function delay()
  if delay_ms <= 0 then return 0 end
  local base = math.floor(delay_ms)
  if math.random() < delay_ms - base then return base + 1 end
  return base
end

local total = 0
for _, m in ipairs(MIX) do total = total + m[1] end

function request()
  local r = math.random(total)
  local kind
  for _, m in ipairs(MIX) do
    if r <= m[1] then kind = m[2] break end
    r = r - m[1]
  end
  if kind == "create" then
    return wrk.format("POST", "/v1/contacts", headers, contact_body())
  elseif kind == "patch" then
    return wrk.format("PATCH", "/v1/contacts/CR-" .. math.random(contacts), headers, patch_body())
  elseif kind == "interaction" then
    local path, body = interaction_request(contacts)
    return wrk.format("POST", path, headers, body)
  end
  local list = lists[kind]
  return wrk.format("GET", list[math.random(#list)])
end
