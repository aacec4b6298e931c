-- wrk script: POST /v1/charges with a unique Idempotency-Key (and reference) per request.
local threads = {}
local next_id = 1

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  counter = 0
  prefix = (args[1] or "bench") .. "-" .. tid .. "-"
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  counter = counter + 1
  local key = prefix .. counter
  headers["Idempotency-Key"] = key
  return wrk.format("POST", "/v1/charges", headers,
    '{"reference":"' .. key .. '","amount":1000,"currency":"EUR","source":"tok_visa"}')
end
