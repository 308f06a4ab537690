/** NOSCRIPT: the server does not have the script cached (a restart, a failover, a new node): send it once as EVAL. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Whether `error` is an instance of a class named `name`, or of a subclass: node-redis' error classes
 * are told apart by their class (their `name` is plain "Error"), and the library does not import them.
 */
export function isErrorClass(error: unknown, name: string): boolean {
  for (let proto: unknown = error; proto; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: unknown } }).constructor?.name === name) return true;
  }
  return false;
}
