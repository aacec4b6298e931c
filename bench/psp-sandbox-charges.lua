-- wrk script: POST /v1/charges with a unique Idempotency-Key (and reference) per request.
-- Args: <run prefix>
local bench = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-common.lua")
setup = bench.setup

function init(args)
  bench.init(args[1], { ["Content-Type"] = "application/json" })
end

function request()
  local key = bench.next_key()
  return bench.post("/v1/charges", key, '{"reference":"' .. key .. '","amount":1000,"currency":"EUR","source":"tok_visa"}')
end
