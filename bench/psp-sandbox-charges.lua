-- wrk script: POST /v1/charges with a unique Idempotency-Key (and reference) per request.
-- Args: <run prefix>
local bench = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-common.lua")
setup = bench.setup

function init(args)
  bench.init_keys(args[1])
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  local key = bench.next_key()
  headers["Idempotency-Key"] = key
  return wrk.format("POST", "/v1/charges", headers,
    '{"reference":"' .. key .. '","amount":1000,"currency":"EUR","source":"tok_visa"}')
end
