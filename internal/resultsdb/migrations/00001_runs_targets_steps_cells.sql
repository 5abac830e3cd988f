-- The first schema: what a run measured, enough for a cell's QPS over nights. Every table is
-- keyed by the run's UID (runs.uid); a run's rows are replaced as a whole in one transaction.
-- Columns are only ever added, never renamed or given another meaning.

-- +goose Up
CREATE TABLE runs (
  uid             CHAR(36) CHARACTER SET ascii NOT NULL,
  namespace       VARCHAR(253) NOT NULL,
  name            VARCHAR(253) NOT NULL,
  schedule        VARCHAR(253) NULL,
  confirmation_of VARCHAR(253) NULL,
  phase           VARCHAR(32) NOT NULL,
  client          VARCHAR(32) NOT NULL,
  workload        VARCHAR(253) NOT NULL,
  metric          VARCHAR(16) NOT NULL,
  tables_count    INT NULL,
  table_size      BIGINT NULL,
  repetitions     INT NOT NULL,
  step_seconds    DOUBLE NOT NULL,
  warmup_seconds  DOUBLE NOT NULL,
  run_order       VARCHAR(32) NOT NULL,
  server_instance VARCHAR(32) NOT NULL,
  start_time      DATETIME(6) NULL,
  completion_time DATETIME(6) NULL,
  spec            MEDIUMTEXT NOT NULL,
  content_hash    CHAR(64) CHARACTER SET ascii NOT NULL,
  stored_at       DATETIME(6) NOT NULL,
  PRIMARY KEY (uid),
  KEY runs_by_schedule (namespace, schedule, start_time),
  KEY runs_by_start (start_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE targets (
  run_uid         CHAR(36) CHARACTER SET ascii NOT NULL,
  name            VARCHAR(253) NOT NULL,
  position        INT NOT NULL,
  engine          VARCHAR(64) NOT NULL,
  image           VARCHAR(1024) NULL,
  image_digest    VARCHAR(255) NULL,
  server_version  VARCHAR(255) NULL,
  my_cnf          MEDIUMTEXT NULL,
  phase           VARCHAR(32) NOT NULL,
  message         TEXT NULL,
  node            VARCHAR(253) NULL,
  start_time      DATETIME(6) NULL,
  completion_time DATETIME(6) NULL,
  PRIMARY KEY (run_uid, name),
  KEY targets_by_name (name),
  CONSTRAINT targets_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE steps (
  run_uid          CHAR(36) CHARACTER SET ascii NOT NULL,
  target           VARCHAR(253) NOT NULL,
  seq              INT NOT NULL,
  repetition       INT NOT NULL,
  threads          INT NOT NULL,
  instance         INT NULL,
  attempts         INT NULL,
  tps              DOUBLE NOT NULL,
  qps              DOUBLE NOT NULL,
  qps_read         DOUBLE NOT NULL,
  qps_write        DOUBLE NOT NULL,
  qps_other        DOUBLE NOT NULL,
  latency_min_ms   DOUBLE NOT NULL,
  latency_avg_ms   DOUBLE NOT NULL,
  latency_p95_ms   DOUBLE NOT NULL,
  latency_max_ms   DOUBLE NOT NULL,
  errors           BIGINT NOT NULL,
  reconnects       BIGINT NOT NULL,
  duration_seconds DOUBLE NOT NULL,
  over_duration    BOOLEAN NOT NULL,
  tpmc             DOUBLE NULL,
  start_time       DATETIME(6) NULL,
  finish_time      DATETIME(6) NULL,
  PRIMARY KEY (run_uid, target, seq),
  CONSTRAINT steps_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE cells (
  run_uid        CHAR(36) CHARACTER SET ascii NOT NULL,
  target         VARCHAR(253) NOT NULL,
  threads        INT NOT NULL,
  n              INT NOT NULL,
  noisy          BOOLEAN NOT NULL,
  qps_median     DOUBLE NULL,
  qps_ci_low     DOUBLE NULL,
  qps_ci_high    DOUBLE NULL,
  qps_cv         DOUBLE NULL,
  qps_min        DOUBLE NULL,
  qps_max        DOUBLE NULL,
  tpmc_median    DOUBLE NULL,
  tpmc_ci_low    DOUBLE NULL,
  tpmc_ci_high   DOUBLE NULL,
  tpmc_cv        DOUBLE NULL,
  tpmc_min       DOUBLE NULL,
  tpmc_max       DOUBLE NULL,
  tps_median     DOUBLE NOT NULL,
  tps_cv         DOUBLE NOT NULL,
  p95_ms_median  DOUBLE NOT NULL,
  p95_ms_ci_low  DOUBLE NOT NULL,
  p95_ms_ci_high DOUBLE NOT NULL,
  p95_ms_cv      DOUBLE NOT NULL,
  ci_confidence  DOUBLE NOT NULL,
  PRIMARY KEY (run_uid, target, threads),
  CONSTRAINT cells_run FOREIGN KEY (run_uid) REFERENCES runs (uid) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE cells;
DROP TABLE steps;
DROP TABLE targets;
DROP TABLE runs;
