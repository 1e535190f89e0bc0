// Flat config: typescript-eslint with type information; workflow determinism rules under workflows/.
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

module.exports = tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      '.test-tmp/**',
      'coverage/**',
      '*.config.js',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='process'][callee.property.name='exit']",
          message: 'Only process entry files may exit.',
        },
      ],
    },
  },
  {
    files: [
      'workers/main.ts',
      'workers/cluster.ts',
      'workers/api.ts',
      'workers/worker.ts',
      'workers/keys-cli.ts',
      'workers/spaces-cli.ts',
      'activities/web/extract-process.ts',
      'test/unit/fixtures/pool-child.ts',
      'test/run-all.js',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Workflows must be deterministic: no Node built-ins, no activity implementations, no I/O libraries.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflows run in a deterministic sandbox: no Node built-ins.',
          })),
          patterns: [
            {
              group: ['../activities', '../activities/*', '../activities/**'],
              allowTypeImports: true,
              message: 'Workflows import activity types only (import type).',
            },
            {
              group: ['slonik', 'pg', 'koa', '@koa/*', 'ws', 'playwright-core', 'pino'],
              message: 'No I/O libraries in workflows.',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain CommonJS files (Jest reporter): no type information, Node globals.
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'commonjs',
      parserOptions: { projectService: false, project: false },
      globals: { module: 'writable', require: 'readonly', process: 'readonly', __dirname: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
