/**
 * The PostgreSQL state's settings and how messages name it, without the driver: a command on SQLite state never
 * loads pg (with its helpers 48 modules, about 35 ms of CPU a start), and one on PostgreSQL loads it to connect.
 */
import type { Config } from '../../config/index.ts';
import type { PostgresConfig } from '../../config/state-schema.ts';
import { StoreError } from '../errors.ts';

/** postgres://user@host:port/database (schema s): for messages; the URL never holds the password. */
export function describeLocation(config: PostgresConfig): string {
  return `${config.url} (schema ${config.schema})`;
}

/** The `state.postgres` section of a state on PostgreSQL; a config without one is refused. */
export function postgresOfState(state: Config['state']): PostgresConfig {
  if (state.postgres === null) throw new StoreError('INVALID_ARGUMENT', 'state.backend is postgres but state.postgres is not set');
  return state.postgres;
}
