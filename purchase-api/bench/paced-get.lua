-- wrk script: one GET path at a steady pace, each connection sending its next request
-- PACED_EVERY_MS after the previous answer, with PACED_AUTHORIZATION as its Authorization header
-- when set (till authentication on). Used by get-bench.sh; the rate is about
-- connections * 1000 / PACED_EVERY_MS while answers take much less than that.
-- Usage: PACED_PATH=/items/top PACED_EVERY_MS=100 wrk -t1 -c5 -d60s --latency -s paced-get.lua http://127.0.0.1:8080
local path = os.getenv("PACED_PATH") or "/items/top"
local every = tonumber(os.getenv("PACED_EVERY_MS") or "100")
local authorization = os.getenv("PACED_AUTHORIZATION")
local headers = {}
if authorization and authorization ~= "" then
  headers["Authorization"] = authorization
end

request = function()
  return wrk.format("GET", path, headers)
end

delay = function()
  return every
end
