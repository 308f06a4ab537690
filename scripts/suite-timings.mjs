#!/usr/bin/env node
// Refreshes test/suite-timings.json, the seconds each slow test file took, which the test sequencer
// (test/longest-first.sequencer.mjs) orders by on a machine without Jest's own cached timings (CI).
// Usage: node --experimental-vm-modules node_modules/jest/bin/jest.js --json --outputFile=/tmp/jest.json
//        node scripts/suite-timings.mjs /tmp/jest.json "what the run was: machine, workers, load"
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files faster than this keep Jest's own order (by size): only the long ones decide when the run ends. */
const MIN_SECONDS = 5;

const [report, measured] = process.argv.slice(2);
if (!report || !measured) {
  console.error('usage: node scripts/suite-timings.mjs <jest --json output> "<how it was measured>"');
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const seconds = Object.fromEntries(
  testResults
    .map((result) => [relative(root, result.name).split('\\').join('/'), Math.round((result.endTime - result.startTime) / 1000)])
    .filter(([, taken]) => taken >= MIN_SECONDS)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
);
const target = new URL('../test/suite-timings.json', import.meta.url);
writeFileSync(target, `${JSON.stringify({ measured, seconds }, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files of ${testResults.length} written to test/suite-timings.json`);
