import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockArgumentError, LockNameTemplateError } from '../core/index.js';
import { assertLockName } from '../core/internal.js';

/**
 * Where a template placeholder may read from: parts of the request (HTTP: params, query, body, user,
 * headers; a GraphQL field: data = its arguments, user and headers of the request in the GraphQL
 * context; RPC and WebSocket: data = the payload), or (`args`) the decorated method's own arguments.
 * One template reads either the request or the arguments, never both.
 */
export const TEMPLATE_ROOTS = ['params', 'query', 'body', 'user', 'headers', 'data', 'args'] as const;
export type TemplateRoot = (typeof TEMPLATE_ROOTS)[number];

/** What a template reads: nothing (a fixed name), the request, or the method's arguments. */
export type TemplateSource = 'static' | 'request' | 'args';

type Part = { literal: string } | { root: TemplateRoot; path: string[] };

const SEGMENT = /^[A-Za-z0-9_$-]+$/;

/** A parsed name template such as `'product:{params.id}'`, resolved per call. */
export class LockNameTemplate {
  private readonly parts: Part[];
  /** What the template reads. */
  readonly source: TemplateSource;

  /** Parses at decoration time: a malformed template fails when the class is defined, not per request. */
  constructor(readonly template: string) {
    this.parts = [];
    const pattern = /\{([^{}]*)\}/g;
    let last = 0;
    for (let match = pattern.exec(template); match; match = pattern.exec(template)) {
      if (match.index > last) this.parts.push({ literal: template.slice(last, match.index) });
      this.parts.push(parsePlaceholder(template, match[1]!));
      last = match.index + match[0].length;
    }
    const rest = template.slice(last);
    if (rest.includes('{') || rest.includes('}') || this.parts.some((p) => 'literal' in p && /[{}]/.test(p.literal))) {
      throw new InvalidLockArgumentError('lock name', `template "${template}" has an unbalanced '{' or '}'.`);
    }
    if (rest) this.parts.push({ literal: rest });
    const roots = this.roots;
    if (roots.includes('args') && roots.length > 1) {
      throw new InvalidLockArgumentError(
        'lock name',
        `template "${template}" mixes {args...} with request fields; a name reads either the method's arguments or the request.`,
      );
    }
    this.source = roots.length === 0 ? 'static' : roots.includes('args') ? 'args' : 'request';
  }

  /** The roots the template reads (`'product:{params.id}:{user.id}'` -> params, user), for the start-up check. */
  get roots(): TemplateRoot[] {
    return [...new Set(this.parts.flatMap((part) => ('root' in part ? [part.root] : [])))];
  }

  /** The route parameters the template reads (`{params.sku}` -> 'sku'), for the start-up check. */
  get routeParams(): string[] {
    return this.parts.flatMap((part) => ('root' in part && part.root === 'params' ? [part.path[0]!] : []));
  }

  /** The name for one call: the template itself, or filled from the arguments or from the request. */
  resolve(args: readonly unknown[], context: ExecutionContext | undefined): string {
    if (this.source === 'static') return this.template;
    if (this.source === 'args') return this.fill({ args }, () => 'args');
    return this.fill(context ? requestRoots(context) : {}, (root) => (root === 'data' ? `${context?.getType() ?? 'request'} data` : `request.${root}`));
  }

  private fill(sources: Partial<Record<TemplateRoot, unknown>>, rootName: (root: TemplateRoot) => string): string {
    return this.parts
      .map((part) => {
        if ('literal' in part) return part.literal;
        let value: unknown = sources[part.root];
        const trail = [rootName(part.root)];
        for (const segment of part.path) {
          trail.push(segment);
          if (value === null || typeof value !== 'object') {
            value = undefined;
            break;
          }
          value = (value as Record<string, unknown>)[part.root === 'headers' ? segment.toLowerCase() : segment];
        }
        const where = trail.join('.');
        if (value === undefined || value === null || value === '') throw new LockNameTemplateError(this.template, where, 'is missing or empty');
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
          const text = String(value);
          if (/[{}]/.test(text)) throw new LockNameTemplateError(this.template, where, "contains '{' or '}', which lock names cannot");
          return text;
        }
        throw new LockNameTemplateError(this.template, where, `is ${Array.isArray(value) ? 'an array' : 'an object'}, not a string or number`);
      })
      .join('');
  }
}

/**
 * A decorated method's name option, compiled once when the class is defined: templates (one, or several for a
 * multi-lock), a function of the request's ExecutionContext, or a function of the method's arguments
 * (`nameFromArgs`, which may return several names).
 */
export type LockNameSource =
  | { readonly from: 'templates'; readonly templates: readonly LockNameTemplate[] }
  | { readonly from: 'context'; readonly build: (context: ExecutionContext) => unknown }
  | { readonly from: 'args'; readonly build: (...args: unknown[]) => unknown };

/** What name resolution reads of a decorated method's metadata. */
export interface NamedMethod {
  readonly name: LockNameSource;
  /** `@DistributedLock`, `@ScheduledLock` or `@DistributedSemaphore`, for messages. */
  readonly decorator: string;
  /** `Class.method`, for messages. */
  readonly where: string;
}

/** Whether resolving `source` needs the request (a request template, or a function of the ExecutionContext). */
export function readsRequest(source: LockNameSource): boolean {
  return source.from === 'context' || (source.from === 'templates' && source.templates.some((template) => template.source === 'request'));
}

/**
 * The lock names of one decorated call, from its name option, the method's arguments (after pipes, for a
 * request handler) and, for a request Nest handles, its ExecutionContext (undefined for a call made by
 * code). Every path takes its names from here, and each name is checked here, once. `scope` is put in
 * front of every name (DistributedLockInterceptor.nameScope). Throws LockNameTemplateError for a
 * template field the call does not carry, InvalidLockArgumentError for a name that cannot be a lock
 * name or a name option that reads a request the call does not come from.
 */
export function resolveLockNames(method: NamedMethod, args: readonly unknown[], context: ExecutionContext | undefined, scope = ''): string[] {
  const names = unscopedNames(method, args, context);
  if (names.length === 0) throw new InvalidLockArgumentError(`${method.decorator} name of ${method.where}`, 'it resolved to no name.');
  return names.map((name, i) => {
    const scoped = scope !== '' && typeof name === 'string' ? scope + name : name;
    assertLockName(scoped, `${method.decorator} name${names.length > 1 ? ` ${i}` : ''} of ${method.where}`);
    return scoped;
  });
}

function unscopedNames(method: NamedMethod, args: readonly unknown[], context: ExecutionContext | undefined): unknown[] {
  const { name: key } = method;
  if (key.from === 'args') {
    const built = key.build(...args);
    return Array.isArray(built) ? built : [built];
  }
  if (!context && readsRequest(key)) {
    const what =
      key.from === 'context'
        ? 'name function takes the ExecutionContext'
        : `template "${key.templates.find((t) => t.source === 'request')!.template}" reads the request`;
    throw new InvalidLockArgumentError(
      `${method.decorator} name`,
      `the ${what}, but ${method.where} was called outside a request handled by Nest. Use nameFromArgs or an {args.N} template for methods that are not request handlers.`,
    );
  }
  if (key.from === 'context') return [key.build(context!)];
  return key.templates.map((template) => template.resolve(args, context));
}

function parsePlaceholder(template: string, body: string): Part {
  const path = body.trim().split('.');
  const root = path.shift() as TemplateRoot;
  if (!(TEMPLATE_ROOTS as readonly string[]).includes(root) || path.length === 0 || !path.every((s) => SEGMENT.test(s))) {
    throw new InvalidLockArgumentError(
      'lock name',
      `template "${template}" has placeholder {${body}}; use {<root>.<field>} with root one of ${TEMPLATE_ROOTS.join(', ')}, e.g. 'product:{params.id}' or 'product:{args.0}'.`,
    );
  }
  if (root === 'args' && !/^\d+$/.test(path[0]!)) {
    throw new InvalidLockArgumentError(
      'lock name',
      `template "${template}" has placeholder {${body}}; {args.N} needs an argument index, e.g. {args.0} or {args.1.id}.`,
    );
  }
  return { root, path };
}

/** The request roots each kind of request offers to templates. */
function requestRoots(context: ExecutionContext): Partial<Record<TemplateRoot, unknown>> {
  const type = context.getType<string>();
  if (type === 'http') {
    const request = context.switchToHttp().getRequest<Record<string, unknown>>();
    return { params: request.params, query: request.query, body: request.body, user: request.user, headers: request.headers };
  }
  if (type === 'rpc') return { data: context.switchToRpc().getData() };
  if (type === 'ws') return { data: context.switchToWs().getData() };
  if (type === 'graphql') {
    // A resolver's arguments: (parent, args, context, info); Apollo's driver puts the request in the context as `req`.
    const request = (context.getArgByIndex(2) as { req?: Record<string, unknown> } | undefined)?.req;
    return { data: context.getArgByIndex(1), user: request?.user, headers: request?.headers };
  }
  return {};
}
