/**
 * Readable names of Lua scripts by SHA1, for error messages: Redis knows a script only by its SHA1, so
 * the in-memory store's strict-keys errors (memory/strict-keys.ts) look the name up here. Every script
 * the library defines is named when its module loads (defineLockScript, ScriptBatch); a test's own
 * script can be named too. One small table per process, written once per script.
 */
const names = new Map<string, string>();

export function nameScript(sha: string, name: string): void {
  names.set(sha.toLowerCase(), name);
}

/** The script's name, or undefined for a script nobody named. */
export function scriptName(sha: string): string | undefined {
  return names.get(sha.toLowerCase());
}
