/**
 * Jest in native ESM mode (`node --experimental-vm-modules`), TypeScript through ts-jest.
 * Unit specs live next to the code (*.spec.ts); end-to-end tests against real redis-server
 * processes live under test/ (*.e2e-spec.ts). Tests import the library from source; worker
 * processes they spawn import the built package (npm run build runs first).
 */
export default {
  testEnvironment: 'node',
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^nestjs-distributed-lock$': '<rootDir>/libs/distributed-lock/src/index.ts',
    '^nestjs-distributed-lock/testing$': '<rootDir>/libs/distributed-lock/src/testing/index.ts',
    '^nestjs-distributed-lock/board$': '<rootDir>/libs/distributed-lock/src/board/index.ts',
    '^redis-topology$': '<rootDir>/libs/redis-topology/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // A CommonJS source of the library (`<name>.require.cts`, built to `.cjs`), imported by its built
    // name. Only those: packages import their own relative `.cjs` files (@opentelemetry's do).
    '^(\\.{1,2}/.*\\.require)\\.cjs$': '$1.cts',
  },
  transform: {
    '^.+\\.c?ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30_000,
  // Three files at a time on the 2-core test machine: most end-to-end files spend most of their time
  // waiting (leases running out, servers starting, npm's registry), about a third of it on the CPU.
  maxWorkers: 3,
  // Longest files first (a fresh machine has no timings of an earlier run to order by).
  testSequencer: '<rootDir>/test/longest-first.sequencer.mjs',
};
