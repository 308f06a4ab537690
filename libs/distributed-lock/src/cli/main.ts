#!/usr/bin/env node
/**
 * `npx nestjs-distributed-lock list|inspect|watch|force-unlock`: the command-line lock inspector (see
 * lock-cli.ts). Built into both the ES module and the CommonJS build; the package's `bin` runs the
 * ES module one. No top-level await, so that the CommonJS build compiles too.
 */
import { runCli } from './lock-cli.js';

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`nestjs-distributed-lock: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
