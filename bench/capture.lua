-- wrk script: POST /v1/payments with a unique Idempotency-Key and orderId per request.
-- Args: <api key> <run prefix>
local next_id = 1

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end

function init(args)
  counter = 0
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
