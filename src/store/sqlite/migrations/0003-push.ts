/**
 * 0003_push: the push pipeline's file ledger, its per-batch checkpoints and the rows that were not written.
 * Owner: src/store/push-ledger.ts (nothing else writes these tables). STRICT, like every table of the agent.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE push_files (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    entity TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('bulk', 'import')),
    original_name TEXT NOT NULL,
    inbox TEXT NOT NULL,
    processing_path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    batch_size INTEGER NOT NULL,
    forced INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('claiming', 'claimed', 'uploading', 'waiting_job', 'done', 'failed', 'duplicate')),
    job_id TEXT,
    rows_read INTEGER,
    rows_sent INTEGER,
    rows_accepted INTEGER,
    rows_rejected INTEGER,
    rows_superseded INTEGER,
    error_code TEXT,
    error_message TEXT,
    duplicate_of INTEGER REFERENCES push_files(id),
    claimed_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    final_path TEXT,
    final_status TEXT CHECK (final_status IN ('done', 'failed', 'duplicate')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT
  ) STRICT`,
  // The duplicate check: has this content been sent for this entity before?
  `CREATE INDEX push_files_content ON push_files (entity, sha256, status)`,
  `CREATE INDEX push_files_status ON push_files (status, source)`,
  `CREATE TABLE push_batches (
    file_id INTEGER NOT NULL REFERENCES push_files(id),
    batch_index INTEGER NOT NULL,
    first_line INTEGER NOT NULL,
    last_line INTEGER NOT NULL,
    rows_sent INTEGER NOT NULL,
    rows_accepted INTEGER NOT NULL,
    rows_failed INTEGER NOT NULL,
    rows_superseded INTEGER NOT NULL,
    committed_at TEXT NOT NULL,
    PRIMARY KEY (file_id, batch_index)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TABLE push_rejects (
    file_id INTEGER NOT NULL REFERENCES push_files(id),
    line INTEGER NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('local', 'api', 'superseded')),
    field TEXT,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    raw TEXT NOT NULL,
    PRIMARY KEY (file_id, line)
  ) STRICT, WITHOUT ROWID`,
];

export const migration0003Push: Migration = statementsMigration(STATEMENTS);
