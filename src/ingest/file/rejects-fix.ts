/**
 * Fix and drop again (issue 16, README): a `<name>.rejects.csv` the agent wrote, corrected by a person and dropped
 * back into the source's inbox, is tied to the file whose rejects it holds. The name decides the tie: the stem
 * before `.rejects.csv` is the name that file was archived under (`prices.17.csv` when the day's archive already had
 * a `prices.csv`) or dropped as, among the source's finished files before it, the newest first. The reader
 * recognises the layout itself (read/fix-records.ts), whatever the name; a fix whose name ties it to nothing is
 * pushed as such, without the tie.
 *
 * A fix reads `{file.*}` (file_name groups, `{file.name}`) from the first file of the chain (a fix of a fix leads
 * back to it), so that a store code in the original's name still applies to its corrected rows.
 */
import { basename } from 'node:path';
import { filesNamed, getFile, type PushFile } from '../../store/push-ledger.ts';
import type { FileRun } from './file-run.ts';
import type { StateDb } from '../../store/state-db.ts';
import { rejectsStem } from './rejects-csv.ts';

/** The finished file of the same source whose rejects CSV `file`'s name is; null when there is none. */
export async function fixedFileOf(db: StateDb, file: PushFile): Promise<PushFile | null> {
  const stem = rejectsStem(file.original_name);
  if (stem === null) return null;
  const candidates = await filesNamed(db, file.source, stem, file.id);
  return candidates.find((f) => f.final_path !== null && basename(f.final_path) === stem) ?? candidates.find((f) => f.original_name === stem) ?? null;
}

/** Ties the run's file to the one it fixes (once, in the ledger); the file it fixes, or null. */
export async function tieFix(db: StateDb, run: FileRun): Promise<PushFile | null> {
  if (run.file.fixes_file_id !== null) return run.fixedFile();
  const fixed = await fixedFileOf(db, run.file);
  if (fixed !== null) await run.setFixes(fixed);
  return fixed;
}

/** The name `{file.*}` reads for `file`: the first file of its chain of fixes. */
export async function nameForTemplates(db: StateDb, file: PushFile, fixed: PushFile | null): Promise<string> {
  let current = fixed;
  let name = file.original_name;
  for (let hops = 0; current !== null && hops < 100; hops++) {
    name = current.original_name;
    current = current.fixes_file_id === null ? null : ((await getFile(db, current.fixes_file_id)) ?? null);
  }
  return name;
}
