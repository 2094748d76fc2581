-- Shared request bodies for interaction.lua and mixed.lua (dofile'd after report.lua).
-- Every function returns a JSON string; values vary per call.
local first = { "Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia", "Tim" }
local last = { "Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra" }
local tags = { "newsletter", "vip", "referral", "beta" }
local phrases = {
  "Called about the renewal.", "Left a voicemail.", "Asked for a quote on the spring order.",
  "Met at the trade show; interested in wholesale pricing.", "Follow up next week.",
  "Sent the brochure by email.", "Complained about a late delivery; refunded shipping.",
}
local field_keys = { "channel", "outcome", "agent", "campaign", "orderId" }
local field_values = { "phone", "email", "visit", "won", "lost", "pending", "sam", "kim", "spring-24", "A-10442" }
local seq = 0

function pick(list) return list[math.random(#list)] end

-- Interaction type ids for interactionTypeId (filled by load_types); empty = always type "note".
interaction_types = {}

function load_types(file)
  if not file or file == "" then return end
  local f = io.open(file, "r")
  if not f then return end
  for line in f:lines() do if #line > 0 then interaction_types[#interaction_types + 1] = line end end
  f:close()
end

local function iso_past()
  local t = os.time() - math.random(0, 90 * 86400)
  return os.date("!%Y-%m-%dT%H:%M:%S", t) .. string.format(".%03dZ", math.random(0, 999))
end

-- POST /v1/contacts body, like post.lua.
function contact_body()
  seq = seq + 1
  local f, l = pick(first), pick(last)
  return string.format(
    '{"firstName":"%s","lastName":"%s","email":"%s.%s.m%d.%d@example.com","phone":"+1 415 555 %04d",' ..
    '"tags":["%s"],"address":{"city":"Springfield","country":"US"},"subscribed":true}',
    f, l, f:lower(), l:lower(), tid or 0, seq, math.random(0, 9999), pick(tags))
end

-- PATCH /v1/contacts/CR-n body: one of several kinds of change.
function patch_body()
  local r = math.random(6)
  if r == 1 then return string.format('{"notes":"%s"}', pick(phrases))
  elseif r == 2 then return string.format('{"firstName":"%s"}', pick(first))
  elseif r == 3 then return string.format('{"tags":["%s","%s"]}', pick(tags), pick(tags))
  elseif r == 4 then return string.format('{"subscribed":%s}', math.random(2) == 1 and "true" or "false")
  elseif r == 5 then return string.format('{"address":{"city":"Springfield","line1":"%d Main St"}}', math.random(1, 9999))
  else return string.format('{"phone":"+1 415 555 %04d"}', math.random(0, 9999)) end
end

-- POST /v1/contacts/CR-n/interactions: returns path and body. About a quarter carry a
-- uniqueIdentifier: half of those on a small hot set of contacts with few identifiers (so
-- repeats happen and answer 200 with the stored log), half fresh.
function interaction_request(contacts)
  seq = seq + 1
  local n = math.random(contacts)
  local parts = {}
  if #interaction_types > 0 and math.random(2) == 1 then
    parts[#parts + 1] = string.format('"interactionTypeId":"%s"', pick(interaction_types))
  else
    parts[#parts + 1] = '"type":"note"'
  end
  local note = {}
  for i = 1, math.random(1, 4) do note[i] = pick(phrases) end
  parts[#parts + 1] = string.format('"note":"%s"', table.concat(note, " "))
  if math.random(10) <= 4 then
    local fields = {}
    for i = 1, math.random(1, 3) do fields[i] = string.format('"%s":"%s"', field_keys[i], pick(field_values)) end
    parts[#parts + 1] = '"fields":{' .. table.concat(fields, ",") .. '}'
  end
  if math.random(10) <= 3 then parts[#parts + 1] = string.format('"date":"%s"', iso_past()) end
  local u = math.random(8)
  if u == 1 then
    n = math.random(math.min(contacts, 500))
    parts[#parts + 1] = string.format('"uniqueIdentifier":"call-%d"', math.random(3))
  elseif u == 2 then
    parts[#parts + 1] = string.format('"uniqueIdentifier":"msg-%d-%d-%d"', tid or 0, seq, math.random(1e6))
  end
  return "/v1/contacts/CR-" .. n .. "/interactions", "{" .. table.concat(parts, ",") .. "}"
end

-- Headers for a JSON body, keeping -H Authorization.
function json_headers()
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["Content-Type"] = "application/json"
  return h
end
