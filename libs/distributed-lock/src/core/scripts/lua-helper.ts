/**
 * Lua shared by several scripts: local functions defined before a script's body. `requires`: the
 * helpers its functions call, defined before it. Each helper is written once (see defineLockScript).
 */
export interface LuaHelper {
  readonly name: string;
  readonly lua: string;
  readonly requires: readonly LuaHelper[];
}

export function luaHelper(name: string, lua: string, requires: readonly LuaHelper[] = []): LuaHelper {
  return { name, lua, requires };
}

/** The helpers and every helper they require, each once, each after what it requires. */
export function helpersInOrder(helpers: readonly LuaHelper[]): LuaHelper[] {
  const ordered: LuaHelper[] = [];
  const visit = (helper: LuaHelper): void => {
    if (ordered.includes(helper)) return;
    helper.requires.forEach(visit);
    ordered.push(helper);
  };
  helpers.forEach(visit);
  return ordered;
}
