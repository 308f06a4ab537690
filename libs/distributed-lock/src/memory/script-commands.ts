import type { MemoryKeyspace } from './memory-keyspace.js';
import { parseInteger, parseScore } from './redis-number.js';
import type { ScriptKeyAudit } from './strict-keys.js';

/** A status reply (`+OK`): what Lua sees as `{ok = 'OK'}`. */
export class StatusReply {
  constructor(readonly status: string) {}
}

/**
 * A Redis reply as the script bridge passes it on: integer, bulk string, nil, status, array; an
 * error reply is an `Error` (thrown by a command, or found inside an array a script returns).
 */
export type Reply = number | string | null | StatusReply | Error | Reply[];

const OK = new StatusReply('OK');

interface Command {
  /** Redis' convention: the number of words with the name, or -n for at least n. */
  arity: number;
  /** Which arguments are keys (Redis' key specs, for strict keys): every one (DEL, EXISTS), none (TIME, PUBLISH), else the first. */
  keys?: 'all' | 'none';
  run(keyspace: MemoryKeyspace, args: string[]): Reply;
}

/**
 * The commands a script can run on the in-memory store (`redis.call`, `redis.pcall`): those the
 * library's scripts use, plus a few list commands for tests' own scripts. Each one maps onto the
 * keyspace with Redis' argument parsing and reply types; nothing here knows any script.
 */
const COMMANDS: Record<string, Command> = {
  time: {
    arity: 1,
    keys: 'none',
    run: (ks) => {
      const ms = ks.serverTimeMs();
      return [String(Math.floor(ms / 1000)), String((ms % 1000) * 1000)];
    },
  },
  exists: { arity: -2, keys: 'all', run: (ks, keys) => ks.exists(...keys) },
  del: { arity: -2, keys: 'all', run: (ks, keys) => ks.del(...keys) },
  pexpire: { arity: 3, run: (ks, [key, ms]) => ks.pexpire(key!, parseInteger(ms!)) },
  pexpireat: { arity: 3, run: (ks, [key, at]) => ks.pexpire(key!, parseInteger(at!) - ks.serverTimeMs()) },
  pttl: { arity: 2, run: (ks, [key]) => ks.pttl(key!) },

  get: { arity: 2, run: (ks, [key]) => ks.get(key!) },
  set: {
    arity: -3,
    run: (ks, [key, value, ...options]) => {
      let px: number | undefined;
      let nx = false;
      for (let i = 0; i < options.length; i++) {
        const option = options[i]!.toUpperCase();
        if (option === 'NX') nx = true;
        else if ((option === 'PX' || option === 'EX') && i + 1 < options.length) {
          const amount = parseInteger(options[++i]!);
          if (amount <= 0) throw new Error("ERR invalid expire time in 'set' command");
          px = option === 'PX' ? amount : amount * 1000;
        } else throw unsupported(`SET option ${option}`);
      }
      return ks.set(key!, value!, { px, nx }) === null ? null : OK;
    },
  },
  incr: { arity: 2, run: (ks, [key]) => ks.incr(key!) },
  incrby: { arity: 3, run: (ks, [key, by]) => ks.incrby(key!, parseInteger(by!)) },

  hget: { arity: 3, run: (ks, [key, field]) => ks.hget(key!, field!) },
  hmget: { arity: -3, run: (ks, [key, ...fields]) => ks.hmget(key!, ...fields) },
  hgetall: { arity: 2, run: (ks, [key]) => ks.hgetallFlat(key!) },
  hexists: { arity: 3, run: (ks, [key, field]) => ks.hexists(key!, field!) },
  hset: { arity: -4, run: (ks, [key, ...pairs]) => ks.hset(key!, ...pairs) },
  hdel: { arity: -3, run: (ks, [key, ...fields]) => ks.hdel(key!, ...fields) },
  hincrby: { arity: 4, run: (ks, [key, field, by]) => ks.hincrby(key!, field!, parseInteger(by!)) },

  zadd: {
    arity: -4,
    run: (ks, [key, ...pairs]) => {
      const option = pairs[0]!.toUpperCase();
      if (['NX', 'XX', 'GT', 'LT', 'CH', 'INCR'].includes(option)) throw unsupported(`ZADD option ${option}`);
      if (pairs.length % 2 !== 0) throw new Error('ERR syntax error');
      const scores = pairs.filter((_, i) => i % 2 === 0).map(parseScore); // all parsed before any is added, as Redis does
      return scores.reduce((added, score, i) => added + ks.zadd(key!, score, pairs[2 * i + 1]!), 0);
    },
  },
  zrem: { arity: -3, run: (ks, [key, ...members]) => ks.zrem(key!, ...members) },
  zscore: { arity: 3, run: (ks, [key, member]) => ks.zscore(key!, member!) },
  zcard: { arity: 2, run: (ks, [key]) => ks.zcard(key!) },
  zcount: { arity: 4, run: (ks, [key, min, max]) => ks.zcount(key!, min!, max!) },
  zrange: {
    arity: -4,
    run: (ks, [key, start, stop, ...options]) => ks.zrange(key!, parseInteger(start!), parseInteger(stop!), withScores('ZRANGE', options)),
  },
  zrangebyscore: {
    arity: -4,
    run: (ks, [key, min, max, ...options]) => ks.zrangebyscore(key!, min!, max!, withScores('ZRANGEBYSCORE', options)),
  },

  rpush: { arity: -3, run: (ks, [key, ...values]) => ks.rpush(key!, ...values) },
  lpush: { arity: -3, run: (ks, [key, ...values]) => ks.lpush(key!, ...values) },
  llen: { arity: 2, run: (ks, [key]) => ks.llen(key!) },
  lrange: { arity: 4, run: (ks, [key, start, stop]) => ks.lrange(key!, parseInteger(start!), parseInteger(stop!)) },

  publish: { arity: 3, keys: 'none', run: (ks, [channel, message]) => ks.publish(channel!, message!) },
};

/** Whether a range command's options ask for WITHSCORES, its only option supported here. */
function withScores(command: string, options: string[]): boolean {
  if (options.length === 0) return false;
  if (options.length === 1 && options[0]!.toUpperCase() === 'WITHSCORES') return true;
  throw unsupported(`${command} option ${options[0]!.toUpperCase()}`);
}

function unsupported(what: string): Error {
  return new Error(`ERR the in-memory store of nestjs-distributed-lock/testing does not support ${what}; use a real Redis for it`);
}

/**
 * Runs one `redis.call` from a script: `words` are the command name and its arguments as strings.
 * Throws an Error whose message is the error reply (`ERR ...`, `WRONGTYPE ...`), with Redis 7's
 * wording where Redis has one, and a message naming the store's limits for commands it lacks. Under
 * strict keys, `audit` is shown the keys the command names first, and refuses undeclared ones.
 */
export function runScriptCommand(keyspace: MemoryKeyspace, words: string[], audit?: ScriptKeyAudit): Reply {
  const name = words[0]!.toLowerCase();
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name]! : undefined;
  if (!command) {
    throw new Error(
      `ERR Unknown Redis command called from script: the in-memory store of nestjs-distributed-lock/testing runs ` +
        `${Object.keys(COMMANDS).join(', ')} in scripts, not '${words[0]}'; use a real Redis for it`,
    );
  }
  if (command.arity >= 0 ? words.length !== command.arity : words.length < -command.arity) {
    throw new Error('ERR Wrong number of args calling Redis command from script');
  }
  const args = words.slice(1);
  if (audit && command.keys !== 'none') audit.touch(name, command.keys === 'all' ? args : args.slice(0, 1));
  return command.run(keyspace, args);
}
