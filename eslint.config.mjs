// ESLint for the whole workspace (npm run lint): typescript-eslint's recommended rules, and the
// library's files kept small. Import cycles are checked by scripts/check-import-cycles.mjs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const TIME_PORT = 'Time is a port: use the Clock this code is given.';
/** Modules of Node.js that read the clock or set timers (see the time-port rules below). */
const TIME_MODULES = ['node:perf_hooks', 'node:timers', 'node:timers/promises'].map((name) => ({ name, message: TIME_PORT }));
const NO_TEST_DOUBLES = {
  group: ['**/memory/**', '**/testing/**'],
  message: 'Production code never imports the in-memory store: it reaches the library through its port.',
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'results/**', '.tmp/**', '.cache/**', 'coverage/**', '**/*.d.mts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        performance: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['libs/distributed-lock/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  // Time is a port (core/util/clock.ts): production code reads the clock and sets timers only through
  // the Clock it is given, so that a test or the simulator can run it in virtual time. And it never
  // reaches the in-memory store (the store reaches the library through its port, see PortedClient).
  {
    files: ['libs/distributed-lock/src/{core,nest,board,cli}/**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/distributed-lock/src/core/util/clock.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'performance', 'queueMicrotask'].map((name) => ({
          name,
          message: 'Time is a port: use the Clock this code is given (core/util/clock.ts).',
        })),
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='Date'][property.name='now']", message: 'Time is a port: use clock.wallNow().' },
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Time is a port: use new Date(clock.wallNow()).' },
        { selector: "MemberExpression[object.name='process'][property.name='hrtime']", message: 'Time is a port: use clock.now().' },
      ],
      'no-restricted-imports': ['error', { paths: TIME_MODULES, patterns: [NO_TEST_DOUBLES] }],
    },
  },
  // The Nest layer and the lock board sit on the public core: they import core/ only through the entry
  // users import (core/index.ts) or the one documented internal entry (core/internal.ts), never a file
  // deeper in. (This block repeats the rules above: a later block replaces a rule's options.)
  {
    files: ['libs/distributed-lock/src/{nest,board}/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: TIME_MODULES,
          patterns: [
            NO_TEST_DOUBLES,
            {
              group: ['../core/*', '!../core/index.js', '!../core/internal.js', '../core/*/**'],
              message:
                'nest/ and board/ import core only through ../core/index.js (public) or ../core/internal.js (internal entry): export what they need there.',
            },
          ],
        },
      ],
    },
  },
);
