import { InvalidLockConfigError } from '../core/index.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';
import type { TemplateRoot } from './lock-name.resolver.js';

/**
 * Metadata keys that Nest's packages write on a handler, written out here rather than imported: the
 * framework's (PATH_METADATA, METHOD_METADATA, MODULE_PATH in @nestjs/common's constants, unchanged
 * since Nest 4; RouterModule suffixes MODULE_PATH with the application's id), and those of optional
 * packages this library does not depend on (@nestjs/graphql, @nestjs/microservices,
 * @nestjs/websockets, @nestjs/schedule).
 */
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const MODULE_PATH_PREFIX = '__module_path__';

/** The kinds of handler whose requests are known, and the template roots their requests fill. */
const HANDLER_KINDS: readonly { readonly kind: string; readonly marks: readonly string[]; readonly roots: readonly TemplateRoot[] }[] = [
  { kind: 'an HTTP route', marks: [METHOD_METADATA], roots: ['params', 'query', 'body', 'user', 'headers'] },
  { kind: 'a GraphQL resolver', marks: ['graphql:resolver_type', 'graphql:resolve_property'], roots: ['data', 'user', 'headers'] },
  { kind: 'a message handler', marks: ['microservices:pattern'], roots: ['data'] },
  { kind: 'a WebSocket message handler', marks: ['websockets:message_mapping'], roots: ['data'] },
  { kind: 'a scheduled job', marks: ['SCHEDULER_TYPE'], roots: [] },
];

/** What the check reads of a handler's surroundings; the explorer fills it from Nest. */
export interface HandlerSurroundings {
  /** The class of the controller or provider. */
  readonly controller: object;
  /** The module the class belongs to (RouterModule may give it a path with parameters). */
  readonly module: object | undefined;
  /** The application's global prefix ('' when none). */
  readonly globalPrefix: string;
}

/**
 * At start-up, a name that reads what its handler's requests never carry fails the application's
 * start, naming the handler, instead of failing every request:
 * - an HTTP route: a root other than params, query, body, user, headers, or a `{params.x}` the route
 *   does not have (`{params.sku}` on `products/:id`; the global prefix's, the module's RouterModule
 *   path's, the controller's and the method's parameters count);
 * - a GraphQL resolver: a root other than data (the field's arguments), user and headers;
 * - a message pattern (@MessagePattern, @EventPattern) or a gateway's message: a root other than data;
 * - a scheduled job (@Cron, @Interval, @Timeout): a request template or a function of the
 *   ExecutionContext, which a scheduled run does not have.
 * Other methods (a service's, which code calls) are not checked: a name that reads the request fails
 * there at call time.
 */
export function assertKeyFitsHandler(handler: object, metadata: DistributedLockMetadata, surroundings: HandlerSurroundings): void {
  const handlerKind = HANDLER_KINDS.find(({ marks }) => marks.some((mark) => Reflect.hasMetadata(mark, handler)));
  const { name: key } = metadata;
  if (!handlerKind) return;
  const fail = (problem: string): never => {
    throw new InvalidLockConfigError(`${metadata.decorator} name of ${metadata.where}`, `${problem}; every call would fail. ${fix(handlerKind.roots)}`);
  };
  if (key.from === 'context' && handlerKind.roots.length === 0) fail(`a name function reads the ExecutionContext, but ${handlerKind.kind} has no request`);
  if (key.from !== 'templates') return;
  for (const template of key.templates) {
    if (template.source !== 'request') continue;
    const unknown = template.roots.filter((root) => !handlerKind.roots.includes(root));
    if (handlerKind.roots.length === 0) fail(`template "${template.template}" reads a request, but ${handlerKind.kind} has no request`);
    if (unknown.length > 0) {
      fail(`template "${template.template}" reads ${unknown.map((root) => `{${root}...}`).join(', ')}, which ${handlerKind.kind}'s requests do not carry`);
    }
    const params = template.routeParams;
    if (handlerKind.marks[0] !== METHOD_METADATA || params.length === 0) continue;
    const routeParams = routeParamsOf(handler, surroundings);
    const missing = params.filter((name) => !routeParams.has(name));
    if (missing.length > 0) {
      const has = routeParams.size === 0 ? 'no parameters' : `only ${[...routeParams].map((name) => `:${name}`).join(', ')}`;
      throw new InvalidLockConfigError(
        `${metadata.decorator} name of ${metadata.where}`,
        `template "${template.template}" reads ${missing.map((name) => `{params.${name}}`).join(', ')}, but the route has ${has}; every request would answer 400. Name a parameter of the route.`,
      );
    }
  }
}

function fix(roots: readonly TemplateRoot[]): string {
  return roots.length === 0
    ? 'Use a fixed name, nameFromArgs or an {args.N} template.'
    : `Read ${roots.map((root) => `{${root}...}`).join(', ')}, or the arguments ({args.N}, nameFromArgs).`;
}

/** The parameters of a route: its global prefix's, its module's RouterModule path's, its controller's and its method's. */
function routeParamsOf(handler: object, route: HandlerSurroundings): Set<string> {
  const moduleKeys = route.module ? (Reflect.getMetadataKeys(route.module) as unknown[]).filter((key) => String(key).startsWith(MODULE_PATH_PREFIX)) : [];
  const paths = [
    route.globalPrefix,
    ...moduleKeys.map((key) => Reflect.getMetadata(key, route.module!) as unknown),
    ...asList(Reflect.getMetadata(PATH_METADATA, route.controller)),
    ...asList(Reflect.getMetadata(PATH_METADATA, handler)),
  ];
  return new Set(paths.flatMap((path) => (typeof path === 'string' ? paramsOf(path) : [])));
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

/** `products/:id/items/:item?`, `files/*path`, `{/:lang}` -> ['id', 'item', 'path', 'lang']. */
function paramsOf(path: string): string[] {
  return [...path.matchAll(/[:*]([A-Za-z_$][\w$]*)/g)].map((match) => match[1]!);
}
