-- wrk script of tests/bench/bench.py:
--   wrk ... -s bench.lua URL -- MODE METHOD RUNID [BODY [BODY2]]
-- MODE  static   METHOD with BODY (or none), the same for every request
--       party    a createParty form, unique per request (RUNID keeps runs apart)
--       alt      BODY and BODY2 in turns (a sell, then the buy that matches it)
-- Every answer is checked: non-2xx statuses and bodies without "statusCode":"101" are
-- counted, and done() prints one line starting with BENCHSTAT.

local threads = {}

function setup(thread)
   thread:set("tid", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   local mode, method = args[1], args[2]
   runid, body, body2 = args[3], args[4], args[5]
   n, bad_status, not_ok = 0, 0, 0
   wrk.method = method
   if body then
      wrk.body = body
      wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
   end
   if mode == "party" then
      wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
      request = function()
         n = n + 1
         return wrk.format(nil, nil, nil,
            "firstName=Bench&lastName=Load" .. tid .. "x" .. n ..
            "&dob=01-15-1980&primCountry=USA&primAddress1=1+Main+St&primCity=Austin" ..
            "&primState=TX&primZip=78701&emailAddress=bench." .. runid .. "." .. tid ..
            "." .. n .. "%40example.com")
      end
   elseif mode == "alt" then
      request = function()
         n = n + 1
         return wrk.format(nil, nil, nil, (n % 2 == 1) and body or body2)
      end
   end
end

function response(status, headers, resp)
   if status < 200 or status > 299 then
      bad_status = bad_status + 1
   end
   if not string.find(resp, '"statusCode"%s*:%s*"101"') then
      not_ok = not_ok + 1
   end
end

function done(summary, latency, requests)
   local bad, nok = 0, 0
   for _, t in ipairs(threads) do
      bad = bad + t:get("bad_status")
      nok = nok + t:get("not_ok")
   end
   io.write(string.format("BENCHSTAT %d %d %d %d\n", summary.requests,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
      bad, nok))
end
