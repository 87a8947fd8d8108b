/** Whether something stands at a path: the one check for "is it there yet" before a move or an export. */
import { stat } from 'node:fs/promises';

/** True when `path` names a file, a folder or a link to one; false when nothing (or nothing readable) is there. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
