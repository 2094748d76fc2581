-- POST /v1/contacts with a fresh, varied body each time: wrk ... -s post.lua URL
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local first = { "Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia", "Tim" }
local last = { "Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra" }
local tags = { "newsletter", "vip", "referral", "beta" }
local n = 0
local headers = {}

function init(args)
  seed_thread()
  for k, v in pairs(wrk.headers) do headers[k] = v end -- keeps -H Authorization
  headers["Content-Type"] = "application/json"
end

local function pick(list) return list[math.random(#list)] end

function request()
  n = n + 1
  local f, l = pick(first), pick(last)
  local body = string.format(
    '{"firstName":"%s","lastName":"%s","email":"%s.%s.%d.%d@example.com","phone":"+1 415 555 %04d",' ..
    '"tags":["%s"],"address":{"city":"Springfield","country":"US"},"subscribed":true}',
    f, l, f:lower(), l:lower(), tid or 0, n, math.random(0, 9999), pick(tags))
  return wrk.format("POST", "/v1/contacts", headers, body)
end
