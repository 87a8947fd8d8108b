/**
 * The push ledger as a crash in the middle of claimFile (src/ingest/file/claim.ts) leaves it: the file's row begun
 * ('claiming', no hash or size yet) and, with `named`, its processing name recorded; the file itself not moved yet.
 */
import { processingPath } from '../../src/ingest/folders.ts';
import type { PushSource } from '../../src/ingest/file/push-file.ts';
import { beginClaim, setProcessingPath } from '../../src/store/push-ledger.ts';
import type { StateDb } from '../../src/store/state-db.ts';

export async function crashedClaim(db: StateDb, source: PushSource, name: string, named: boolean): Promise<number> {
  const { inbox, entity, mode, batchSize } = source;
  const begun = { processingPath: '', sha256: '', size: 0, forced: false };
  const id = await beginClaim(db, { source: source.name, entity, mode, inbox, batchSize, originalName: name, ...begun });
  if (named) await setProcessingPath(db, id, processingPath(inbox, id, name));
  return id;
}
