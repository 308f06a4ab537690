import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { REDIS_MODES } from '../../libs/distributed-lock/src/core/config/connection-config.js';
import { LOCK_ENV_VARIABLES, readConnectionConfigFromEnv } from '../../libs/distributed-lock/src/core/config/env-config.parser.js';

/**
 * There is no Docker engine here, so docker-compose.yml is checked by reading it: every topology has a
 * profile whose app instances are configured, through the variables the documentation names, to reach
 * services of that same profile, in a form the library's own parser accepts.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The Markdown pages of the documentation site (what the README points to). */
function docsPages(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md') && !file.startsWith('api/'))
    .map((file) => `${dir}/${file}`);
}
/** What documents the repository: the README, CONTRIBUTING.md and the documentation site. */
const README = [`${ROOT}README.md`, `${ROOT}CONTRIBUTING.md`, ...docsPages(`${ROOT}docs`)].map((file) => readFileSync(file, 'utf8')).join('\n');

interface Service {
  image?: string;
  build?: unknown;
  profiles?: string[];
  ports?: string[];
  environment?: Record<string, string | number>;
  command?: string | string[];
  depends_on?: Record<string, unknown>;
  hostname?: string;
}

const compose = parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const APP_VARIABLES = ['HOST', 'PORT', 'INSTANCE_ID', 'INVENTORY_WORK_MS', 'INVENTORY_LEASE_TIME', 'INVENTORY_TRY_WAIT', 'INVENTORY_TRY_LEASE'];
const apps = Object.entries(services).filter(([, service]) => service.build !== undefined);

/** The port a Redis service listens on, from its command line. */
function listenPort(service: Service): number {
  const command = Array.isArray(service.command) ? service.command.join(' ') : (service.command ?? '');
  const match = /(?:--port |port )(\d+)/.exec(command);
  if (!match) throw new Error(`no port in ${command}`);
  return Number(match[1]);
}

describe('docker-compose.yml', () => {
  it('has one profile per deployment mode, each with two app instances of that mode', () => {
    for (const mode of REDIS_MODES) {
      const instances = apps.filter(([, service]) => service.profiles?.includes(mode));
      expect({ mode, instances: instances.length }).toEqual({ mode, instances: 2 });
      for (const [, service] of instances) expect(service.environment?.DISTRIBUTED_LOCK_REDIS_MODE).toBe(mode);
    }
  });

  it.each(apps.map(([name]) => name))('%s: its Redis settings parse, and every address is a service of its profile on its port', (name) => {
    const service = services[name]!;
    const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]));
    const config = readConnectionConfigFromEnv(env);
    const addresses =
      'nodes' in config
        ? config.nodes
        : 'sentinels' in config
          ? config.sentinels
          : 'master' in config
            ? [config.master, ...config.replicas]
            : [{ host: config.host!, port: config.port! }];
    const profile = service.profiles![0]!;
    for (const { host, port } of addresses) {
      const target = services[host];
      expect({ host, exists: target !== undefined }).toEqual({ host, exists: true });
      expect(target!.profiles).toContain(profile);
      expect(listenPort(target!)).toBe(port);
    }
    for (const dependency of Object.keys(service.depends_on ?? {})) expect(services[dependency]).toBeDefined();
  });

  it('uses only documented variables, and the documentation names each of them', () => {
    for (const [name, service] of apps) {
      for (const variable of Object.keys(service.environment ?? {})) {
        const known = (LOCK_ENV_VARIABLES as readonly string[]).includes(variable) || APP_VARIABLES.includes(variable);
        expect({ service: name, variable, known }).toEqual({ service: name, variable, known: true });
        expect({ variable, inReadme: README.includes(`\`${variable}\``) }).toEqual({ variable, inReadme: true });
      }
    }
  });

  it('publishes each app on its own host port, and the documentation names the profiles and ports', () => {
    const hostPorts = apps.flatMap(([, service]) => (service.ports ?? []).map((mapping) => mapping.split(':')[0]));
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
    for (const mode of REDIS_MODES) expect(README).toContain(`docker compose --profile ${mode} up`);
    for (const port of hostPorts) expect(README).toContain(String(port));
  });
});
