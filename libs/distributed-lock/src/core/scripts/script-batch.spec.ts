import { LOCK_SCRIPT_BATCH } from '../lock-scripts.js';
import { defineLockScript } from './lock-script.js';
import { luaHelper } from './lua-helper.js';
import { ScriptBatch } from './script-batch.js';

/**
 * The batch script's structure (how it runs the same scripts as alone is checked on a real
 * redis-server by the differential test's batched side, test/conformance/differential.e2e-spec.ts).
 */
describe('ScriptBatch', () => {
  const one = (name: string, fn: string, keys = 1) =>
    defineLockScript<{ key: string }, unknown>({
      name,
      guarded: false,
      keys: (a) => Array.from({ length: keys }, () => a.key),
      argv: () => ['x'],
      helpers: [luaHelper(`${name}-helper`, `\nlocal function ${fn}(key)\n  return key\nend\n`)],
      lua: `return ${fn}(KEYS[1]) .. ARGV[1]`,
    });

  it("refuses two scripts whose helpers define a function of the same name (in a batch's one scope, the last would shadow the other)", () => {
    expect(() => new ScriptBatch([one('dlockA', 'drop_dead'), one('dlockB', 'drop_dead')])).toThrow(
      'Lua helpers "dlockA-helper" and "dlockB-helper" both define drop_dead()',
    );
    expect(() => new ScriptBatch([one('dlockA', 'drop_dead'), one('dlockB', 'drop_expired')])).not.toThrow();
  });

  it("the library's own batch has one definition of every helper function", () => {
    const names = [...LOCK_SCRIPT_BATCH.lua.matchAll(/\blocal\s+function\s+(\w+)/g)].map(([, name]) => name);
    expect(names.length).toBeGreaterThan(10);
    expect(new Set(names).size).toBe(names.length);
  });

  it('lays out each call as its script code, then its arguments; its keys in order; and reads bodies at their offsets', () => {
    const a = one('dlockA', 'fa');
    const b = one('dlockB', 'fb', 2);
    const batch = new ScriptBatch([a, b]);
    const { keys, argv } = batch.argsOf([
      { script: b, keys: ['k1', 'k2'], argv: ['u'] },
      { script: a, keys: ['k3'], argv: ['v'] },
    ]);
    expect(keys).toEqual(['k1', 'k2', 'k3']);
    expect(argv).toEqual(['2', 'u', '1', 'v']);
    expect(batch.lua).toContain('return fa(KEYS[k + 1]) .. ARGV[a + 1]');
  });

  it("refuses a call whose keys or arguments do not have its script's shape (the offsets of the calls after it would be wrong)", () => {
    const a = one('dlockA', 'fa');
    const batch = new ScriptBatch([a]);
    expect(() => batch.argsOf([{ script: a, keys: ['k1', 'k2'], argv: ['v'] }])).toThrow('dlockA: 2 keys and 1 arguments, where its batch shape has 1 and 1');
  });
});
