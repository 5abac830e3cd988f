-- What the server did during each step (counters, gauges, waits, CPU), the node each target's
-- server ran on, and the comparison of a scheduled run with its baseline (the verdicts).

-- +goose Up
ALTER TABLE targets
  ADD COLUMN node_cpu_capacity    DOUBLE NULL,
  ADD COLUMN node_memory_bytes    BIGINT NULL,
  ADD COLUMN node_kernel          VARCHAR(255) NULL,
  ADD COLUMN node_os_image        VARCHAR(255) NULL,
  ADD COLUMN node_architecture    VARCHAR(64) NULL,
  ADD COLUMN node_runtime         VARCHAR(255) NULL,
  ADD COLUMN node_instance_type   VARCHAR(255) NULL,
  ADD COLUMN node_zone            VARCHAR(255) NULL,
  ADD COLUMN server_restarts      INT NOT NULL DEFAULT 0;

ALTER TABLE steps
  ADD COLUMN server_seconds         DOUBLE NULL,
  ADD COLUMN server_queries         DOUBLE NULL,
  ADD COLUMN performance_schema     BOOLEAN NULL,
  ADD COLUMN server_cpu_seconds     DOUBLE NULL,
  ADD COLUMN server_cpu_per_second  DOUBLE NULL,
  ADD COLUMN client_cpu_cores       DOUBLE NULL,
  ADD COLUMN client_cpu_saturated   BOOLEAN NULL;

CREATE TABLE step_counters (
  run_uid    CHAR(36) CHARACTER SET ascii NOT NULL,
  target     VARCHAR(253) NOT NULL,
  seq        INT NOT NULL,
  source     VARCHAR(32) NOT NULL,
  name       VARCHAR(128) NOT NULL,
  delta      BIGINT UNSIGNED NOT NULL,
  per_second DOUBLE NOT NULL,
  per_query  DOUBLE NOT NULL,
  PRIMARY KEY (run_uid, target, seq, source, name),
  CONSTRAINT step_counters_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE step_gauges (
  run_uid CHAR(36) CHARACTER SET ascii NOT NULL,
  target  VARCHAR(253) NOT NULL,
  seq     INT NOT NULL,
  source  VARCHAR(32) NOT NULL,
  name    VARCHAR(128) NOT NULL,
  value   BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (run_uid, target, seq, source, name),
  CONSTRAINT step_gauges_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE step_waits (
  run_uid            CHAR(36) CHARACTER SET ascii NOT NULL,
  target             VARCHAR(253) NOT NULL,
  seq                INT NOT NULL,
  event              VARCHAR(255) NOT NULL,
  count              BIGINT UNSIGNED NOT NULL,
  sum_timer_wait     BIGINT UNSIGNED NOT NULL,
  seconds_per_second DOUBLE NOT NULL,
  PRIMARY KEY (run_uid, target, seq, event),
  CONSTRAINT step_waits_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE comparisons (
  run_uid            CHAR(36) CHARACTER SET ascii NOT NULL,
  baseline           VARCHAR(253) NULL,
  verdict            VARCHAR(32) NOT NULL,
  metric             VARCHAR(16) NOT NULL,
  compared_cells     INT NOT NULL,
  regressed_cells    INT NOT NULL,
  improved_cells     INT NOT NULL,
  no_change_cells    INT NOT NULL,
  inconclusive_cells INT NOT NULL,
  acknowledged_cells INT NOT NULL,
  needed_repetitions INT NOT NULL,
  qps_drop_percent   DOUBLE NOT NULL,
  p95_rise_percent   DOUBLE NOT NULL,
  alpha              DOUBLE NOT NULL,
  tests              INT NOT NULL,
  message            TEXT NULL,
  regressed_status   VARCHAR(16) NULL,
  regressed_reason   VARCHAR(64) NULL,
  PRIMARY KEY (run_uid),
  CONSTRAINT comparisons_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE comparison_targets (
  run_uid     CHAR(36) CHARACTER SET ascii NOT NULL,
  target      VARCHAR(253) NOT NULL,
  cells       INT NOT NULL,
  verdict     VARCHAR(32) NOT NULL,
  qps_ratio   DOUBLE NOT NULL,
  qps_low     DOUBLE NULL,
  qps_high    DOUBLE NULL,
  qps_p       DOUBLE NULL,
  qps_q       DOUBLE NULL,
  qps_verdict VARCHAR(32) NULL,
  p95_ratio   DOUBLE NULL,
  p95_low     DOUBLE NULL,
  p95_high    DOUBLE NULL,
  p95_p       DOUBLE NULL,
  p95_q       DOUBLE NULL,
  p95_verdict VARCHAR(32) NULL,
  confidence  DOUBLE NULL,
  PRIMARY KEY (run_uid, target),
  CONSTRAINT comparison_targets_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE comparison_cells (
  run_uid            CHAR(36) CHARACTER SET ascii NOT NULL,
  target             VARCHAR(253) NOT NULL,
  threads            INT NOT NULL,
  verdict            VARCHAR(32) NOT NULL,
  acknowledged       BOOLEAN NOT NULL,
  regressed          BOOLEAN NOT NULL,
  baseline_qps       DOUBLE NOT NULL,
  qps                DOUBLE NOT NULL,
  qps_change_percent DOUBLE NOT NULL,
  qps_p              DOUBLE NULL,
  qps_q              DOUBLE NULL,
  baseline_p95_ms    DOUBLE NULL,
  p95_ms             DOUBLE NULL,
  p95_change_percent DOUBLE NULL,
  PRIMARY KEY (run_uid, target, threads),
  CONSTRAINT comparison_cells_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE comparison_cells;
DROP TABLE comparison_targets;
DROP TABLE comparisons;
DROP TABLE step_waits;
DROP TABLE step_gauges;
DROP TABLE step_counters;
ALTER TABLE steps
  DROP COLUMN server_seconds, DROP COLUMN server_queries, DROP COLUMN performance_schema,
  DROP COLUMN server_cpu_seconds, DROP COLUMN server_cpu_per_second,
  DROP COLUMN client_cpu_cores, DROP COLUMN client_cpu_saturated;
ALTER TABLE targets
  DROP COLUMN node_cpu_capacity, DROP COLUMN node_memory_bytes, DROP COLUMN node_kernel,
  DROP COLUMN node_os_image, DROP COLUMN node_architecture, DROP COLUMN node_runtime,
  DROP COLUMN node_instance_type, DROP COLUMN node_zone, DROP COLUMN server_restarts;
