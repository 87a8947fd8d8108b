/**
 * A mistake in how something was asked for (an unknown id, a file that is not there, a refused release, a folder that
 * is not empty), found before anything was touched: the message says what to do instead, and `code` names the case
 * for scripts and tests. Rooms throw it (or a subclass); only cli/ decides what it means for an exit code
 * (cli/commands/exit-table.ts).
 */
export class UsageError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
