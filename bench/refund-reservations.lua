-- wrk script: POST /v1/payments/{id}/refunds of 1 minor unit with a unique Idempotency-Key, round-robin over the
-- captured payments listed in a file (one id per line).
-- Args: <api key> <run prefix> <payment id file>
local bench = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-common.lua")
setup = bench.setup

function init(args)
  bench.init_keys(args[2])
  headers = bench.merchant_headers(args[1])
  payments = bench.lines(args[3])
  offset = tid * 7919
end

function request()
  local key, n = bench.next_key()
  headers["Idempotency-Key"] = key
  local payment = payments[((n + offset) % #payments) + 1]
  return wrk.format("POST", "/v1/payments/" .. payment .. "/refunds", headers, '{"amount":1}')
end
