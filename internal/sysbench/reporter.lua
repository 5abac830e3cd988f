-- mysqlbench reporter: the machine-readable contract between sysbench 1.0.x
-- and the mysqlbench operator.
--
-- sysbench runs this file as its test script. It loads the real workload
-- (a stock OLTP script or a user's script) into the same Lua state and then
-- replaces sysbench's text reports with JSON lines on stdout:
--
--   {"type":"interval",...}  one per --report-interval (the time series)
--   {"type":"final",...}     once, when the command completed
--   {"type":"serverBegin",...} and {"type":"server",...}
--                            before and after a run with MYSQLBENCH_SERVER_STATS=1:
--                            the server's counters (see "Server snapshots" below)
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
--   MYSQLBENCH_SERVER_STATS 1: snapshot the server's counters around a run
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
-- A stock script is named (found on sysbench's path); a user's is a file path.
local stock_script = not script_name:find("/", 1, true)
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
   -- done() reads this (both run in sysbench's main state): a run that failed gets no
   -- cumulative report, and then no end snapshot either (see below).
   _mysqlbench_reported = true
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
-- 1050 (table exists). A suite prepares its data again between workloads
-- over the tables the earlier ones used. So the prepare of a stock script
-- (oltp_common's cmd_prepare, or a stock script's own prepare around it, as
-- oltp_insert's, which creates the tables empty without --auto-inc) first
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
      if command == "prepare" and (def[1] == cmd_prepare or stock_script) then
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

-- Server snapshots. With MYSQLBENCH_SERVER_STATS=1 a run reads the server's
-- counters twice: in init(), which sysbench calls once in its main state
-- before the worker threads connect, and in done(), which it calls once after
-- they all disconnected and the final line was printed. Both are outside the
-- measured window. Each snapshot is ONE line on stdout (never in the result
-- file, whose 4 KiB hold the final line), 1-2 KB, 15-20 KB with the waits:
--
--   {"type":"server","version":1,"at":"start"|"end",
--    "unixTime":1763800000.123456,"durationMs":1.234,"server":"<VERSION()>",
--    "status":{"Questions":123,...},"innodbMetrics":{"lock_deadlocks":0,...},
--    "performanceSchema":true|false,
--    "waits":[["wait/synch/mutex/innodb/...",count,sumTimerWaitPs],...],
--    "errors":["..."]}
--
--   unixTime     when SHOW GLOBAL STATUS was sent (clock_gettime, microseconds)
--   durationMs   what the whole snapshot took, connecting included
--   status       SHOW GLOBAL STATUS, only the names in SERVER_STATUS
--   innodbMetrics  information_schema.INNODB_METRICS, enabled ones among
--                INNODB_METRICS (needs the PROCESS privilege)
--   waits        performance_schema.events_waits_summary_global_by_event_name,
--                every event with COUNT_STAR > 0 but idle; only when
--                performance_schema is ON (needs SELECT on it)
--   errors       why a section is missing; a snapshot never fails the step
--
-- Counts are the server's own digits, copied verbatim and never converted to
-- a Lua number: a double is exact only up to 2^53, and SUM_TIMER_WAIT counts
-- picoseconds (2^53 ps is two and a half hours of waiting). A section that
-- could not be read is left out. A section that failed at the start is not
-- read again at the end (its delta is lost anyway, and each failure prints a
-- FATAL line).
--
-- Each snapshot starts with a line {"type":"serverBegin","version":1,"at":...}.
-- sysbench's MySQL driver prints every failed query as a FATAL line (with the
-- query, or without it when the server refuses while sending the result, as
-- MySQL does for INNODB_METRICS without PROCESS); the operator takes the error
-- lines between serverBegin and the server line as the snapshot's, never the
-- step's. Nothing else runs meanwhile: init() precedes every other thread and
-- done() follows them all. Every snapshot query also starts with
-- SERVER_STATS_MARK, which names it in the FATAL lines, the processlist and
-- the server's logs.

local SERVER_STATS_MARK = "/* mysqlbench:server-stats */ "

-- The bounded set of SHOW GLOBAL STATUS counters (keep in step with
-- StatusNames in internal/serverstats; a test compares them).
local SERVER_STATUS = {
   "Questions", "Queries",
   "Com_select", "Com_insert", "Com_update", "Com_delete",
   "Com_begin", "Com_commit", "Com_rollback",
   "Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated",
   "Innodb_rows_deleted", "Rows_read",
   "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
   "Innodb_buffer_pool_pages_flushed",
   "Innodb_data_fsyncs", "Innodb_data_reads", "Innodb_data_writes",
   "Innodb_os_log_written", "Innodb_redo_log_current_lsn", "Innodb_lsn_current",
   "Innodb_log_waits", "Innodb_row_lock_waits", "Innodb_row_lock_time",
   "Threads_running", "Threads_connected",
   "Created_tmp_disk_tables", "Created_tmp_tables",
   "Select_scan", "Sort_merge_passes", "Handler_read_rnd_next",
   "Handler_read_key",
   "Bytes_received", "Bytes_sent", "Slow_queries",
}

-- The InnoDB metrics read where enabled (keep in step with InnoDBMetricNames
-- in internal/serverstats).
local INNODB_METRICS = {
   "lock_deadlocks", "lock_timeouts", "lock_row_lock_waits",
   "lock_row_lock_time",
   "buffer_pool_wait_free", "buffer_flush_batch_total_pages",
   "buffer_LRU_batch_flush_total_pages",
   "log_waits", "log_write_requests", "log_writes",
   "os_log_bytes_written", "os_data_fsyncs",
   "innodb_dblwr_writes", "innodb_dblwr_pages_written",
   "trx_rw_commits", "trx_ro_commits", "trx_nl_ro_commits", "trx_rollbacks",
   "dml_reads", "dml_inserts", "dml_updates", "dml_deletes",
   "trx_rseg_history_len",
}

local function sql_names(names)
   local quoted = {}
   for i, n in ipairs(names) do
      quoted[i] = "'" .. n .. "'"
   end
   return table.concat(quoted, ", ")
end

local ffi = require("ffi")

-- Seconds and nanoseconds since the epoch. sysbench 1.0.x gives Lua no clock
-- finer than os.time(), so ask libc; os.time() if that fails.
local clock_ok, timespec
local function now()
   if clock_ok == nil then
      clock_ok = pcall(function()
         ffi.cdef("int clock_gettime(int clk_id, long *tp);")
         timespec = ffi.new("long[2]")
      end)
   end
   if clock_ok and ffi.C.clock_gettime(0, timespec) == 0 then -- CLOCK_REALTIME
      return tonumber(timespec[0]), tonumber(timespec[1])
   end
   return os.time(), 0
end

-- An unsigned 64-bit count as the server wrote it, or nil when it is not one.
local MAX_U64 = "18446744073709551615"
local function counter_digits(v)
   if type(v) ~= "string" or not v:match("^%d+$") then
      return nil
   end
   v = v:gsub("^0+(%d)", "%1")
   if #v > #MAX_U64 or (#v == #MAX_U64 and v > MAX_U64) then
      return nil
   end
   return v
end

-- A short message for a failed query: the server's, without Lua's position.
local function error_text(err)
   if type(err) == "table" then
      -- An error a script's sql_error_ignorable hook downgraded.
      err = string.format("error %s: %s", tostring(err.sql_errno),
                          tostring(err.sql_errmsg))
   end
   err = tostring(err):gsub("^[^:]*:%d+: ", "")
   return err:sub(1, 300)
end

local function query_rows(con, sql)
   local rs = con:query(SERVER_STATS_MARK .. sql)
   local out = {}
   if rs == nil then
      return out
   end
   while true do
      local row = rs:fetch_row()
      if row == nil then
         return out
      end
      out[#out + 1] = row
   end
end

local failed_at_start = {}

local function server_snapshot(at)
   local sec0, nsec0 = now()
   local stamp = string.format("%d.%06d", sec0, math.floor(nsec0 / 1000))
   local errors, members = {}, {}
   local version, ps = nil, false

   local function section(name, read)
      if failed_at_start[name] then
         errors[#errors + 1] = name .. ": not read, it failed at the start"
         return
      end
      local ok, err = pcall(read)
      if not ok then
         errors[#errors + 1] = name .. ": " .. error_text(err)
         if at == "start" then
            failed_at_start[name] = true
         end
      end
   end

   local drv, con
   local ok, err = pcall(function()
      drv = sysbench.sql.driver()
      con = drv:connect()
   end)
   if not ok then
      errors[#errors + 1] = "connect: " .. error_text(err)
   else
      section("status", function()
         sec0, nsec0 = now()
         stamp = string.format("%d.%06d", sec0, math.floor(nsec0 / 1000))
         local kv = {}
         for _, row in ipairs(query_rows(con, "SHOW GLOBAL STATUS WHERE Variable_name IN (" ..
                                            sql_names(SERVER_STATUS) .. ")")) do
            local v = counter_digits(row[2])
            if v ~= nil then
               kv[#kv + 1] = json_string(row[1]) .. ":" .. v
            else
               errors[#errors + 1] = "status " .. tostring(row[1]) ..
                  ": not a counter: " .. tostring(row[2]):sub(1, 40)
            end
         end
         members[#members + 1] = '"status":{' .. table.concat(kv, ",") .. "}"
      end)
      section("variables", function()
         for _, row in ipairs(query_rows(con, "SHOW GLOBAL VARIABLES WHERE Variable_name IN " ..
                                            "('performance_schema', 'version')")) do
            local name = tostring(row[1]):lower()
            if name == "version" then
               version = row[2]
            elseif name == "performance_schema" then
               ps = row[2] == "ON" or row[2] == "1"
            end
         end
      end)
      section("innodbMetrics", function()
         -- MariaDB 10.5 and later have an ENABLED column where MySQL and older MariaDB
         -- have STATUS.
         local enabled = "STATUS = 'enabled'"
         if version ~= nil and version:find("MariaDB", 1, true) then
            local major, minor = version:match("^(%d+)%.(%d+)")
            major, minor = tonumber(major) or 0, tonumber(minor) or 0
            if major > 10 or (major == 10 and minor >= 5) then
               enabled = "ENABLED = 1"
            end
         end
         local kv = {}
         for _, row in ipairs(query_rows(con, "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE " ..
                                            enabled .. " AND NAME IN (" .. sql_names(INNODB_METRICS) .. ")")) do
            local v = counter_digits(row[2])
            if v ~= nil then
               kv[#kv + 1] = json_string(row[1]) .. ":" .. v
            else
               errors[#errors + 1] = "innodbMetrics " .. tostring(row[1]) ..
                  ": not a counter: " .. tostring(row[2]):sub(1, 40)
            end
         end
         members[#members + 1] = '"innodbMetrics":{' .. table.concat(kv, ",") .. "}"
      end)
      if ps then
         section("waits", function()
            local waits = {}
            for _, row in ipairs(query_rows(con, "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT " ..
                                               "FROM performance_schema.events_waits_summary_global_by_event_name " ..
                                               "WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'")) do
               local count, sum = counter_digits(row[2]), counter_digits(row[3])
               if count ~= nil and sum ~= nil then
                  waits[#waits + 1] = "[" .. json_string(row[1]) .. "," .. count .. "," .. sum .. "]"
               else
                  errors[#errors + 1] = "waits " .. tostring(row[1]):sub(1, 80) .. ": not counters"
               end
            end
            members[#members + 1] = '"waits":[' .. table.concat(waits, ",") .. "]"
         end)
      end
      pcall(con.disconnect, con)
   end

   local sec1, nsec1 = now()
   local quoted = {}
   for i, e in ipairs(errors) do
      quoted[i] = json_string(e)
   end
   local head = string.format('{"type":"server","version":%d,"at":"%s","unixTime":%s,"durationMs":%.3f',
                              FORMAT_VERSION, at, stamp,
                              math.max(0, (sec1 - sec0) * 1000 + (nsec1 - nsec0) / 1e6))
   if version ~= nil then
      head = head .. ',"server":' .. json_string(version)
   end
   members[#members + 1] = '"performanceSchema":' .. tostring(ps)
   members[#members + 1] = '"errors":[' .. table.concat(quoted, ",") .. "]"
   emit(head .. "," .. table.concat(members, ",") .. "}")
end

-- A snapshot that cannot fail: a bug in it still leaves a line saying so.
local function snapshot_line(at)
   emit(string.format('{"type":"serverBegin","version":%d,"at":"%s"}', FORMAT_VERSION, at))
   local ok, err = pcall(server_snapshot, at)
   if not ok then
      emit(string.format('{"type":"server","version":%d,"at":"%s","unixTime":%d,"durationMs":0,' ..
                            '"performanceSchema":false,"errors":[%s]}',
                         FORMAT_VERSION, at, os.time(), json_string("reporter: " .. error_text(err))))
   end
end

-- The start snapshot's queries run on the main thread's connection, which
-- sysbench counts as thread 0's: they would add a few reads (and an error for
-- each failed query) to the first interval and to the final report. Taking an
-- intermediate and a cumulative checkpoint right after it makes both reports
-- count from there. Nothing else runs yet, as these functions require.
local function forget_snapshot_queries()
   pcall(function()
      ffi.cdef [[
void sb_counters_agg_intermediate(uint64_t *val);
void sb_counters_agg_cumulative(uint64_t *val);
]]
      -- sb_counters_t is 6 counters padded to a cache line; 512 bytes hold it.
      local scratch = ffi.new("uint64_t[64]")
      ffi.C.sb_counters_agg_intermediate(scratch)
      ffi.C.sb_counters_agg_cumulative(scratch)
   end)
end

if command == "run" and os.getenv("MYSQLBENCH_SERVER_STATS") == "1" then
   local script_init, script_done = init, done
   function init(...)
      if script_init ~= nil then
         script_init(...)
      end
      snapshot_line("start")
      forget_snapshot_queries()
   end
   function done(...)
      -- sysbench calls done() also after a worker failed (without a cumulative report). The
      -- step is failed then and its counters are never used; a snapshot line would only push
      -- the FATAL lines out of the log tail the kubelet keeps as the termination message,
      -- from which the operator reads why the step failed.
      if _mysqlbench_reported then
         snapshot_line("end")
      end
      if script_done ~= nil then
         return script_done(...)
      end
   end
end

-- The server lock. The operator starts a ladder step's Job while the step before
-- it still measures, so that the pod's start, which takes the kubelet most of a
-- second, does not leave the server idle between steps. Both steps then name the
-- same user-level lock (GET_LOCK, which needs no privilege): each takes it in
-- init(), before its threads connect and before sysbench starts its clock, and
-- gives it back in done(), after its end snapshot. The step started early waits
-- there, with one idle connection, until the step before has measured; the
-- operator creates it only once that step holds the lock (its container has run
-- for a while, see the operator's stepjob package). A step that failed drops its
-- connection, which frees the lock too: the operator then deletes the step
-- started early before it measures anything it would keep.
--
--   MYSQLBENCH_SERVER_LOCK       the lock's name (the operator's, per target)
--   MYSQLBENCH_SERVER_LOCK_WAIT  how long to wait for it, in whole seconds
--
-- With the lock taken last here, it is the outermost wrapper: init() waits
-- before anything else of the step touches the server, and done() releases
-- after everything else.
local server_lock = os.getenv("MYSQLBENCH_SERVER_LOCK")
if command == "run" and server_lock ~= nil and server_lock ~= "" then
   if #server_lock > 64 or not server_lock:match("^[%w_:%-]+$") then
      fail("MYSQLBENCH_SERVER_LOCK '" .. server_lock .. "' is not a lock name " ..
              "(letters, digits, '_', ':' and '-', at most 64)")
   end
   local wait = tonumber(os.getenv("MYSQLBENCH_SERVER_LOCK_WAIT") or "")
   if wait == nil or wait < 1 or wait ~= math.floor(wait) then
      fail("MYSQLBENCH_SERVER_LOCK_WAIT '" .. tostring(os.getenv("MYSQLBENCH_SERVER_LOCK_WAIT")) ..
              "' is not a whole number of seconds")
   end
   local lock_con
   local inner_init, inner_done = init, done
   function init(...)
      local ok, got = pcall(function()
         lock_con = sysbench.sql.driver():connect()
         -- The connection idles while the step measures: a my.cnf wait_timeout shorter than
         -- the step must not drop it (and free the lock), nor a statement time limit end the
         -- wait. MySQL and MariaDB name the limit differently, older servers have none; only
         -- the ones the server has are set (the driver prints every failed query as FATAL).
         lock_con:query("SET SESSION wait_timeout = 31536000")
         for _, limit in ipairs({"max_execution_time", "max_statement_time"}) do
            local rs = lock_con:query("SHOW SESSION VARIABLES LIKE '" .. limit .. "'")
            if rs ~= nil and rs:fetch_row() ~= nil then
               lock_con:query("SET SESSION " .. limit .. " = 0")
            end
         end
         return lock_con:query_row(string.format("SELECT GET_LOCK('%s', %d)", server_lock, wait))
      end)
      if not ok then
         fail("cannot take the server lock " .. server_lock .. ": " .. error_text(got))
      end
      if got == nil then
         -- GET_LOCK returns NULL on an error (the wait was killed, say), 0 on its timeout.
         fail("the server lock " .. server_lock .. " could not be taken: GET_LOCK returned NULL")
      end
      if got ~= "1" and got ~= 1 then
         fail(string.format("waited %d s for the server lock %s, which the step before " ..
                               "this one holds while it loads the server: it did not end",
                            wait, server_lock))
      end
      -- The lock's queries ran on the main thread's connection, counted as thread 0's.
      forget_snapshot_queries()
      if inner_init ~= nil then
         return inner_init(...)
      end
   end
   function done(...)
      local ok, err = true, nil
      if inner_done ~= nil then
         ok, err = pcall(inner_done, ...)
      end
      if lock_con ~= nil then
         local held_ok, held = pcall(function()
            return lock_con:query_row(string.format("SELECT IS_USED_LOCK('%s') = CONNECTION_ID()", server_lock))
         end)
         if _mysqlbench_reported and (not held_ok or (held ~= "1" and held ~= 1)) then
            -- Lost (the connection dropped): the next step may have measured beside this one.
            -- The result must not stand: it is emptied from the result file, so the kubelet
            -- takes the log's tail (the driver's error, then this line) as the step's end.
            local path = os.getenv("MYSQLBENCH_RESULT_FILE")
            if path ~= nil and path ~= "" then
               local f = io.open(path, "w")
               if f ~= nil then
                  f:close()
               end
            end
            fail("this step lost the server lock " .. server_lock ..
                    " before it ended, so the next step may have measured beside it")
         end
         pcall(function()
            lock_con:query(string.format("DO RELEASE_LOCK('%s')", server_lock))
            lock_con:disconnect()
         end)
      end
      if not ok then
         error(err, 0)
      end
      return err
   end
end
