import { InvalidLockConfigError } from '../core/index.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';

/**
 * Nest's own metadata keys (PATH_METADATA, METHOD_METADATA and MODULE_PATH in @nestjs/common's
 * constants, unchanged since Nest 4), written out here rather than deep-imported from the framework.
 * RouterModule suffixes MODULE_PATH with the application's id.
 */
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const MODULE_PATH_PREFIX = '__module_path__';

/** What the check reads of a route handler's surroundings; the explorer fills it from Nest. */
export interface RouteSurroundings {
  /** The controller class. */
  readonly controller: object;
  /** The module the controller belongs to (RouterModule may give it a path with parameters). */
  readonly module: object | undefined;
  /** The application's global prefix ('' when none). */
  readonly globalPrefix: string;
}

/**
 * At start-up, a request template that reads a route parameter the route does not have
 * (`{params.sku}` on `products/:id`) fails the application's start, naming the handler, instead of
 * answering 400 to every request. The parameters counted are those of the global prefix, the
 * module's RouterModule path, the controller's path(s) and the method's path(s); handlers that are
 * not HTTP routes (message patterns, gateways) are not checked.
 */
export function assertRouteHasParams(handler: object, metadata: DistributedLockMetadata, route: RouteSurroundings): void {
  if (metadata.key.from !== 'templates') return;
  if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) return;
  for (const template of metadata.key.templates) {
    const read = template.source === 'request' ? template.routeParams : [];
    if (read.length === 0) continue;
    const moduleKeys = route.module ? (Reflect.getMetadataKeys(route.module) as unknown[]).filter((key) => String(key).startsWith(MODULE_PATH_PREFIX)) : [];
    const paths = [
      route.globalPrefix,
      ...moduleKeys.map((key) => Reflect.getMetadata(key, route.module!) as unknown),
      ...asList(Reflect.getMetadata(PATH_METADATA, route.controller)),
      ...asList(Reflect.getMetadata(PATH_METADATA, handler)),
    ];
    const params = new Set(paths.flatMap((path) => (typeof path === 'string' ? paramsOf(path) : [])));
    const missing = read.filter((name) => !params.has(name));
    if (missing.length === 0) continue;
    throw new InvalidLockConfigError(
      `${metadata.decorator} key of ${metadata.where}`,
      `template "${template.template}" reads ${missing.map((name) => `{params.${name}}`).join(', ')}, but the route has ${params.size === 0 ? 'no parameters' : `only ${[...params].map((name) => `:${name}`).join(', ')}`}; every request would answer 400. Name a parameter of the route.`,
    );
  }
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

/** `products/:id/items/:item?`, `files/*path`, `{/:lang}` -> ['id', 'item', 'path', 'lang']. */
function paramsOf(path: string): string[] {
  return [...path.matchAll(/[:*]([A-Za-z_$][\w$]*)/g)].map((match) => match[1]!);
}
