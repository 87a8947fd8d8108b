// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    // No room above store/ knows which backend holds the state (docs/architecture.md): database drivers and the
    // store's SQL layer are imported in src/store/ only (tests and benches may look behind it).
    files: ['src/**/*.ts'],
    // duplicate-keys.ts sorts a file's keys in a private scratch SQLite database of its own, never the state.
    ignores: ['src/store/**', 'src/ingest/duplicate-keys.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'better-sqlite3', message: 'SQL lives in src/store/: add a function to a table family there.' },
            { name: 'pg', message: 'SQL lives in src/store/: add a function to a table family there.' },
            { name: 'kysely', message: 'SQL lives in src/store/: add a function to a table family there.' },
          ],
          patterns: [
            {
              group: ['**/store/sqlite/**', '**/store/postgres/**', '**/store/sql-db.ts', '**/store/dialect.ts', '**/store/migrate.ts'],
              message: 'Only src/store/ knows the backends and their SQL: use a table family function and StateDb.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
