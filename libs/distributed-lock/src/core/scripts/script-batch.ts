import { LATE_REPLY, NOT_AFTER, sha1, type AnyLockScript, type ScriptArgument } from './lock-script.js';
import { helpersInOrder, type LuaHelper } from './lua-helper.js';
import { CLOCK_LUA } from './next-token.lua.js';
import { nameScript } from '../util/script-names.js';

/** One call of a batch: a script, and its KEYS and ARGV as the script alone would take them. */
export interface BatchedCall {
  readonly script: AnyLockScript;
  readonly keys: readonly string[];
  readonly argv: readonly ScriptArgument[];
}

/** How many KEYS and ARGV a script takes (its argv with the guard's deadline, if guarded): the same for every call. */
interface Shape {
  readonly code: string;
  readonly keys: number;
  readonly argv: number;
}

/** An arguments object whose every field reads as a string: a script's KEYS and ARGV built from it have their real lengths. */
const PROBE = new Proxy({}, { get: () => 'probe' });

/**
 * One script that runs a batch of lock operations, one after the other, each as its own script would
 * have run alone, and replies with an array of their replies (an element is an error where that
 * operation failed or was refused as late). This is how LockNode commits the operations a process
 * issues in one turn of the event loop with one script call (group commit): one socket write, one
 * EVALSHA, one reply, however many callers took part.
 *
 * It is made of the scripts it can run (the lock path's): their helpers, each once, then each body as
 * a Lua function of where its KEYS and ARGV start in the batch's (the body's `KEYS[n]` read as
 * `KEYS[k + n]`): no table is built per operation. ARGV is, per operation, its script's code and then
 * its arguments; KEYS is every operation's keys in order. Each script takes a fixed number of keys and
 * arguments (checked per call). A guarded operation's deadline (`not-after:<ms>`, its last argument)
 * is checked against one reading of the server's clock for the whole batch.
 */
export class ScriptBatch {
  readonly name = 'dlockBatch';
  readonly lua: string;
  readonly sha: string;
  /** Each script's shape, by its SHA1 (a copy of a script with another reply parser is the same script). */
  private readonly shapes = new Map<string, Shape>();

  constructor(scripts: readonly AnyLockScript[]) {
    scripts.forEach((script, i) =>
      this.shapes.set(script.sha, {
        code: String(i + 1),
        keys: script.keys(PROBE).length,
        argv: script.argv(PROBE).length + (script.guarded ? 1 : 0),
      }),
    );
    const helpers = helpersInOrder([CLOCK_LUA, ...scripts.flatMap((script) => script.helpers)]);
    assertDistinctFunctions(helpers);
    const operations = scripts
      .map((script, i) => {
        const body = script.body.replace(/\bKEYS\[(\d+)\]/g, 'KEYS[k + $1]').replace(/\bARGV\[(\d+)\]/g, 'ARGV[a + $1]');
        return `ops['${i + 1}'] = function(k, a)${body}\nend\n`;
      })
      .join('');
    const shapes = scripts
      .map((script) => {
        const shape = this.shapes.get(script.sha)!;
        return `['${shape.code}'] = {${shape.keys}, ${shape.argv}, ${script.guarded}}`;
      })
      .join(', ');
    this.lua = `${helpers.map((helper) => helper.lua).join('')}
local ops = {}
${operations}local shapes = { ${shapes} }
local replies = {}
local count, k, a = #ARGV, 0, 0
local i = 0
while a < count do
  i = i + 1
  local code = ARGV[a + 1]
  local shape = shapes[code]
  a = a + 1
  local late = nil
  if shape[3] then
    local last = ARGV[a + shape[2]]
    if string.sub(last, 1, ${NOT_AFTER.length}) == '${NOT_AFTER}' then
      local not_after = tonumber(string.sub(last, ${NOT_AFTER.length + 1}))
      if not_after and now_ms() >= not_after then late = '${LATE_REPLY} ' .. string.format('%.0f', now_ms()) end
    end
  end
  if late then
    replies[i] = { err = late }
  else
    local ok, reply = pcall(ops[code], k, a)
    if ok then
      replies[i] = reply
    elseif type(reply) == 'table' and reply.err then
      replies[i] = { err = reply.err }
    else
      replies[i] = { err = tostring(reply) }
    end
  end
  k = k + shape[1]
  a = a + shape[2]
end
return replies
`;
    this.sha = sha1(this.lua);
    nameScript(this.sha, this.name);
  }

  /** Whether `script` can run in a batch. */
  has(script: AnyLockScript): boolean {
    return this.shapes.has(script.sha);
  }

  /** The KEYS and ARGV of one batch call running `calls` in order. */
  argsOf(calls: readonly BatchedCall[]): { keys: string[]; argv: ScriptArgument[] } {
    const keys: string[] = [];
    const argv: ScriptArgument[] = [];
    for (const call of calls) {
      const shape = this.shapes.get(call.script.sha)!;
      if (call.keys.length !== shape.keys || call.argv.length !== shape.argv) {
        throw new Error(
          `${call.script.name}: ${call.keys.length} keys and ${call.argv.length} arguments, where its batch shape has ${shape.keys} and ${shape.argv}`,
        );
      }
      argv.push(shape.code);
      for (const key of call.keys) keys.push(key);
      for (const arg of call.argv) argv.push(arg);
    }
    return { keys, argv };
  }
}

/**
 * Helpers share one scope in a batch: two of them defining a function of the same name would leave
 * every script calling the last one defined. Refused when the batch is built.
 */
function assertDistinctFunctions(helpers: readonly LuaHelper[]): void {
  const definedBy = new Map<string, string>();
  for (const helper of helpers) {
    for (const [, name] of helper.lua.matchAll(/\blocal\s+function\s+([A-Za-z_]\w*)/g)) {
      const other = definedBy.get(name!);
      if (other !== undefined)
        throw new Error(`Lua helpers "${other}" and "${helper.name}" both define ${name}(): a batch of their scripts would call only one`);
      definedBy.set(name!, helper.name);
    }
  }
}
