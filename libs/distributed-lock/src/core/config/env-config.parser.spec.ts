import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import { readConnectionConfigFromEnv } from './env-config.parser.js';
import { resolveLockClientOptions } from './resolve-lock-client-options.js';

function failure(env: Record<string, string>): InvalidLockConfigError {
  try {
    readConnectionConfigFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidLockConfigError);
    return error as InvalidLockConfigError;
  }
  throw new Error('expected the configuration to be refused');
}

describe('connection settings from the environment', () => {
  it('defaults to a single Redis on 127.0.0.1:6379', () => {
    expect(readConnectionConfigFromEnv({})).toEqual({ mode: 'single', host: '127.0.0.1', port: 6379 });
  });

  it('reads every mode', () => {
    expect(readConnectionConfigFromEnv({ REDIS_URL: 'rediss://u:p@h:6380/2' })).toEqual({ mode: 'single', url: 'rediss://u:p@h:6380/2' });
    expect(readConnectionConfigFromEnv({ REDIS_HOST: 'redis', REDIS_PORT: '6380', REDIS_DB: '3', REDIS_PASSWORD: 'pw' })).toEqual({
      mode: 'single',
      host: 'redis',
      port: 6380,
      db: 3,
      password: 'pw',
    });
    expect(readConnectionConfigFromEnv({ REDIS_MODE: 'cluster', REDIS_NODES: 'a:7000, b:7001,[::1]:7002' })).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(readConnectionConfigFromEnv({ REDIS_MODE: 'cluster', REDIS_NODES: 'a:7000', REDIS_NAT_MAP: '10.0.0.1:7000=localhost:17000' })).toEqual({
      mode: 'cluster',
      nodes: [{ host: 'a', port: 7000 }],
      natMap: { '10.0.0.1:7000': { host: 'localhost', port: 17000 } },
    });
    expect(readConnectionConfigFromEnv({ REDIS_MODE: 'master-slave', REDIS_MASTER: 'm:6379', REDIS_REPLICAS: 'r1:6379,r2:6379' })).toEqual({
      mode: 'master-slave',
      master: { host: 'm', port: 6379 },
      replicas: [
        { host: 'r1', port: 6379 },
        { host: 'r2', port: 6379 },
      ],
    });
    expect(
      readConnectionConfigFromEnv({
        REDIS_MODE: 'SENTINEL',
        REDIS_SENTINELS: 's1:26379,s2:26379',
        REDIS_SENTINEL_MASTER: 'mymaster',
        REDIS_SENTINEL_PASSWORD: 'sp',
      }),
    ).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      masterName: 'mymaster',
      sentinelPassword: 'sp',
    });
    expect(readConnectionConfigFromEnv({ REDIS_TLS: 'true', REDIS_USERNAME: 'locker' })).toMatchObject({ tls: true, username: 'locker' });
  });

  it.each([
    [{ REDIS_MODE: 'galaxy' }, 'REDIS_MODE', /single, cluster, master-slave, sentinel/],
    [{ REDIS_PORT: 'http' }, 'REDIS_PORT', /integer 1-65535/],
    [{ REDIS_PORT: '70000' }, 'REDIS_PORT', /integer 1-65535/],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL', /redis:\/\//],
    [{ REDIS_URL: 'redis://a', REDIS_HOST: 'b' }, 'REDIS_URL', /not both/],
    [{ REDIS_DB: '-1' }, 'REDIS_DB', /database index/],
    [{ REDIS_MODE: 'cluster' }, 'REDIS_NODES', /needs REDIS_NODES/],
    [{ REDIS_MODE: 'cluster', REDIS_NODES: 'a:7000,b' }, 'REDIS_NODES', /"b" is not host:port/],
    [{ REDIS_MODE: 'cluster', REDIS_NODES: ' , ' }, 'REDIS_NODES', /comma-separated/],
    [{ REDIS_MODE: 'cluster', REDIS_NODES: 'a:7000', REDIS_DB: '1' }, 'REDIS_DB', /only database 0/],
    [{ REDIS_MODE: 'cluster', REDIS_NODES: 'a:7000', REDIS_NAT_MAP: 'x' }, 'REDIS_NAT_MAP', /internal-host:port=external-host:port/],
    [{ REDIS_MODE: 'master-slave' }, 'REDIS_MASTER', /needs REDIS_MASTER/],
    [{ REDIS_MODE: 'master-slave', REDIS_MASTER: 'm:99999' }, 'REDIS_MASTER', /TCP port/],
    [{ REDIS_MODE: 'master-slave', REDIS_MASTER: 'm:1', REDIS_REPLICAS: 'r:x' }, 'REDIS_REPLICAS', /"r:x" is not host:port/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's:26379' }, 'REDIS_SENTINEL_MASTER', /master name/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINELS', /needs REDIS_SENTINELS/],
    [{ REDIS_TLS: 'maybe' }, 'REDIS_TLS', /boolean/],
    [{ REDIS_TLS: 'false', REDIS_TLS_CA_FILE: '/x' }, 'REDIS_TLS_CA_FILE', /enable TLS/],
    [{ REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }, 'REDIS_TLS_CA_FILE', /cannot read/],
  ])('refuses %p naming %s', (env, setting, message) => {
    const error = failure(env as Record<string, string>);
    expect(error.setting).toBe(setting);
    expect(error.code).toBe('LOCK_INVALID_CONFIG');
    expect(error.message).toContain(setting);
    expect(error.message).toMatch(message);
  });
});

describe('client options', () => {
  it('fills prefix, watchdog and timeouts from the environment, then from defaults', () => {
    const fromEnv = resolveLockClientOptions({ env: { LOCK_KEY_PREFIX: 'app:locks:', LOCK_WATCHDOG_TIMEOUT: '10s' } });
    expect(fromEnv).toMatchObject({ keyPrefix: 'app:locks:', watchdogTimeoutMs: 10_000, operationTimeoutMs: 5000, lazyConnect: false });
    const defaults = resolveLockClientOptions({ env: {} });
    expect(defaults).toMatchObject({ keyPrefix: 'lock:', watchdogTimeoutMs: 30_000 });
    const explicit = resolveLockClientOptions({ env: { LOCK_WATCHDOG_TIMEOUT: '10s' }, watchdogTimeout: 900, keyPrefix: 'x:' });
    expect(explicit).toMatchObject({ keyPrefix: 'x:', watchdogTimeoutMs: 900 });
  });

  it('replica acknowledgement waits 500 ms by default (a 100 ms tick, as in Dragonfly, needs the margin)', () => {
    expect(resolveLockClientOptions({ env: { LOCK_REPLICA_ACK: '1' } }).replicaAck).toEqual({ replicas: 1, timeoutMs: 500 });
    expect(resolveLockClientOptions({ env: {}, replicaAck: { replicas: 2 } }).replicaAck).toEqual({ replicas: 2, timeoutMs: 500 });
    expect(resolveLockClientOptions({ env: { LOCK_REPLICA_ACK: '1', LOCK_REPLICA_ACK_TIMEOUT: '100ms' } }).replicaAck).toEqual({ replicas: 1, timeoutMs: 100 });
  });

  it('oneSlotPerScript: off by default, from LOCK_ONE_SLOT_PER_SCRIPT, the option winning', () => {
    expect(resolveLockClientOptions({ env: {} }).oneSlotPerScript).toBe(false);
    expect(resolveLockClientOptions({ env: { LOCK_ONE_SLOT_PER_SCRIPT: 'true' } }).oneSlotPerScript).toBe(true);
    expect(resolveLockClientOptions({ env: { LOCK_ONE_SLOT_PER_SCRIPT: '1' }, oneSlotPerScript: false }).oneSlotPerScript).toBe(false);
  });

  it.each([
    [{ env: { LOCK_WATCHDOG_TIMEOUT: '10 years' } }, 'LOCK_WATCHDOG_TIMEOUT'],
    [{ env: { LOCK_WATCHDOG_TIMEOUT: '10' } }, 'LOCK_WATCHDOG_TIMEOUT'],
    [{ env: {}, watchdogTimeout: -1 }, 'watchdogTimeout'],
    [{ env: { LOCK_KEY_PREFIX: 'a{b}' } }, 'LOCK_KEY_PREFIX'],
    [{ env: {}, keyPrefix: 'has space' }, 'keyPrefix'],
    [{ env: {}, conection: {} }, 'conection'],
    [{ env: {}, connection: { mode: 'single', port: 0 } }, 'connection.port'],
    [{ env: {}, connection: { mode: 'cluster', nodes: [] } }, 'connection.nodes'],
    [{ env: {}, connection: { mode: 'sentinel', sentinels: [{ host: 'a', port: 1 }] } }, 'connection.masterName'],
    [{ env: {}, connection: { mode: 'single', nodes: [] } }, 'connection.nodes'],
    [{ env: {}, connection: { mode: 'single' }, client: {} }, 'client'],
    [{ env: { LOCK_ONE_SLOT_PER_SCRIPT: 'sometimes' } }, 'LOCK_ONE_SLOT_PER_SCRIPT'],
    [{ env: {}, oneSlotPerScript: 'yes' }, 'oneSlotPerScript'],
  ])('refuses %p naming %s', (options, setting) => {
    let caught: unknown;
    try {
      resolveLockClientOptions(options as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidLockConfigError);
    expect((caught as InvalidLockConfigError).setting).toBe(setting);
  });
});
