/**
 * Claiming a complete file: the ledger row first, then the rename into processing/, then the content hash (of the
 * file as it will be sent). A crash between any two steps is repaired by `recoverClaim` at start-up:
 *
 * - row 'claiming', file still in the inbox: the rename is done again;
 * - row 'claiming', file in processing/: hashed again, then claimed;
 * - neither: the file vanished before it was ours; the row is closed as failed.
 *
 * The same content already done for the same entity is not sent again (unless forced): it is archived as a
 * duplicate with a report naming the earlier file and its source. Unless the source's mapping changed since that
 * content was done by it: a mapping fix is a new push, and the file is sent again (its report says why).
 */
import { createHash } from 'node:crypto';
import { lstat, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import { pathExists } from '../../path-exists.ts';
import type { StateDb } from '../../store/state-db.ts';
import {
  beginClaimRow,
  dropClaim,
  findDoneByContent,
  setContentHash,
  setProcessingPath,
  setStatus,
  type PushFile,
} from '../../store/push-ledger.ts';
import { moveFile, ownFolder, processingDir, processingPath } from '../folders.ts';
import { InboxFileError, inboxFoldersProblem, openInboxFile, sameFile } from '../inbox-file.ts';
import { committed } from './file-run.ts';

export interface ClaimSource {
  /** The source name (or `cli:<entity>` for `push --entity`). */
  readonly name: string;
  readonly entity: string;
  readonly mode: 'bulk' | 'import';
  /** Absolute inbox folder. */
  readonly inbox: string;
  readonly batchSize: number;
  /** The file's name is data (file_name groups): the same bytes under another name are not a duplicate. */
  readonly nameIsData?: boolean;
  /**
   * Delta sources compare every file row by row, even one whose content was sent before (a row changed on the
   * platform since is put right by it): no file of theirs is skipped as a duplicate.
   */
  readonly comparesEveryFile?: boolean;
  /** The fingerprint of the source's mapping (delta/fingerprint.ts): the same content under another one is sent. */
  readonly mapping?: string;
}

/** `file`: the ledger row as the claim committed it, the start of the file's run (file-run.ts). */
export type ClaimResult =
  | { kind: 'claimed'; fileId: number; file: PushFile }
  | { kind: 'duplicate'; fileId: number; file: PushFile; duplicateOf: PushFile }
  /** `claimed`: a claim begun (its row, the move) for something that must not be read, now at `path`. */
  | { kind: 'refused'; reason: string; claimed?: { fileId: number; path: string } }
  | { kind: 'vanished' };

/** `push` as a person would type it to send `file`'s content (now at `path`) again. */
export function pushAgain(file: Pick<PushFile, 'source' | 'entity'>, path: string): string {
  const target = file.source.startsWith('cli:') ? `--entity ${file.entity}` : `--source ${file.source}`;
  return `pricing-agent push ${JSON.stringify(path)} ${target} --force`;
}

/** What the report of a duplicate says: which file and source sent the content, and how to send it anyway. */
export function duplicateNote(file: PushFile, earlier: PushFile, finalPath: string): string {
  const by = earlier.source === file.source ? 'this source' : `source ${JSON.stringify(earlier.source)}`;
  return `the same content was already sent by ${by} as ${JSON.stringify(earlier.original_name)} (file #${earlier.id}, done ${earlier.finished_at ?? '?'}) and is not sent again; to send it anyway: ${pushAgain(file, finalPath)}`;
}

/** What the report of a file sent again because its source's mapping changed says. */
export function remappedNote(earlier: PushFile): string {
  return `mapping changed since the last push: the same content was sent as ${JSON.stringify(earlier.original_name)} (file #${earlier.id}, done ${earlier.finished_at ?? '?'}) under the source's earlier mapping, and is sent again`;
}

/** Reads of 1 MiB: the stream's default 64 KiB made hashing an 80 MB file take twice as long (docs/performance.md). */
const HASH_READ_BYTES = 1024 * 1024;

export async function sha256Of(file: string): Promise<string> {
  const handle = await openInboxFile(file);
  try {
    return await sha256OfHandle(handle);
  } finally {
    await handle.close();
  }
}

/** The sha256 of what `handle` holds (read from its start). */
async function sha256OfHandle(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  // Two buffers, reused: the next piece is read while this one is hashed, and no buffer is allocated per piece (a new
  // mebibyte per piece made the garbage collector a fifth of a large file's claim).
  let current = Buffer.allocUnsafe(HASH_READ_BYTES);
  let next = Buffer.allocUnsafe(HASH_READ_BYTES);
  let reading: Promise<{ bytesRead: number }> | null = null;
  try {
    let position = 0;
    reading = handle.read(current, 0, HASH_READ_BYTES, position);
    for (;;) {
      const { bytesRead } = await reading;
      reading = null;
      if (bytesRead === 0) break;
      position += bytesRead;
      reading = handle.read(next, 0, HASH_READ_BYTES, position);
      hash.update(current.subarray(0, bytesRead));
      [current, next] = [next, current];
    }
    return hash.digest('hex');
  } finally {
    await reading?.catch(() => undefined);
  }
}

function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * Why `file` may not be read, or null. A symlink (or a path through one) that leads outside the inbox is refused:
 * a link dropped into a share must not make the agent read files it was not given.
 */
export async function refusalOf(inbox: string, file: string): Promise<string | null> {
  const info = await lstat(file);
  const real = await realpath(file);
  const realInbox = await realpath(inbox);
  if (!isInside(realInbox, real)) {
    return info.isSymbolicLink() ? 'symlink pointing outside the inbox' : 'path resolves outside the inbox';
  }
  if (!(await stat(real)).isFile()) return 'not a regular file';
  return null;
}

/** Claims `file` (in the source's inbox) for sending. */
export async function claimFile(db: StateDb, source: ClaimSource, file: string, options: { force?: boolean } = {}): Promise<ClaimResult> {
  let refusal: string | null;
  try {
    refusal = await refusalOf(source.inbox, file);
  } catch {
    return { kind: 'vanished' };
  }
  if (refusal !== null) return { kind: 'refused', reason: refusal };
  const folders = await inboxFoldersProblem(source.inbox);
  if (folders !== null) throw new InboxFileError(folders); // nothing moved: the inbox is not worked in
  await ownFolder(source.inbox, processingDir(source.inbox)); // never a claim through a planted symlink
  // Opened once, without following a link: the file moved into processing/ must be this one (its device and inode),
  // whatever a group member swaps into the inbox between the check above and the move.
  let dropped: FileHandle;
  try {
    dropped = await openInboxFile(file);
  } catch (error) {
    if (error instanceof InboxFileError) return { kind: 'refused', reason: error.message };
    return { kind: 'vanished' };
  }
  const opened = await dropped.stat().finally(() => dropped.close());
  const size = opened.size;
  const name = basename(file);
  // The id names the processing file, so the row comes first; its hash is filled in once the file is ours.
  const begun = await beginClaimRow(db, {
    source: source.name,
    entity: source.entity,
    mode: source.mode,
    originalName: name,
    inbox: source.inbox,
    processingPath: '',
    sha256: '',
    size,
    batchSize: source.batchSize,
    forced: options.force === true,
    mapping: source.mapping ?? null,
  });
  const fileId = begun.id;
  const target = processingPath(source.inbox, fileId, name);
  await setProcessingPath(db, fileId, target);
  try {
    await moveFile(file, target);
  } catch {
    await dropClaim(db, fileId);
    return { kind: 'vanished' };
  }
  const moved = await lstat(target);
  if (!moved.isFile() || !sameFile(moved, opened)) {
    // Swapped between the open and the move: what is in processing/ now was not given to the agent. It is not read;
    // the claim fails the file (its report says why) and the swapped-in thing stays where it is for a person to see.
    return { kind: 'refused', reason: 'the file was replaced while it was being claimed; drop it again', claimed: { fileId, path: target } };
  }
  const force = options.force === true || source.comparesEveryFile === true;
  return completeClaim(db, begun, target, force, source.nameIsData === true ? name : undefined);
}

type Claimed = Pick<PushFile, 'id' | 'source' | 'entity' | 'mapping'>;

/**
 * Hashes the claimed file and decides: claimed, or a duplicate of content already done (under the same name) by
 * another source or under the same mapping.
 */
async function completeClaim(db: StateDb, file: Claimed, path: string, force: boolean, name?: string): Promise<ClaimResult> {
  const fileId = file.id;
  const sha256 = await sha256Of(path);
  const earlier = force ? undefined : await findDoneByContent(db, file.entity, sha256, name, file.source, file.mapping);
  const hashed = committed(await setContentHash(db, fileId, sha256), fileId);
  if (earlier) return { kind: 'duplicate', fileId, file: hashed, duplicateOf: earlier };
  return { kind: 'claimed', fileId, file: committed(await setStatus(db, fileId, 'claimed'), fileId) };
}


/** Completes a claim a crash interrupted (status 'claiming'). */
export async function recoverClaim(db: StateDb, file: PushFile, nameIsData = false, comparesEveryFile = false): Promise<ClaimResult> {
  const name = nameIsData ? file.original_name : undefined;
  const force = file.forced === 1 || comparesEveryFile;
  const inboxPath = join(file.inbox, file.original_name);
  let target = file.processing_path;
  if (target === '') {
    // Cut short between the row and its processing name (found by the chaos suite): nothing was moved yet, so a
    // file still in the inbox is this claim's. Closing the row as FILE_VANISHED instead wrote a failed report, and
    // the watcher then claimed the same file again: two reports for one drop.
    if (!(await pathExists(inboxPath))) return { kind: 'vanished' };
    target = processingPath(file.inbox, file.id, file.original_name);
    await setProcessingPath(db, file.id, target);
  }
  if (await pathExists(target)) return completeClaim(db, file, target, force, name);
  if (await pathExists(inboxPath)) {
    await moveFile(inboxPath, target);
    return completeClaim(db, file, target, force, name);
  }
  return { kind: 'vanished' };
}
