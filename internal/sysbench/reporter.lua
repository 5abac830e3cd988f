-- mysqlbench reporter: the machine-readable contract between sysbench 1.0.x
-- and the mysqlbench operator.
--
-- sysbench runs this file as its test script. It loads the real workload
-- (a stock OLTP script or a user's script) into the same Lua state and then
-- replaces sysbench's text reports with JSON lines on stdout:
--
--   {"type":"interval",...}  one per --report-interval (the time series)
--   {"type":"final",...}     once, when the command completed
--
-- Besides the script's own commands it adds one: probe (log in, report VERSION()).
--
-- The final line is also written to MYSQLBENCH_RESULT_FILE (the container's
-- termination message file) so the operator can read a step's result from
-- the Pod status without log access. Kubernetes caps that message at 4 KiB;
-- the final line is a few hundred bytes.
--
-- Environment (set by the operator's Job builder, never sysbench options, so
-- any sysbench 1.0.x accepts the command line):
--   MYSQLBENCH_SCRIPT       stock script name (resolved on the Lua path like
--                           require does, e.g. oltp_point_select) or a path
--   MYSQLBENCH_RESULT_FILE  where to write the final line; unset: stdout only
--
-- sysbench creates one Lua state per worker thread and one for the
-- reporting thread, and runs this file in each, so everything below must
-- work in any of them.

local FORMAT_VERSION = 1

local function fail(msg)
   -- Same shape as sysbench's own fatal messages, so the operator's
   -- classifier sees it; exit non-zero because a parallel command's worker
   -- failing does not change sysbench's exit code.
   io.stdout:write("FATAL: mysqlbench reporter: " .. msg .. "\n")
   io.stdout:flush()
   os.exit(1)
end

local function find_script(name)
   if name:find("/", 1, true) then
      return name
   end
   -- Stock scripts live in sysbench's data directory, which differs between
   -- packages (/usr/share/sysbench, /usr/local/share/sysbench); sysbench puts
   -- it on package.path, so search it the way require() would.
   for pattern in package.path:gmatch("[^;]+") do
      local candidate = pattern:gsub("%?", name)
      local f = io.open(candidate, "r")
      if f then
         f:close()
         return candidate
      end
   end
   return nil
end

local script_name = os.getenv("MYSQLBENCH_SCRIPT")
if script_name == nil or script_name == "" then
   fail("MYSQLBENCH_SCRIPT is not set: it names the sysbench script to run")
end
local script_path = find_script(script_name)
if script_path == nil then
   fail("cannot find the sysbench script '" .. script_name ..
           "' in sysbench's script directories (package.path)")
end

dofile(script_path)

-- JSON cannot carry NaN or infinities; a rate over an empty interval is 0.
local function num(x)
   if type(x) ~= "number" or x ~= x or x == math.huge or x == -math.huge then
      return 0
   end
   return x
end

local function per_sec(count, seconds)
   seconds = num(seconds)
   if seconds <= 0 then
      return 0
   end
   return num(count) / seconds
end

local function ms(seconds)
   return num(seconds) * 1000
end

-- sysbench.opt is only exported to states that run workload code; the main
-- state of a parallel command never gets it, so fall back to the command
-- line (the operator always passes the options it reports).
local function opt(name, default)
   if sysbench.opt ~= nil and sysbench.opt[name] ~= nil then
      return sysbench.opt[name]
   end
   local prefix = "--" .. name:gsub("_", "-") .. "="
   local value
   for _, arg in pairs(sysbench.cmdline.argv or {}) do
      if type(arg) == "string" and arg:sub(1, #prefix) == prefix then
         value = arg:sub(#prefix + 1)
      end
   end
   return tonumber(value) or default
end

-- One write per line: the reporting thread's interval lines and the main
-- thread's final line can be printed at the same moment, and only a single
-- write is atomic with respect to the other thread's.
local function emit(line)
   io.stdout:write(line .. "\n")
   io.stdout:flush()
end

local function write_result(line)
   local path = os.getenv("MYSQLBENCH_RESULT_FILE")
   if path == nil or path == "" then
      return
   end
   local f, err = io.open(path, "w")
   if f == nil then
      fail("cannot write the result to " .. path .. ": " .. tostring(err))
   end
   local ok, werr = f:write(line .. "\n")
   f:close()
   if not ok then
      fail("cannot write the result to " .. path .. ": " .. tostring(werr))
   end
end

local function final(line)
   emit(line)
   write_result(line)
end

-- JSON string literal for text the server sends (a version string).
local function json_string(s)
   s = tostring(s or "")
   s = s:gsub('[%c"\\]', function(c)
      if c == '"' then return '\\"' end
      if c == '\\' then return '\\\\' end
      return string.format("\\u%04x", c:byte())
   end)
   return '"' .. s .. '"'
end

-- The probe command proves the benchmark account can log in over the network with
-- sysbench's own client library (not just that the port is open) and reports the
-- server's real version, read from the server rather than the image tag. The operator
-- runs it once per target before prepare. It runs serially in sysbench's main state.
-- It also counts the tables sbtest1..sbtestN (N = --tables) that exist, so that after
-- a server restart the operator knows whether the prepared data survived.
local function probe()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local version = con:query_row("SELECT VERSION()")
   local found = con:query_row(string.format(
      "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() " ..
         "AND table_name REGEXP '^sbtest[1-9][0-9]*$' " ..
         "AND CAST(SUBSTRING(table_name, 7) AS UNSIGNED) <= %d", opt("tables", 1)))
   con:disconnect()
   final(string.format(
            '{"type":"final","version":%d,"command":"probe","sysbench":"%s",' ..
               '"threads":1,"tables":%d,"durationSeconds":0,"server":%s}',
            FORMAT_VERSION, tostring(sysbench.version), tonumber(found) or 0,
            json_string(version)))
end
sysbench.cmdline.commands = sysbench.cmdline.commands or {}
sysbench.cmdline.commands.probe = {probe}

sysbench.hooks = sysbench.hooks or {}

function sysbench.hooks.report_intermediate(stat)
   local t = stat.time_interval
   local queries = num(stat.reads) + num(stat.writes) + num(stat.other)
   emit(string.format(
           '{"type":"interval","time":%.3f,"threads":%d,"threadsRunning":%d,' ..
              '"tps":%.2f,"qps":%.2f,"readQps":%.2f,"writeQps":%.2f,' ..
              '"otherQps":%.2f,"latencyPctMs":%.3f,"errorsPerSec":%.2f,' ..
              '"reconnectsPerSec":%.2f}',
           num(stat.time_total), opt("threads", 0), num(stat.threads_running),
           per_sec(stat.events, t), per_sec(queries, t),
           per_sec(stat.reads, t), per_sec(stat.writes, t),
           per_sec(stat.other, t), ms(stat.latency_pct),
           per_sec(stat.errors, t), per_sec(stat.reconnects, t)))
end

function sysbench.hooks.report_cumulative(stat)
   local t = stat.time_interval
   local queries = num(stat.reads) + num(stat.writes) + num(stat.other)
   final(string.format(
            '{"type":"final","version":%d,"command":"run","sysbench":"%s",' ..
               '"threads":%d,"percentile":%d,"durationSeconds":%.3f,' ..
               '"events":%.0f,"tps":%.2f,' ..
               '"qps":{"total":%.2f,"read":%.2f,"write":%.2f,"other":%.2f},' ..
               '"queries":{"total":%.0f,"read":%.0f,"write":%.0f,"other":%.0f},' ..
               '"latencyMs":{"min":%.3f,"avg":%.3f,"pct":%.3f,"max":%.3f,' ..
               '"sum":%.3f},"errors":%.0f,"reconnects":%.0f}',
            FORMAT_VERSION, tostring(sysbench.version), opt("threads", 0),
            opt("percentile", 0), num(t), num(stat.events),
            per_sec(stat.events, t), per_sec(queries, t),
            per_sec(stat.reads, t), per_sec(stat.writes, t),
            per_sec(stat.other, t), queries, num(stat.reads),
            num(stat.writes), num(stat.other), ms(stat.latency_min),
            ms(stat.latency_avg), ms(stat.latency_pct), ms(stat.latency_max),
            ms(stat.latency_sum), num(stat.errors), num(stat.reconnects)))
end

-- prepare and cleanup produce no statistics, so sysbench calls no report
-- hook for them. The reporter still owes the operator a final line saying
-- the command completed, and a non-zero exit when it did not: sysbench
-- 1.0.20 logs a failing worker of a parallel command (the stock prepare) but
-- still exits 0.
local command = sysbench.cmdline.command
local started = os.time()
local ran, succeeded = false, false

local function command_final()
   final(string.format(
            '{"type":"final","version":%d,"command":"%s","sysbench":"%s",' ..
               '"threads":%d,"tables":%d,"durationSeconds":%d}',
            FORMAT_VERSION, command, tostring(sysbench.version),
            opt("threads", 1), opt("tables", 0), os.time() - started))
end

local function parallel_here()
   return sysbench.cmdline.command_parallel(command) and
      opt("threads", 1) > 1
end

local function wrap(fn, name)
   return function(...)
      ran = true
      local parallel = parallel_here()
      local ok, err = pcall(fn, ...)
      if not ok then
         if parallel then
            fail("`" .. name .. "' failed: " .. tostring(err))
         end
         -- Serial commands run in sysbench's main state, which reports the
         -- error and exits 1 itself.
         error(err, 0)
      end
      succeeded = true
      if not parallel then
         command_final()
      end
      return err
   end
end

-- A retried prepare must start from clean tables: the attempt before may
-- have died half-way (the server restarted, the pod was evicted) and left
-- some sbtest tables, complete or not, and the stock prepare then fails with
-- 1050 (table exists). So the stock prepare (oltp_common's cmd_prepare) first
-- drops the very tables it is about to create, in the worker that creates
-- them: the workers partition the tables exactly like cmd_prepare, so no
-- worker ever drops a table another one is filling. A user's own prepare
-- stays as written.
local function clean_then(prepare)
   return function(...)
      local drv = sysbench.sql.driver()
      local con = drv:connect()
      for i = sysbench.tid % sysbench.opt.threads + 1, sysbench.opt.tables,
         sysbench.opt.threads do
         con:query("DROP TABLE IF EXISTS sbtest" .. i)
      end
      con:disconnect()
      return prepare(...)
   end
end

if command == "prepare" or command == "cleanup" then
   if sysbench.cmdline.command_defined(command) then
      -- A custom command (the stock prepare is one, run in parallel).
      local def = sysbench.cmdline.commands[command]
      if command == "prepare" and def[1] == cmd_prepare then
         def[1] = clean_then(def[1])
      end
      def[1] = wrap(def[1], command)
   elseif type(_G[command]) == "function" then
      -- A plain global prepare()/cleanup(), run by sysbench's main state.
      _G[command] = wrap(_G[command], command)
   end

   -- A parallel command runs only in worker states; the main state learns
   -- that all of them finished when sysbench closes it after joining them
   -- (a failed worker has already ended the process). A finalizer on a
   -- userdata kept in a global runs exactly then.
   _mysqlbench_done = newproxy(true)
   getmetatable(_mysqlbench_done).__gc = function()
      if not ran and sysbench.cmdline.command_defined(command) then
         pcall(command_final)
      end
   end
end
