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

local prefix, counter

-- In init(): keys are "<run>-<tid>-<n>" (run defaults to "bench").
function M.init_keys(run)
  prefix = (run or "bench") .. "-" .. tid .. "-"
  counter = 0
end

-- The thread's next key and its number n (1, 2, ...).
function M.next_key()
  counter = counter + 1
  return prefix .. counter, counter
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
