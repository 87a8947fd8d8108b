/**
 * The migrations of both backends, one row per migration: its name and its change on SQLite (sqlite/migrations/) and
 * on PostgreSQL (postgres/migrations/). One list, so that the same name is the same change on both backends by
 * construction: `state migrate --to postgres` and the table families find the same tables and columns on either, and
 * an agent reading which migrations ran sees the same names. Run at every read-write open (src/store/migrate.ts).
 *
 * Adding a migration: write `NNNN-name.ts` exporting a `Migration` in both folders, and add one row here. Names sort
 * in run order.
 */
import type { Migration } from 'kysely/migration';
import { migration0001Base as postgres0001Base } from './postgres/migrations/0001-base.ts';
import { migration0002PullOutbox as postgres0002PullOutbox } from './postgres/migrations/0002-pull-outbox.ts';
import { migration0003Push as postgres0003Push } from './postgres/migrations/0003-push.ts';
import { migration0004AckState as postgres0004AckState } from './postgres/migrations/0004-ack-state.ts';
import { migration0005ApiState as postgres0005ApiState } from './postgres/migrations/0005-api-state.ts';
import { migration0006RowFates as postgres0006RowFates } from './postgres/migrations/0006-row-fates.ts';
import { migration0007Feed as postgres0007Feed } from './postgres/migrations/0007-feed.ts';
import { migration0008Delta as postgres0008Delta } from './postgres/migrations/0008-delta.ts';
import { migration0009HaLease as postgres0009HaLease } from './postgres/migrations/0009-ha-lease.ts';
import { migration0010FixesFile as postgres0010FixesFile } from './postgres/migrations/0010-fixes-file.ts';
import { migration0011RecordFields as postgres0011RecordFields } from './postgres/migrations/0011-record-fields.ts';
import { migration0012JsonCompression as postgres0012JsonCompression } from './postgres/migrations/0012-json-compression.ts';
import { migration0013ReferenceChecks as postgres0013ReferenceChecks } from './postgres/migrations/0013-reference-checks.ts';
import { migration0014LineHash as postgres0014LineHash } from './postgres/migrations/0014-line-hash.ts';
import { migration0015LineModeFailed as postgres0015LineModeFailed } from './postgres/migrations/0015-line-mode-failed.ts';
import { migration0016ReaderRows as postgres0016ReaderRows } from './postgres/migrations/0016-reader-rows.ts';
import { migration0017FileAttempts as postgres0017FileAttempts } from './postgres/migrations/0017-file-attempts.ts';
import { migration0018PushMapping as postgres0018PushMapping } from './postgres/migrations/0018-push-mapping.ts';
import { migration0019MergedRows as postgres0019MergedRows } from './postgres/migrations/0019-merged-rows.ts';
import { migration0020RefusedKeys as postgres0020RefusedKeys } from './postgres/migrations/0020-refused-keys.ts';
import { migration0001Base as sqlite0001Base } from './sqlite/migrations/0001-base.ts';
import { migration0002PullOutbox as sqlite0002PullOutbox } from './sqlite/migrations/0002-pull-outbox.ts';
import { migration0003Push as sqlite0003Push } from './sqlite/migrations/0003-push.ts';
import { migration0004AckState as sqlite0004AckState } from './sqlite/migrations/0004-ack-state.ts';
import { migration0005ApiState as sqlite0005ApiState } from './sqlite/migrations/0005-api-state.ts';
import { migration0006RowFates as sqlite0006RowFates } from './sqlite/migrations/0006-row-fates.ts';
import { migration0007Feed as sqlite0007Feed } from './sqlite/migrations/0007-feed.ts';
import { migration0008Delta as sqlite0008Delta } from './sqlite/migrations/0008-delta.ts';
import { migration0009HaLease as sqlite0009HaLease } from './sqlite/migrations/0009-ha-lease.ts';
import { migration0010FixesFile as sqlite0010FixesFile } from './sqlite/migrations/0010-fixes-file.ts';
import { migration0011RecordFields as sqlite0011RecordFields } from './sqlite/migrations/0011-record-fields.ts';
import { migration0012JsonCompression as sqlite0012JsonCompression } from './sqlite/migrations/0012-json-compression.ts';
import { migration0013ReferenceChecks as sqlite0013ReferenceChecks } from './sqlite/migrations/0013-reference-checks.ts';
import { migration0014LineHash as sqlite0014LineHash } from './sqlite/migrations/0014-line-hash.ts';
import { migration0015LineModeFailed as sqlite0015LineModeFailed } from './sqlite/migrations/0015-line-mode-failed.ts';
import { migration0016ReaderRows as sqlite0016ReaderRows } from './sqlite/migrations/0016-reader-rows.ts';
import { migration0017FileAttempts as sqlite0017FileAttempts } from './sqlite/migrations/0017-file-attempts.ts';
import { migration0018PushMapping as sqlite0018PushMapping } from './sqlite/migrations/0018-push-mapping.ts';
import { migration0019MergedRows as sqlite0019MergedRows } from './sqlite/migrations/0019-merged-rows.ts';
import { migration0020RefusedKeys as sqlite0020RefusedKeys } from './sqlite/migrations/0020-refused-keys.ts';

const MIGRATIONS: readonly (readonly [name: string, sqlite: Migration, postgres: Migration])[] = [
  ['0001_base', sqlite0001Base, postgres0001Base],
  ['0002_pull_outbox', sqlite0002PullOutbox, postgres0002PullOutbox],
  ['0003_push', sqlite0003Push, postgres0003Push],
  ['0004_ack_state', sqlite0004AckState, postgres0004AckState],
  ['0005_api_state', sqlite0005ApiState, postgres0005ApiState],
  ['0006_row_fates', sqlite0006RowFates, postgres0006RowFates],
  ['0007_feed', sqlite0007Feed, postgres0007Feed],
  ['0008_delta', sqlite0008Delta, postgres0008Delta],
  ['0009_ha_lease', sqlite0009HaLease, postgres0009HaLease],
  ['0010_fixes_file', sqlite0010FixesFile, postgres0010FixesFile],
  ['0011_record_fields', sqlite0011RecordFields, postgres0011RecordFields],
  ['0012_json_compression', sqlite0012JsonCompression, postgres0012JsonCompression],
  ['0013_reference_checks', sqlite0013ReferenceChecks, postgres0013ReferenceChecks],
  ['0014_line_hash', sqlite0014LineHash, postgres0014LineHash],
  ['0015_line_mode_failed', sqlite0015LineModeFailed, postgres0015LineModeFailed],
  ['0016_reader_rows', sqlite0016ReaderRows, postgres0016ReaderRows],
  ['0017_file_attempts', sqlite0017FileAttempts, postgres0017FileAttempts],
  ['0018_push_mapping', sqlite0018PushMapping, postgres0018PushMapping],
  ['0019_merged_rows', sqlite0019MergedRows, postgres0019MergedRows],
  ['0020_refused_keys', sqlite0020RefusedKeys, postgres0020RefusedKeys],
];

export const SQLITE_MIGRATIONS: Readonly<Record<string, Migration>> = Object.fromEntries(MIGRATIONS.map(([name, sqlite]) => [name, sqlite]));
export const POSTGRES_MIGRATIONS: Readonly<Record<string, Migration>> = Object.fromEntries(
  MIGRATIONS.map(([name, , postgres]) => [name, postgres]),
);
