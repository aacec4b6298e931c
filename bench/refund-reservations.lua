-- wrk script: POST /v1/payments/{id}/refunds of 1 minor unit with a unique Idempotency-Key, round-robin over the
-- captured payments listed in a file (one id per line).
-- Args: <api key> <run prefix> <payment id file>
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
  payments = {}
  for line in io.lines(args[3]) do
    payments[#payments + 1] = line
  end
  offset = tid * 7919
end

function request()
  counter = counter + 1
  headers["Idempotency-Key"] = prefix .. counter
  local payment = payments[((counter + offset) % #payments) + 1]
  return wrk.format("POST", "/v1/payments/" .. payment .. "/refunds", headers, '{"amount":1}')
end
