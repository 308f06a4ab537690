import type {
  ConnectionEvent,
  ConnectionStatus,
  PortedClient,
  PubSubPort,
  RedisCommands,
  RedisPort,
  ScriptSource,
} from '../../distributed-lock/src/core/redis/redis-port.js';
import { scriptName } from '../../distributed-lock/src/core/util/script-names.js';
import { Link } from './sim-link.js';
import { ReplyError } from './sim-server.js';

/** Builds a process's links to one server (command and subscriber connections). */
export type LinkFactory = (role: 'command' | 'subscriber', connected: boolean) => Link;

/** A script call as the story tells it: the script's name, then its keys and arguments. */
function describeScript(script: ScriptSource, keys: readonly string[], argv: readonly (string | number)[]): string {
  const name = scriptName(script.sha) ?? script.sha.slice(0, 8);
  // The registration names the real host and pid, the same for every simulated process and different
  // on every run: left out, so that a seed's story is the same text wherever it runs.
  const shown = argv.map((arg, i) => (argv[i - 1] === 'host' || argv[i - 1] === 'pid' ? '*' : arg));
  return `${name} ${keys.join(' ')} | ${shown.join(' ')}`;
}

/** The subscription side of a simulated connection. */
class SimSubscriber implements PubSubPort {
  readonly driver = 'port' as const;
  readonly shardedEverywhere = false;

  constructor(private readonly link: Link) {}

  get status(): ConnectionStatus {
    return this.link.status;
  }

  ping(): Promise<unknown> {
    return this.link.send({ kind: 'call', name: 'ping', args: [] }, 'PING');
  }

  connect(): Promise<void> {
    return this.link.connect();
  }

  async close(): Promise<void> {
    this.link.close();
  }

  disconnect(): void {
    this.link.close();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.link.on(event, listener);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.link.off(event, listener);
  }

  subscribe(channel: string): Promise<unknown> {
    return this.link.subscribe(channel);
  }

  unsubscribe(channel: string): Promise<unknown> {
    return this.link.unsubscribe(channel);
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.link.onMessage(listener);
  }

  onResubscribed(listener: (shardedOnly: boolean) => void): void {
    this.link.onResubscribed(() => listener(false));
  }
}

/**
 * The library's Redis port over a simulated connection: what a simulated process gives its LockClient
 * as `client` (a PortedClient). Scripts go as EVALSHA, and once as EVAL when the server answers
 * NOSCRIPT (as the real adapters do); group commit is on, as with a real client.
 */
export class SimPort implements RedisPort, PortedClient {
  readonly driver = 'port' as const;
  readonly isCluster = false;
  readonly groupCommit = true;
  readonly native: object = this;

  constructor(
    readonly link: Link,
    private readonly links: LinkFactory,
  ) {}

  redisPort(): RedisPort {
    return this;
  }

  get status(): ConnectionStatus {
    return this.link.status;
  }

  async runScript(script: ScriptSource, keys: readonly string[], argv: readonly (string | number)[]): Promise<unknown> {
    const args = argv.map(String);
    const label = describeScript(script, keys, argv);
    try {
      return await this.link.send({ kind: 'evalsha', sha: script.sha, keys, argv: args }, label);
    } catch (error) {
      if (!(error instanceof ReplyError) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.link.send({ kind: 'eval', lua: script.lua, keys, argv: args }, `EVAL ${label}`);
    }
  }

  private call(name: string, args: readonly (string | number)[]): Promise<unknown> {
    return this.link.send({ kind: 'call', name, args: args.map(String) }, `${name.toUpperCase()} ${args.join(' ')}`);
  }

  ping(): Promise<unknown> {
    return this.call('ping', []);
  }

  time(): Promise<readonly (string | number)[]> {
    return this.call('time', []) as Promise<string[]>;
  }

  get(key: string): Promise<string | null> {
    return this.call('get', [key]) as Promise<string | null>;
  }

  exists(key: string): Promise<number> {
    return this.call('exists', [key]) as Promise<number>;
  }

  pttl(key: string): Promise<number> {
    return this.call('pttl', [key]) as Promise<number>;
  }

  zcard(key: string): Promise<number> {
    return this.call('zcard', [key]) as Promise<number>;
  }

  hmget(key: string, fields: readonly string[]): Promise<(string | null)[]> {
    return this.call('hmget', [key, ...fields]) as Promise<(string | null)[]>;
  }

  hgetall(key: string): Promise<Record<string, string>> {
    return this.call('hgetall', [key]) as Promise<Record<string, string>>;
  }

  hset(key: string, pairs: readonly string[]): Promise<unknown> {
    return this.call('hset', [key, ...pairs]);
  }

  pexpire(key: string, ms: number): Promise<unknown> {
    return this.call('pexpire', [key, ms]);
  }

  del(key: string): Promise<unknown> {
    return this.call('del', [key]);
  }

  waitForReplicas(_key: string, replicas: number, timeoutMs: number): Promise<number> {
    return this.call('wait', [replicas, timeoutMs]) as Promise<number>;
  }

  serverCommand(args: readonly string[]): Promise<unknown> {
    const [name, ...rest] = args;
    return this.call(name!.toLowerCase(), rest);
  }

  isReplyError(error: unknown): boolean {
    return error instanceof ReplyError;
  }

  scan(_cursor: string, match: string, _count: number): Promise<[string, string[]]> {
    return this.call('scan', ['0', 'MATCH', match]) as Promise<[string, string[]]>;
  }

  async masters(): Promise<readonly RedisCommands[]> {
    return [this];
  }

  async connect(): Promise<void> {
    await this.link.connect();
  }

  async close(): Promise<void> {
    this.link.close();
  }

  disconnect(): void {
    this.link.close();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.link.on(event, listener);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.link.off(event, listener);
  }

  subscriber(): PubSubPort {
    return new SimSubscriber(this.links('subscriber', false));
  }
}
