-- The workload of each step, cell and compared cell in a run of several named workloads
-- (spec.workloads, spec.preset): a target measures one cell per workload and thread count, so the
-- workload is part of the cells' keys. Empty for a run of one spec.workload, whose rows keep
-- their keys and meaning.

-- +goose Up
ALTER TABLE steps
  ADD COLUMN workload VARCHAR(32) NOT NULL DEFAULT '';

ALTER TABLE cells
  ADD COLUMN workload VARCHAR(32) NOT NULL DEFAULT '' AFTER target,
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (run_uid, target, workload, threads);

ALTER TABLE comparison_targets
  ADD COLUMN workload VARCHAR(32) NOT NULL DEFAULT '' AFTER target,
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (run_uid, target, workload);

ALTER TABLE comparison_cells
  ADD COLUMN workload VARCHAR(32) NOT NULL DEFAULT '' AFTER target,
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (run_uid, target, workload, threads);

-- +goose Down
-- Only while no run of several workloads is stored: their cells would collide on the old keys.
ALTER TABLE comparison_cells DROP PRIMARY KEY, DROP COLUMN workload, ADD PRIMARY KEY (run_uid, target, threads);
ALTER TABLE comparison_targets DROP PRIMARY KEY, DROP COLUMN workload, ADD PRIMARY KEY (run_uid, target);
ALTER TABLE cells DROP PRIMARY KEY, DROP COLUMN workload, ADD PRIMARY KEY (run_uid, target, threads);
ALTER TABLE steps DROP COLUMN workload;
