-- wrk script: the two store queries alternating, GET /items/store/{id} over stores 1..MAX_STORES
-- and GET /items/top10/{id} over items 1..MAX_ITEMS (each id in turn, so every store is asked).
-- Usage: [MAX_STORES=256] [MAX_ITEMS=1000] wrk -t2 -c64 -d20s --latency -s get-items.lua http://localhost:8080
local maxStores = tonumber(os.getenv("MAX_STORES") or "256")
local maxItems = tonumber(os.getenv("MAX_ITEMS") or "1000")
local n = 0

request = function()
  n = n + 1
  if n % 2 == 0 then
    return wrk.format("GET", "/items/store/" .. (n % maxStores + 1))
  end
  return wrk.format("GET", "/items/top10/" .. (n % maxItems + 1))
end
