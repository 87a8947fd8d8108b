/** Parsers of command arguments that more than one command takes: a mistake in one is a usage mistake (exit 2). */
import { InvalidArgumentError } from 'commander';
import { readUuid } from '../../api/schemas/index.ts';

/**
 * An id the API gives as a UUID (a job, an export): UUID-shaped, any version and variant, as the API's ids are read.
 * Checked before anything is sent: `jobs show not-a-uuid` exited 1 naming an internal operation (`jobs.get`).
 */
export function uuidArgument(raw: string): string {
  if (!readUuid.safeParse(raw.trim()).success) throw new InvalidArgumentError('expected a UUID (8-4-4-4-12 hexadecimal digits)');
  return raw.trim();
}
