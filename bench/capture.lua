-- wrk script: POST /v1/payments with a unique Idempotency-Key and orderId per request.
-- Args: <api key> <run prefix>
local bench = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-common.lua")
setup = bench.setup

function init(args)
  statuses = {}
  bench.init(args[2], bench.merchant_headers(args[1]))
end

function request()
  local key = bench.next_key()
  return bench.post("/v1/payments", key, '{"orderId":"' .. key .. '","amount":1999,"currency":"EUR","source":"tok_visa"}')
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

-- One line "statuses: 201=N 202=M ..." summed over the threads, so that a non-2xx count is explained.
function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(bench.threads) do
    for status, n in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(total) do
    parts[#parts + 1] = status .. "=" .. n
  end
  table.sort(parts)
  io.write("statuses: " .. table.concat(parts, " ") .. "\n")
end
