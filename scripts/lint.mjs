#!/usr/bin/env node
// `npm run lint`: ESLint, Prettier's check, the import-cycle check and the layer check, side by side
// (each uses one core; one after the other they took about twice as long on the 2-core test machine).
// Each check's output is printed whole, in this order, once it has ended; the run fails if any failed.
import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../node_modules/.bin', import.meta.url));
const CHECKS = [
  ['eslint', '.'],
  ['prettier', '--check', '.'],
  [process.execPath, 'scripts/check-import-cycles.mjs'],
  [process.execPath, 'scripts/check-layers.mjs'],
];

function check([command, ...args]) {
  const title = [command === process.execPath ? 'node' : command, ...args].join(' ');
  return new Promise((resolve) => {
    const env = { ...process.env, PATH: `${BIN}${delimiter}${process.env.PATH}` };
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ title, code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ title, code: code ?? 1, output: signal ? `${output}killed by ${signal}\n` : output }));
  });
}

const runs = CHECKS.map(check);
let failed = 0;
for (const run of runs) {
  const { title, code, output } = await run;
  process.stdout.write(`> ${title}\n${output}`);
  if (code !== 0) {
    failed += 1;
    process.stdout.write(`${title} failed (exit code ${code})\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
