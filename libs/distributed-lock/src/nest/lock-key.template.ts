import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockArgumentError, LockKeyTemplateError } from '../core/index.js';

/**
 * Where a template placeholder may read from: parts of the HTTP request, the RPC/WebSocket payload,
 * or (`args`) the decorated method's own arguments. One template reads either the request or the
 * arguments, never both.
 */
export const TEMPLATE_ROOTS = ['params', 'query', 'body', 'user', 'headers', 'data', 'args'] as const;
type TemplateRoot = (typeof TEMPLATE_ROOTS)[number];

/** What a template reads: nothing (a fixed name), the request, or the method's arguments. */
export type TemplateSource = 'static' | 'request' | 'args';

type Part = { literal: string } | { root: TemplateRoot; path: string[]; source: string };

const SEGMENT = /^[A-Za-z0-9_$-]+$/;

/** A parsed key template such as `'product:{params.id}'`, resolved per call. */
export class LockKeyTemplate {
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
      throw new InvalidLockArgumentError('lock key', `template "${template}" has an unbalanced '{' or '}'.`);
    }
    if (rest) this.parts.push({ literal: rest });
    const roots = new Set(this.parts.flatMap((part) => ('root' in part ? [part.root] : [])));
    if (roots.has('args') && roots.size > 1) {
      throw new InvalidLockArgumentError(
        'lock key',
        `template "${template}" mixes {args...} with request fields; a key reads either the method's arguments or the request.`,
      );
    }
    this.source = roots.size === 0 ? 'static' : roots.has('args') ? 'args' : 'request';
  }

  /** The route parameters the template reads (`{params.sku}` -> 'sku'), for the start-up check. */
  get routeParams(): string[] {
    return this.parts.flatMap((part) => ('root' in part && part.root === 'params' ? [part.path[0]!] : []));
  }

  get isStatic(): boolean {
    return this.source === 'static';
  }

  /** Resolves a static or request template against the execution context (the interceptor's side). */
  resolve(context: ExecutionContext): string {
    if (this.isStatic) return this.template;
    return this.fill(templateSources(context), (root) => describeRoot(context, root));
  }

  /** Resolves a static or `{args.N...}` template against a method's arguments (the method wrapper's side). */
  resolveArgs(args: readonly unknown[]): string {
    if (this.isStatic) return this.template;
    return this.fill({ args }, () => 'args');
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
        if (value === undefined || value === null || value === '') throw new LockKeyTemplateError(this.template, where, 'is missing or empty');
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
          const text = String(value);
          if (/[{}]/.test(text)) throw new LockKeyTemplateError(this.template, where, "contains '{' or '}', which lock names cannot");
          return text;
        }
        throw new LockKeyTemplateError(this.template, where, `is ${Array.isArray(value) ? 'an array' : 'an object'}, not a string or number`);
      })
      .join('');
  }
}

function parsePlaceholder(template: string, body: string): Part {
  const path = body.trim().split('.');
  const root = path.shift() as TemplateRoot;
  if (!(TEMPLATE_ROOTS as readonly string[]).includes(root) || path.length === 0 || !path.every((s) => SEGMENT.test(s))) {
    throw new InvalidLockArgumentError(
      'lock key',
      `template "${template}" has placeholder {${body}}; use {<root>.<field>} with root one of ${TEMPLATE_ROOTS.join(', ')}, e.g. 'product:{params.id}' or 'product:{args.0}'.`,
    );
  }
  if (root === 'args' && !/^\d+$/.test(path[0]!)) {
    throw new InvalidLockArgumentError(
      'lock key',
      `template "${template}" has placeholder {${body}}; {args.N} needs an argument index, e.g. {args.0} or {args.1.id}.`,
    );
  }
  return { root, path, source: body };
}

function templateSources(context: ExecutionContext): Partial<Record<TemplateRoot, unknown>> {
  const type = context.getType<string>();
  if (type === 'http') {
    const request = context.switchToHttp().getRequest<Record<string, unknown>>();
    return { params: request.params, query: request.query, body: request.body, user: request.user, headers: request.headers };
  }
  if (type === 'rpc') return { data: context.switchToRpc().getData() };
  if (type === 'ws') return { data: context.switchToWs().getData() };
  return {};
}

function describeRoot(context: ExecutionContext, root: TemplateRoot): string {
  return root === 'data' ? `${context.getType()} data` : `request.${root}`;
}
