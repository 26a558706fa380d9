-- wrk script: POST purchases like the standard client (random store 1..maxStores, custID in the
-- store's range, 5 items with ItemID 1..100000, numberOfItems 1), and count answers by status.
-- With till authentication on, TILL_KEYS=<till-keys.txt of scripts/till-keys.sh> sends each
-- store's first key as "Authorization: Bearer <key>" (the header tables are built once, in init).
-- With IDEMPOTENCY_KEYS=1 every request carries a new Idempotency-Key (as the load client's tills
-- do), so an API with an idempotency store claims a key per purchase.
-- Usage: [TILL_KEYS=FILE] [IDEMPOTENCY_KEYS=1] wrk -t2 -c64 -d20s -s post-purchases.lua http://localhost:8080
local maxStores = tonumber(os.getenv("MAX_STORES") or "1024")
local tillKeys = os.getenv("TILL_KEYS")
local itemsPerPurchase = tonumber(os.getenv("ITEMS_PER_PURCHASE") or "5")
local keyed = os.getenv("IDEMPOTENCY_KEYS") == "1"
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  statuses = {}
  headersOf = {}
  local keyOf = {}
  if tillKeys and tillKeys ~= "" then
    local file = assert(io.open(tillKeys, "r"))
    for line in file:lines() do
      local store, key = line:match("^(%d+)%s+(%S+)")
      if store and not keyOf[tonumber(store)] then keyOf[tonumber(store)] = key end
    end
    file:close()
  end
  for store = 1, maxStores do
    headersOf[store] = {["Content-Type"] = "application/json"}
    if keyOf[store] then headersOf[store]["Authorization"] = "Bearer " .. keyOf[store] end
  end
  keyPrefix = string.format("bench-%d-%d-", os.time(), math.random(1, 1000000000))
  sent = 0
end

function request()
  local store = math.random(1, maxStores)
  local items = {}
  for i = 1, itemsPerPurchase do
    items[i] = string.format('{"ItemID":"%d","numberOfItems:":1}', math.random(1, 100000))
  end
  local path = string.format("/purchase/%d/customer/%d/date/20210101", store, store * 1000 + math.random(0, 999))
  local headers = headersOf[store]
  if keyed then
    sent = sent + 1
    headers["Idempotency-Key"] = keyPrefix .. sent
  end
  return wrk.format("POST", path, headers, '{"items":[' .. table.concat(items, ",") .. ']}')
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local s = thread:get("statuses")
    for code, n in pairs(s) do total[code] = (total[code] or 0) + n end
  end
  for code, n in pairs(total) do io.write(string.format("status %d: %d\n", code, n)) end
  io.write(string.format("p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
