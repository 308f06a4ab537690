// `npm run setup`, the browser step: the lock board's browser test (test/board/board-browser.e2e-spec.ts)
// drives Debian's chromium through playwright-core, which downloads nothing. Installed with apt-get
// when missing and possible (root, or sudo without a password); never fails set-up: without a
// browser that test is skipped and says why. CHROMIUM_PATH points the test at another Chromium.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const DEFAULT_PATH = '/usr/bin/chromium';

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function version(path) {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

export function setupBrowser() {
  const given = process.env.CHROMIUM_PATH;
  if (given) {
    console.log(
      existsSync(given)
        ? `[setup] CHROMIUM_PATH=${given}: ${version(given) ?? 'present'}`
        : `[setup] note: CHROMIUM_PATH=${given} does not exist; the browser test will be skipped`,
    );
    return;
  }
  if (existsSync(DEFAULT_PATH)) {
    console.log(`[setup] ${version(DEFAULT_PATH) ?? DEFAULT_PATH}`);
    return;
  }
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = !isRoot && has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  if (!has('apt-get') || !(isRoot || sudo)) {
    console.log(
      "[setup] note: no chromium, and apt-get cannot install it here; the lock board's browser test will be skipped (install Chromium, or set CHROMIUM_PATH)",
    );
    return;
  }
  const apt = (args) => {
    const [command, prefix] = sudo ? ['sudo', ['-E', 'apt-get']] : ['apt-get', []];
    return (
      spawnSync(command, [...prefix, ...args], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000 }).status === 0
    );
  };
  console.log("[setup] chromium is missing; installing Debian's chromium package (for the lock board's browser test)");
  const install = ['install', '-y', '-qq', '--no-install-recommends', 'chromium'];
  const installed = apt(install) || (apt(['update', '-qq']) && apt(install));
  if (installed && existsSync(DEFAULT_PATH)) console.log(`[setup] ${version(DEFAULT_PATH) ?? 'chromium installed'}`);
  else console.log("[setup] note: chromium could not be installed; the lock board's browser test will be skipped");
}
