// The PostgreSQL store's schema, as numbered migrations applied in order, each once, in one
// transaction on start (results/pg-store.ts migrate()): `storsweep.schema_migrations` records
// which ran. A database whose highest version is above the last one here was migrated by a newer
// storsweep and is refused (StoreSchemaTooNew) before anything is read or written.
//
// Never edit a migration that has shipped: add the next number. Text columns hold the same JSON
// text the SQLite store keeps (records read back byte for byte); the views cast it to jsonb.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SCHEMA = 'storsweep';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'runs, meta, permutations, results, journal, ledger',
    sql: `
CREATE TABLE storsweep.runs (
  run_id TEXT PRIMARY KEY,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE storsweep.run_meta (
  run_id TEXT NOT NULL REFERENCES storsweep.runs ON DELETE CASCADE,
  key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_id, key));
CREATE TABLE storsweep.permutations (
  run_id TEXT NOT NULL REFERENCES storsweep.runs ON DELETE CASCADE,
  permutation_id TEXT NOT NULL, idx INTEGER NOT NULL, axes TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
  reason TEXT, attempts INTEGER NOT NULL DEFAULT 0, completed_repetitions INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT, plan TEXT,
  PRIMARY KEY (run_id, permutation_id));
CREATE INDEX permutations_order ON storsweep.permutations (run_id, idx);
CREATE TABLE storsweep.results (
  seq BIGSERIAL NOT NULL,
  run_id TEXT NOT NULL, permutation_id TEXT NOT NULL, repetition INTEGER NOT NULL, test_id TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_id, permutation_id, repetition, test_id),
  FOREIGN KEY (run_id, permutation_id) REFERENCES storsweep.permutations ON DELETE CASCADE);
CREATE TABLE storsweep.journal (
  seq BIGSERIAL PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES storsweep.runs ON DELETE CASCADE,
  at TEXT NOT NULL, permutation_id TEXT, step TEXT NOT NULL, event TEXT NOT NULL, detail TEXT);
CREATE INDEX journal_run ON storsweep.journal (run_id, seq);
CREATE TABLE storsweep.ledger (
  seq BIGSERIAL PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES storsweep.runs ON DELETE CASCADE,
  permutation_id TEXT NOT NULL, provider TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
  object_id TEXT, data TEXT NOT NULL DEFAULT '{}', state TEXT NOT NULL, error TEXT, updated_at TEXT NOT NULL,
  UNIQUE (run_id, kind, name));
CREATE INDEX ledger_permutation ON storsweep.ledger (run_id, permutation_id);
`,
  },
  {
    version: 2,
    name: 'views for dashboards: results per permutation × test, run progress',
    sql: `
-- One row per result record (permutation × repetition × test), axes as jsonb.
CREATE VIEW storsweep.result_records AS
SELECT r.run_id, p.idx AS permutation_index, r.permutation_id, r.repetition, r.test_id,
       p.axes::jsonb AS axes,
       (r.record::jsonb -> 'test' ->> 'pattern') AS pattern,
       (r.record::jsonb -> 'test' ->> 'blockSizeBytes')::bigint AS block_size_bytes,
       (r.record::jsonb -> 'test' ->> 'queueDepth')::integer AS queue_depth,
       (r.record::jsonb -> 'test' ->> 'threads')::integer AS threads,
       (r.record::jsonb -> 'test' ->> 'readPercent')::integer AS read_percent,
       (r.record::jsonb ->> 'iops')::double precision AS iops,
       (r.record::jsonb ->> 'bytesPerSecond')::double precision / 1e6 AS mb_per_s,
       (r.record::jsonb -> 'latencyUs' ->> 'mean')::double precision AS latency_mean_us,
       (r.record::jsonb -> 'latencyUs' ->> 'p99')::double precision AS latency_p99_us,
       (r.record::jsonb ->> 'cpuPercent')::double precision AS cpu_percent,
       (r.record::jsonb -> 'tool' ->> 'name') AS tool
FROM storsweep.results r JOIN storsweep.permutations p USING (run_id, permutation_id);

-- One row per run × permutation × test: the main metrics over its repetitions.
CREATE VIEW storsweep.permutation_tests AS
SELECT run_id, (m.value::jsonb ->> 'playbook') AS playbook, (m.value::jsonb ->> 'startedAt')::timestamptz AS run_started_at,
       permutation_index, permutation_id, test_id, axes,
       pattern, block_size_bytes, queue_depth, threads, read_percent,
       count(*) AS repetitions,
       avg(iops) AS iops_mean, stddev_samp(iops) AS iops_stddev, min(iops) AS iops_min, max(iops) AS iops_max,
       avg(mb_per_s) AS mb_per_s_mean,
       avg(latency_mean_us) AS latency_mean_us, avg(latency_p99_us) AS latency_p99_us,
       avg(cpu_percent) AS cpu_percent
FROM storsweep.result_records
LEFT JOIN storsweep.run_meta m USING (run_id)
WHERE m.key = 'meta'
GROUP BY run_id, m.value, permutation_index, permutation_id, test_id, axes, pattern, block_size_bytes, queue_depth, threads, read_percent;

-- One row per run: how many permutations are in each state.
CREATE VIEW storsweep.run_progress AS
SELECT r.run_id, (m.value::jsonb ->> 'playbook') AS playbook, (m.value::jsonb ->> 'target') AS target,
       (m.value::jsonb ->> 'startedAt')::timestamptz AS started_at,
       count(p.*) FILTER (WHERE p.status = 'pending') AS pending,
       count(p.*) FILTER (WHERE p.status = 'running') AS running,
       count(p.*) FILTER (WHERE p.status = 'done') AS done,
       count(p.*) FILTER (WHERE p.status = 'failed') AS failed,
       count(p.*) AS total,
       max(p.updated_at)::timestamptz AS last_update
FROM storsweep.runs r
LEFT JOIN storsweep.run_meta m ON m.run_id = r.run_id AND m.key = 'meta'
LEFT JOIN storsweep.permutations p ON p.run_id = r.run_id
GROUP BY r.run_id, m.value;
`,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
