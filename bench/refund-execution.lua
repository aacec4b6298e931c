-- wrk script: one refund of 1 minor unit per captured payment (POST /v1/payments/{id}/refunds, unique
-- Idempotency-Key), the payments taken in turn from a file (one id per line) and split between the threads; once the
-- file is used up, each connection asks /q/health/live once a second until wrk's duration ends (as fast as it could,
-- those requests took about half of both cores from the refunds being executed). With a rate > 0 the threads pace
-- themselves (one connection each) so that together they send about that many reservations per second.
-- Args: <api key> <run prefix> <payment id file> <threads> <rate per second, 0 = as fast as possible>
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_usec; } bench_timeval;
  int gettimeofday(bench_timeval *tv, void *tz);
]]
local tv = ffi.new("bench_timeval")
local function now_ms()
  ffi.C.gettimeofday(tv, nil)
  return tonumber(tv.tv_sec) * 1000 + tonumber(tv.tv_usec) / 1000
end

local bench = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-common.lua")
setup = bench.setup

function init(args)
  -- wrk calls the first thread's request() once before the run, only to check the request (script_verify_request):
  -- that call must not take a payment, or the payment's refund is never reserved
  sent = tid == 1 and -1 or 0
  prefix = (args[2] or "bench") .. "-" .. tid .. "-"
  headers = bench.merchant_headers(args[1])
  payments = bench.lines(args[3])
  threads = tonumber(args[4])
  local rate = tonumber(args[5])
  interval = rate > 0 and threads * 1000 / rate or 0
end

-- the line of the file this thread's next reservation takes
local function next_line()
  return sent * threads + tid
end

function delay()
  if next_line() > #payments then
    return 1000
  end
  if interval == 0 then
    return 0
  end
  if start == nil then
    start = now_ms()
  end
  local wait = start + sent * interval - now_ms()
  return wait > 0 and wait or 0
end

function request()
  if sent < 0 then
    sent = 0
    return wrk.format("GET", "/q/health/live")
  end
  if start == nil then
    start = now_ms()
  end
  local i = next_line()
  sent = sent + 1
  if i > #payments then
    return wrk.format("GET", "/q/health/live")
  end
  headers["Idempotency-Key"] = prefix .. i
  return wrk.format("POST", "/v1/payments/" .. payments[i] .. "/refunds", headers, '{"amount":1}')
end
