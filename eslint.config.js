// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The rooms of src/ and the rooms each may import (docs/architecture.md, "The house"): an import of any other room
 * is an error. The top-level modules of src/ (log.ts, clock.ts, ...) may be imported by every room.
 */
const ROOMS = {
  api: [],
  config: ['api'],
  store: ['api', 'config'],
  outbox: ['api', 'config', 'store'],
  sandbox: ['api'],
  ingest: ['api', 'config', 'store'],
  pull: ['api', 'config', 'outbox', 'store'],
  feed: ['api', 'config', 'outbox', 'store'],
  status: ['api', 'config', 'feed', 'ingest', 'outbox', 'pull', 'store'],
  console: ['api', 'config', 'feed', 'ingest', 'status', 'store'],
  daemon: ['api', 'config', 'console', 'feed', 'ingest', 'outbox', 'pull', 'status', 'store'],
  demo: ['api', 'config', 'daemon', 'sandbox', 'status', 'store'],
  cli: ['api', 'config', 'console', 'daemon', 'demo', 'feed', 'ingest', 'outbox', 'pull', 'sandbox', 'status', 'store'],
};

/** Database drivers and the store's SQL layer: only src/store/ knows which backend holds the state. */
const DRIVERS = ['better-sqlite3', 'pg', 'kysely'].map((name) => ({ name, message: 'SQL lives in src/store/: add a function to a table family there.' }));
const BACKEND_INTERNALS = {
  group: ['**/store/sqlite/**', '**/store/postgres/**', '**/store/sql-db.ts', '**/store/dialect.ts', '**/store/migrate.ts'],
  message: 'Only src/store/ knows the backends and their SQL: use a table family function and StateDb.',
};

/** delta/ is entered through delta-plan.ts only (docs/architecture.md, "ingest/ inside"): from any module outside delta/. */
const DELTA_ENTRY = {
  regex: '(^|/)delta/(?!delta-plan\\.ts$)',
  message: 'Import delta/ through its entry, src/ingest/delta/delta-plan.ts (docs/architecture.md).',
};
/** delta/fast/, the machinery below delta/, imports none of delta's other modules: they are built on it. */
const FAST_BELOW_DELTA = {
  regex: '^\\.\\./[^/]+$',
  message: 'src/ingest/delta/fast/ sits below delta/: it may not import delta\'s other modules (docs/architecture.md).',
};

/** One no-restricted-imports config per room (a later config replaces the rule, so each carries all of its limits). */
function roomRules() {
  /** The rooms `room` may not import, as one pattern (none for cli/, which may import them all). */
  const roomsOutOfReach = (room) => {
    const allowed = ROOMS[room];
    const forbidden = Object.keys(ROOMS).filter((other) => other !== room && !allowed.includes(other));
    const may = allowed.length === 0 ? 'the top-level modules' : `${allowed.join(', ')} and the top-level modules`;
    return forbidden.length === 0 ? [] : [{ group: forbidden.map((other) => `**/${other}/**`), message: `src/${room}/ may import only ${may} (docs/architecture.md).` }];
  };
  return Object.keys(ROOMS).map((room) => {
    const store = room === 'store';
    return {
      files: [`src/${room}/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { paths: store ? [] : DRIVERS, patterns: store ? roomsOutOfReach(room) : [BACKEND_INTERNALS, DELTA_ENTRY, ...roomsOutOfReach(room)] }] },
    };
  }).concat([
    // Inside delta/ its modules import one another; delta/fast/ imports only its own and other rooms' modules.
    { files: ['src/ingest/delta/**/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: DRIVERS, patterns: [BACKEND_INTERNALS, ...roomsOutOfReach('ingest')] }] } },
    {
      files: ['src/ingest/delta/fast/**/*.ts'],
      rules: { 'no-restricted-imports': ['error', { paths: DRIVERS, patterns: [BACKEND_INTERNALS, FAST_BELOW_DELTA, ...roomsOutOfReach('ingest')] }] },
    },
    // The top-level modules are for every room: they import no room's internals either.
    { files: ['src/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: DRIVERS, patterns: [BACKEND_INTERNALS] }] } },
    // duplicate-keys.ts sorts a file's keys in a private scratch SQLite database of its own, never the state.
    {
      files: ['src/ingest/file/duplicate-keys.ts'],
      rules: {
        'no-restricted-imports': ['error', { paths: DRIVERS.filter((d) => d.name !== 'better-sqlite3'), patterns: [BACKEND_INTERNALS, DELTA_ENTRY, ...roomsOutOfReach('ingest')] }],
      },
    },
  ]);
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'node24/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...roomRules(),
  // src/node-http.ts says why: an import statement of node:http loads Node's own undici in every process.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/node-http.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: ['node:http', 'http'].map((name) => ({ name, allowTypeImports: true, message: 'Take node:http\'s functions from src/node-http.ts (types may be imported).' })),
      }],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
