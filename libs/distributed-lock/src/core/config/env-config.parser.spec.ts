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
    expect(readConnectionConfigFromEnv({ DISTRIBUTED_LOCK_REDIS_URL: 'rediss://u:p@h:6380/2' })).toEqual({ mode: 'single', url: 'rediss://u:p@h:6380/2' });
    expect(
      readConnectionConfigFromEnv({
        DISTRIBUTED_LOCK_REDIS_HOST: 'redis',
        DISTRIBUTED_LOCK_REDIS_PORT: '6380',
        DISTRIBUTED_LOCK_REDIS_DB: '3',
        DISTRIBUTED_LOCK_REDIS_PASSWORD: 'pw',
      }),
    ).toEqual({
      mode: 'single',
      host: 'redis',
      port: 6380,
      db: 3,
      password: 'pw',
    });
    expect(readConnectionConfigFromEnv({ DISTRIBUTED_LOCK_REDIS_MODE: 'cluster', DISTRIBUTED_LOCK_REDIS_NODES: 'a:7000, b:7001,[::1]:7002' })).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(
      readConnectionConfigFromEnv({
        DISTRIBUTED_LOCK_REDIS_MODE: 'cluster',
        DISTRIBUTED_LOCK_REDIS_NODES: 'a:7000',
        DISTRIBUTED_LOCK_REDIS_NAT_MAP: '10.0.0.1:7000=localhost:17000',
      }),
    ).toEqual({
      mode: 'cluster',
      nodes: [{ host: 'a', port: 7000 }],
      natMap: { '10.0.0.1:7000': { host: 'localhost', port: 17000 } },
    });
    expect(
      readConnectionConfigFromEnv({
        DISTRIBUTED_LOCK_REDIS_MODE: 'master-slave',
        DISTRIBUTED_LOCK_REDIS_MASTER: 'm:6379',
        DISTRIBUTED_LOCK_REDIS_REPLICAS: 'r1:6379,r2:6379',
      }),
    ).toEqual({
      mode: 'master-slave',
      master: { host: 'm', port: 6379 },
      replicas: [
        { host: 'r1', port: 6379 },
        { host: 'r2', port: 6379 },
      ],
    });
    expect(
      readConnectionConfigFromEnv({
        DISTRIBUTED_LOCK_REDIS_MODE: 'SENTINEL',
        DISTRIBUTED_LOCK_REDIS_SENTINELS: 's1:26379,s2:26379',
        DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER: 'mymaster',
        DISTRIBUTED_LOCK_REDIS_SENTINEL_PASSWORD: 'sp',
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
    expect(readConnectionConfigFromEnv({ DISTRIBUTED_LOCK_REDIS_TLS: 'true', DISTRIBUTED_LOCK_REDIS_USERNAME: 'locker' })).toMatchObject({
      tls: true,
      username: 'locker',
    });
  });

  it.each([
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'galaxy' }, 'DISTRIBUTED_LOCK_REDIS_MODE', /single, cluster, master-slave, sentinel/],
    [{ DISTRIBUTED_LOCK_REDIS_PORT: 'http' }, 'DISTRIBUTED_LOCK_REDIS_PORT', /integer 1-65535/],
    [{ DISTRIBUTED_LOCK_REDIS_PORT: '70000' }, 'DISTRIBUTED_LOCK_REDIS_PORT', /integer 1-65535/],
    [{ DISTRIBUTED_LOCK_REDIS_URL: 'localhost:6379' }, 'DISTRIBUTED_LOCK_REDIS_URL', /redis:\/\//],
    [{ DISTRIBUTED_LOCK_REDIS_URL: 'redis://a', DISTRIBUTED_LOCK_REDIS_HOST: 'b' }, 'DISTRIBUTED_LOCK_REDIS_URL', /not both/],
    [{ DISTRIBUTED_LOCK_REDIS_DB: '-1' }, 'DISTRIBUTED_LOCK_REDIS_DB', /database index/],
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'cluster' }, 'DISTRIBUTED_LOCK_REDIS_NODES', /needs DISTRIBUTED_LOCK_REDIS_NODES/],
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'cluster', DISTRIBUTED_LOCK_REDIS_NODES: 'a:7000,b' }, 'DISTRIBUTED_LOCK_REDIS_NODES', /"b" is not host:port/],
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'cluster', DISTRIBUTED_LOCK_REDIS_NODES: ' , ' }, 'DISTRIBUTED_LOCK_REDIS_NODES', /comma-separated/],
    [
      { DISTRIBUTED_LOCK_REDIS_MODE: 'cluster', DISTRIBUTED_LOCK_REDIS_NODES: 'a:7000', DISTRIBUTED_LOCK_REDIS_DB: '1' },
      'DISTRIBUTED_LOCK_REDIS_DB',
      /only database 0/,
    ],
    [
      { DISTRIBUTED_LOCK_REDIS_MODE: 'cluster', DISTRIBUTED_LOCK_REDIS_NODES: 'a:7000', DISTRIBUTED_LOCK_REDIS_NAT_MAP: 'x' },
      'DISTRIBUTED_LOCK_REDIS_NAT_MAP',
      /internal-host:port=external-host:port/,
    ],
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'master-slave' }, 'DISTRIBUTED_LOCK_REDIS_MASTER', /needs DISTRIBUTED_LOCK_REDIS_MASTER/],
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'master-slave', DISTRIBUTED_LOCK_REDIS_MASTER: 'm:99999' }, 'DISTRIBUTED_LOCK_REDIS_MASTER', /TCP port/],
    [
      { DISTRIBUTED_LOCK_REDIS_MODE: 'master-slave', DISTRIBUTED_LOCK_REDIS_MASTER: 'm:1', DISTRIBUTED_LOCK_REDIS_REPLICAS: 'r:x' },
      'DISTRIBUTED_LOCK_REDIS_REPLICAS',
      /"r:x" is not host:port/,
    ],
    [{ DISTRIBUTED_LOCK_REDIS_MODE: 'sentinel', DISTRIBUTED_LOCK_REDIS_SENTINELS: 's:26379' }, 'DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER', /master name/],
    [
      { DISTRIBUTED_LOCK_REDIS_MODE: 'sentinel', DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER: 'm' },
      'DISTRIBUTED_LOCK_REDIS_SENTINELS',
      /needs DISTRIBUTED_LOCK_REDIS_SENTINELS/,
    ],
    [{ DISTRIBUTED_LOCK_REDIS_TLS: 'maybe' }, 'DISTRIBUTED_LOCK_REDIS_TLS', /boolean/],
    [{ DISTRIBUTED_LOCK_REDIS_TLS: 'false', DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE: '/x' }, 'DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE', /enable TLS/],
    [{ DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }, 'DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE', /cannot read/],
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
    const fromEnv = resolveLockClientOptions({ env: { DISTRIBUTED_LOCK_KEY_PREFIX: 'app:locks:', DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: '10s' } });
    expect(fromEnv).toMatchObject({ keyPrefix: 'app:locks:', watchdogTimeoutMs: 10_000, operationTimeoutMs: 5000, lazyConnect: false });
    const defaults = resolveLockClientOptions({ env: {} });
    expect(defaults).toMatchObject({ keyPrefix: 'lock:', watchdogTimeoutMs: 30_000 });
    const explicit = resolveLockClientOptions({ env: { DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: '10s' }, watchdogTimeout: 900, keyPrefix: 'x:' });
    expect(explicit).toMatchObject({ keyPrefix: 'x:', watchdogTimeoutMs: 900 });
  });

  it('replica acknowledgement waits 500 ms by default (a 100 ms tick, as in Dragonfly, needs the margin)', () => {
    expect(resolveLockClientOptions({ env: { DISTRIBUTED_LOCK_REPLICA_ACK: '1' } }).replicaAck).toEqual({ replicas: 1, timeoutMs: 500 });
    expect(resolveLockClientOptions({ env: {}, replicaAck: { replicas: 2 } }).replicaAck).toEqual({ replicas: 2, timeoutMs: 500 });
    expect(resolveLockClientOptions({ env: { DISTRIBUTED_LOCK_REPLICA_ACK: '1', DISTRIBUTED_LOCK_REPLICA_ACK_TIMEOUT: '100ms' } }).replicaAck).toEqual({
      replicas: 1,
      timeoutMs: 100,
    });
  });

  it('oneSlotPerScript: off by default, from DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT, the option winning', () => {
    expect(resolveLockClientOptions({ env: {} }).oneSlotPerScript).toBe(false);
    expect(resolveLockClientOptions({ env: { DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT: 'true' } }).oneSlotPerScript).toBe(true);
    expect(resolveLockClientOptions({ env: { DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT: '1' }, oneSlotPerScript: false }).oneSlotPerScript).toBe(false);
  });

  it.each([
    [{ env: { DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: '10 years' } }, 'DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT'],
    [{ env: { DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: '10' } }, 'DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT'],
    [{ env: { DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: '30000' } }, 'DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT'], // no unit: 30000 ms or s?
    [{ env: {}, watchdogTimeout: -1 }, 'watchdogTimeout'],
    [{ env: { DISTRIBUTED_LOCK_KEY_PREFIX: 'a{b}' } }, 'DISTRIBUTED_LOCK_KEY_PREFIX'],
    [{ env: {}, keyPrefix: 'has space' }, 'keyPrefix'],
    [{ env: {}, conection: {} }, 'conection'],
    [{ env: {}, connection: { mode: 'single', port: 0 } }, 'connection.port'],
    [{ env: {}, connection: { mode: 'cluster', nodes: [] } }, 'connection.nodes'],
    [{ env: {}, connection: { mode: 'sentinel', sentinels: [{ host: 'a', port: 1 }] } }, 'connection.masterName'],
    [{ env: {}, connection: { mode: 'single', nodes: [] } }, 'connection.nodes'],
    [{ env: {}, connection: { mode: 'single' }, client: {} }, 'client'],
    [{ env: { DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT: 'sometimes' } }, 'DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT'],
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
