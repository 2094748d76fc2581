-- Shared by get.lua and post.lua: per-thread seeding and one JSON line of results.
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function seed_thread()
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"p50Us":%d,"p95Us":%d,"p99Us":%d,"maxUs":%d,"meanUs":%.1f,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
