import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockArgumentError, LockKeyTemplateError } from '../core/index.js';

/** Where a template placeholder may read from: parts of the HTTP request, or the RPC/WebSocket payload. */
export const TEMPLATE_ROOTS = ['params', 'query', 'body', 'user', 'headers', 'data'] as const;
type TemplateRoot = (typeof TEMPLATE_ROOTS)[number];

type Part = { literal: string } | { root: TemplateRoot; path: string[]; source: string };

const SEGMENT = /^[A-Za-z0-9_$-]+$/;

/** A parsed key template such as `'product:{params.id}'`, resolved per call. */
export class LockKeyTemplate {
  private readonly parts: Part[];

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
  }

  get isStatic(): boolean {
    return this.parts.every((part) => 'literal' in part);
  }

  resolve(context: ExecutionContext): string {
    if (this.isStatic) return this.template;
    const sources = templateSources(context);
    return this.parts
      .map((part) => {
        if ('literal' in part) return part.literal;
        let value: unknown = sources[part.root];
        const trail = [describeRoot(context, part.root)];
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
      `template "${template}" has placeholder {${body}}; use {<root>.<field>} with root one of ${TEMPLATE_ROOTS.join(', ')}, e.g. 'product:{params.id}'.`,
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
