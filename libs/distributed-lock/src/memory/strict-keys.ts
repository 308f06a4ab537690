import { ScriptKeysError } from '../core/errors/script-keys.error.js';
import { keySlot } from '../core/util/key-slot.js';
import { scriptName } from '../core/util/script-names.js';

/**
 * How strictly the in-memory store checks the keys of a script (InMemoryLockStore's `strictKeys`):
 * - `'declared'`: every key a `redis.call` / `redis.pcall` names must be one of the script's KEYS, as
 *   Dragonfly (by default) and ElastiCache require;
 * - `'one-slot'`: that, and the script must declare at least one key, all of one cluster slot, as
 *   Redis Cluster, ElastiCache Serverless and sharding proxies (Redis Cloud without the OSS Cluster
 *   API, Azure Managed Redis's Enterprise policy) require.
 */
export type StrictKeys = 'declared' | 'one-slot';

const SHOWN_KEYS = 6;

/**
 * The keys check of one script run under strict keys. The store makes one per run: `beforeRun` refuses
 * what a sharded server refuses before running anything, `touch` is called by the command bridge for
 * every command the script runs (it throws, so the script stops there, as on Dragonfly), and
 * `afterRun` throws the first violation even if the script caught it with `pcall`: a script that
 * touched an undeclared key fails, whatever it did next.
 */
export class ScriptKeyAudit {
  private readonly declared: ReadonlySet<string>;
  private readonly script: string;
  private violation: ScriptKeysError | undefined;

  constructor(
    private readonly mode: StrictKeys,
    sha: string,
    private readonly keys: readonly string[],
    /** Where every violation is also recorded (the keyspace's `scriptKeyViolations`), so a test sees one whose error the library swallowed. */
    private readonly record: ScriptKeysError[],
  ) {
    this.declared = new Set(keys);
    const name = scriptName(sha);
    this.script = name === undefined ? `script ${sha}` : `script ${name} (${sha.slice(0, 12)})`;
  }

  /** Throws ScriptKeysError when the declared keys alone are refused ('one-slot': none, or two slots). */
  beforeRun(): void {
    if (this.mode !== 'one-slot') return;
    if (this.keys.length === 0) {
      this.refuse(
        'no-keys',
        this.script,
        '',
        `Strict keys: ${this.script} declares no key, so a sharded server cannot tell where to run it ` +
          '(ElastiCache Serverless refuses it: "Lua scripts without any input keys are not supported"). Declare the keys it uses.',
      );
    }
    const first = keySlot(this.keys[0]!);
    const other = this.keys.find((key) => keySlot(key) !== first);
    if (other === undefined) return;
    this.refuse(
      'cross-slot',
      this.script,
      other,
      `Strict keys: ${this.script} declares keys of two cluster slots: "${this.keys[0]}" (slot ${first}) and "${other}" (slot ${keySlot(other)}). ` +
        'Redis Cluster, ElastiCache Serverless and sharding proxies refuse it (CROSSSLOT): give all keys of one script the same {hash tag}.',
    );
  }

  /** A command of the script names `keys`: throws (and remembers) an error for the first one not declared. */
  touch(command: string, keys: readonly string[]): void {
    const key = keys.find((candidate) => !this.declared.has(candidate));
    if (key === undefined) return;
    const declared =
      this.keys.length === 0
        ? 'none'
        : this.keys
            .slice(0, SHOWN_KEYS)
            .map((k) => `"${k}"`)
            .join(', ') + (this.keys.length > SHOWN_KEYS ? ', ...' : '');
    const error = new ScriptKeysError(
      'undeclared-key',
      this.script,
      key,
      `Strict keys: ${this.script} ran ${command.toUpperCase()} on "${key}", a key it did not declare in KEYS (declared: ${declared}). ` +
        'Dragonfly (by default) and ElastiCache refuse such a script: pass every key a script touches in KEYS.',
    );
    if (!this.violation) {
      this.violation = error;
      this.record.push(error);
    }
    throw new Error(`ERR ${error.message}`);
  }

  private refuse(...args: ConstructorParameters<typeof ScriptKeysError>): never {
    const error = new ScriptKeysError(...args);
    this.record.push(error);
    throw error;
  }

  /** Throws the first violation of the run, if any (called whether the script failed or not). */
  afterRun(): void {
    if (this.violation) throw this.violation;
  }
}
