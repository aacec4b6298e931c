-- wrk script: POST /v1/payments with a unique Idempotency-Key and orderId per request.
-- Args: <api key> <run prefix>
local next_id = 1
local threads = {}

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  counter = 0
  statuses = {}
  prefix = (args[2] or "bench") .. "-" .. tid .. "-"
  headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. args[1],
  }
end

function request()
  counter = counter + 1
  local key = prefix .. counter
  headers["Idempotency-Key"] = key
  return wrk.format("POST", "/v1/payments", headers,
    '{"orderId":"' .. key .. '","amount":1999,"currency":"EUR","source":"tok_visa"}')
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

-- One line "statuses: 201=N 202=M ..." summed over the threads, so that a non-2xx count is explained.
function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
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
