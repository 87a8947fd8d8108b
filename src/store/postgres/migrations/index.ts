/**
 * The PostgreSQL migrations, run at every read-write open (src/store/migrate.ts). Numbered like the SQLite ones
 * (sqlite/migrations/): the same name is the same change on both backends, so that `state migrate --to postgres`
 * and the table families find the same tables and columns on either.
 *
 * Adding a migration: write `NNNN-name.ts` exporting a `Migration`, import it and add one line to
 * POSTGRES_MIGRATIONS (and the same change to sqlite/migrations/). Names sort in run order.
 */
import type { Migration } from 'kysely/migration';
import { migration0001Base } from './0001-base.ts';
import { migration0002PullOutbox } from './0002-pull-outbox.ts';
import { migration0003Push } from './0003-push.ts';
import { migration0004AckState } from './0004-ack-state.ts';
import { migration0005ApiState } from './0005-api-state.ts';
import { migration0006RowFates } from './0006-row-fates.ts';
import { migration0007Feed } from './0007-feed.ts';
import { migration0008Delta } from './0008-delta.ts';
import { migration0009HaLease } from './0009-ha-lease.ts';
import { migration0010FixesFile } from './0010-fixes-file.ts';
import { migration0011RecordFields } from './0011-record-fields.ts';
import { migration0012JsonCompression } from './0012-json-compression.ts';
import { migration0013ReferenceChecks } from './0013-reference-checks.ts';
import { migration0014LineHash } from './0014-line-hash.ts';
import { migration0015LineModeFailed } from './0015-line-mode-failed.ts';
import { migration0016ReaderRows } from './0016-reader-rows.ts';
import { migration0017FileAttempts } from './0017-file-attempts.ts';
import { migration0018PushMapping } from './0018-push-mapping.ts';
import { migration0019MergedRows } from './0019-merged-rows.ts';
import { migration0020RefusedKeys } from './0020-refused-keys.ts';

export const POSTGRES_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_base': migration0001Base,
  '0002_pull_outbox': migration0002PullOutbox,
  '0003_push': migration0003Push,
  '0004_ack_state': migration0004AckState,
  '0005_api_state': migration0005ApiState,
  '0006_row_fates': migration0006RowFates,
  '0007_feed': migration0007Feed,
  '0008_delta': migration0008Delta,
  '0009_ha_lease': migration0009HaLease,
  '0010_fixes_file': migration0010FixesFile,
  '0011_record_fields': migration0011RecordFields,
  '0012_json_compression': migration0012JsonCompression,
  '0013_reference_checks': migration0013ReferenceChecks,
  '0014_line_hash': migration0014LineHash,
  '0015_line_mode_failed': migration0015LineModeFailed,
  '0016_reader_rows': migration0016ReaderRows,
  '0017_file_attempts': migration0017FileAttempts,
  '0018_push_mapping': migration0018PushMapping,
  '0019_merged_rows': migration0019MergedRows,
  '0020_refused_keys': migration0020RefusedKeys,
};
