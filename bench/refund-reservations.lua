-- wrk script: POST /v1/payments/{id}/refunds of 1 minor unit with a unique Idempotency-Key, round-robin over the
-- captured payments listed in a file (one id per line).
-- Args: <api key> <run prefix> <payment id file>
local bench = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-common.lua")
setup = bench.setup

function init(args)
  bench.init(args[2], bench.merchant_headers(args[1]))
  payments = bench.lines(args[3])
  offset = tid * 7919
end

function request()
  local key, n = bench.next_key()
  return bench.post("/v1/payments/" .. payments[((n + offset) % #payments) + 1] .. "/refunds", key, '{"amount":1}')
end
