-- Shared by the wrk scripts of bench/ (each loads it with dofile from its own folder): numbered threads, unique
-- Idempotency-Keys per thread, the merchant's headers and a file's lines.
local M = {}

-- The threads wrk made, in the order of setup(), for a done() that sums their results.
M.threads = {}
local next_id = 1

-- wrk's setup(thread): numbers the threads 1, 2, ... (the global tid in each thread).
function M.setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(M.threads, thread)
end

local prefix, counter, headers

-- In init(): keys are "<run>-<tid>-<n>" (run defaults to "bench"); M.post sends the headers given.
function M.init(run, request_headers)
  prefix = (run or "bench") .. "-" .. tid .. "-"
  counter = 0
  headers = request_headers
end

-- The thread's next key and its number n (1, 2, ...).
function M.next_key()
  counter = counter + 1
  return prefix .. counter, counter
end

-- A POST with the headers of M.init and the Idempotency-Key given.
function M.post(path, key, body)
  headers["Idempotency-Key"] = key
  return wrk.format("POST", path, headers, body)
end

-- JSON requests authorised with a merchant's API key.
function M.merchant_headers(api_key)
  return { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. api_key }
end

function M.lines(file)
  local lines = {}
  for line in io.lines(file) do
    lines[#lines + 1] = line
  end
  return lines
end

return M
