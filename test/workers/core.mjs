// What the workers use of the built package: its framework-free core (LockClient), which the main
// entry re-exports as it is (`export * from './core/index.js'`). The main entry also loads NestJS for
// its module and decorators: about 0.7 s of CPU per process (1.1 s in all, against 0.4 s for the core),
// and the suite starts about 200 worker processes. Workers that run a Nest app import the main entry.
export { LockClient } from '../../libs/distributed-lock/dist/core/index.js';
