-- wrk script: a slow probe of one path, one request every PROBE_EVERY_MS (default 10) per
-- connection, to read what a single request waits while a load run saturates the stack.
-- PROBE_PATH=/items/store/x (default) is refused with 400 by purchase-api's handler before
-- anything is asked of store-service, so its latency is the API's own intake and answer; a real
-- query (/items/store/1) adds the store query's round trip.
-- Usage: [PROBE_PATH=/items/store/x] [PROBE_EVERY_MS=10] wrk -t1 -c1 -d15s --latency -s probe.lua http://localhost:8080
local path = os.getenv("PROBE_PATH") or "/items/store/x"
local every = tonumber(os.getenv("PROBE_EVERY_MS") or "10")

request = function()
  return wrk.format("GET", path)
end

delay = function()
  return every
end
