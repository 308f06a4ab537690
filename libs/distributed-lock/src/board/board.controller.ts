import { Controller, Get, Header, HttpCode, Post, Query, Req, Res, UseGuards, type CanActivate, type Type } from '@nestjs/common';
import { BOARD_SCRIPT, BOARD_STYLE } from './board-assets.js';
import type { InspectedLockKind } from '../core/index.js';
import { isUnlockableKind, type BoardForceUnlock } from './board-force-unlock.js';
import { boardMain, boardPage } from './board-page.html.js';
import type { BoardSnapshot } from './board-snapshot.js';
import { BoardService } from './board.service.js';
import { confirmPage, messagePage, resultPage } from './force-unlock.html.js';

/** The parts of a request the board reads, on Express and on Fastify. */
interface BoardRequest {
  readonly url?: string;
  readonly originalUrl?: string;
  readonly ip?: string;
  readonly headers?: Record<string, string | string[] | undefined>;
}

/** The part of the response the board uses (Express and Fastify both have `status`). */
interface BoardResponse {
  status(code: number): unknown;
}

/** A guard instance or class, as `@UseGuards` takes them. */
export type BoardGuard = CanActivate | Type<CanActivate>;

/** Nothing but the board's own path: no script, style, image or connection from anywhere else. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const HTML = 'text/html; charset=utf-8';

/** A query value as one string (a repeated parameter arrives as an array). */
function one(value: unknown): string | undefined {
  if (Array.isArray(value)) return one(value[0]);
  return typeof value === 'string' ? value : undefined;
}

/** The board's base path as the browser sees it (global prefix included): the request's path without `suffix`. */
function baseOf(request: BoardRequest, suffix = ''): string {
  const path = (request.originalUrl ?? request.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
  return suffix !== '' && path.endsWith(`/${suffix}`) ? path.slice(0, -suffix.length - 1) : path;
}

function pageNumber(text: string | undefined): number {
  const page = Number(text);
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/**
 * The board's routes under `path` (a class per mounted board, so that the path and the guards are
 * the application's): the page, its live part, its JSON, its script and style, and force-unlock.
 */
export function createBoardController(path: string, guards: readonly BoardGuard[]): Type<unknown> {
  @Controller(path)
  @UseGuards(...guards)
  class DistributedLockBoardController {
    constructor(private readonly board: BoardService) {}

    @Get()
    @Header('Content-Type', HTML)
    @Header('Cache-Control', 'no-store')
    @Header('Content-Security-Policy', CSP)
    @Header('X-Content-Type-Options', 'nosniff')
    @Header('Referrer-Policy', 'no-referrer')
    async page(@Query() query: Record<string, unknown>, @Req() request: BoardRequest, @Res({ passthrough: true }) response: BoardResponse): Promise<string> {
      const snapshot = await this.read(query, response);
      return boardPage(snapshot, baseOf(request), this.board.settings.refreshIntervalMs);
    }

    /** What the script swaps into `<main>` every refresh. */
    @Get('live')
    @Header('Content-Type', HTML)
    @Header('Cache-Control', 'no-store')
    @Header('X-Content-Type-Options', 'nosniff')
    async live(@Query() query: Record<string, unknown>, @Req() request: BoardRequest, @Res({ passthrough: true }) response: BoardResponse): Promise<string> {
      return boardMain(await this.read(query, response), baseOf(request, 'live'));
    }

    /** The same snapshot as JSON, for scripts and tests. */
    @Get('data')
    @Header('Cache-Control', 'no-store')
    async data(@Query() query: Record<string, unknown>, @Res({ passthrough: true }) response: BoardResponse): Promise<BoardSnapshot> {
      return this.read(query, response);
    }

    @Get('board.js')
    @Header('Content-Type', 'text/javascript; charset=utf-8')
    @Header('Cache-Control', 'no-cache')
    @Header('X-Content-Type-Options', 'nosniff')
    script(): string {
      return BOARD_SCRIPT;
    }

    @Get('board.css')
    @Header('Content-Type', 'text/css; charset=utf-8')
    @Header('Cache-Control', 'no-cache')
    @Header('X-Content-Type-Options', 'nosniff')
    style(): string {
      return BOARD_STYLE;
    }

    /** The confirmation page: who holds the lock and the token(s) a removal would remove. */
    @Get('force-unlock')
    @Header('Content-Type', HTML)
    @Header('Cache-Control', 'no-store')
    @Header('Content-Security-Policy', CSP)
    async confirm(@Query() query: Record<string, unknown>, @Req() request: BoardRequest, @Res({ passthrough: true }) response: BoardResponse): Promise<string> {
      const base = baseOf(request, 'force-unlock');
      const target = this.target(query, response, base);
      if (typeof target === 'string') return target;
      return this.orFailure(response, base, async () => confirmPage(base, await target.unlock.inspect(target.name, target.kind), this.board.key));
    }

    /** Removes the lock if it is still held with the tokens the confirmation named; parameters in the query (no body parser needed). */
    @Post('force-unlock')
    @HttpCode(200)
    @Header('Content-Type', HTML)
    @Header('Cache-Control', 'no-store')
    @Header('Content-Security-Policy', CSP)
    async unlock(@Query() query: Record<string, unknown>, @Req() request: BoardRequest, @Res({ passthrough: true }) response: BoardResponse): Promise<string> {
      const base = baseOf(request, 'force-unlock');
      const target = this.target(query, response, base);
      if (typeof target === 'string') return target;
      const site = one(request.headers?.['sec-fetch-site']);
      if (!this.board.isFormKey(one(query.key)) || (site !== undefined && site !== 'same-origin' && site !== 'none')) {
        response.status(403);
        return messagePage(
          base,
          'Force-unlock refused',
          'This request did not come from the confirmation page of this board: open the lock again and confirm there.',
        );
      }
      return this.orFailure(response, base, async () => {
        const result = await target.unlock.execute({ name: target.name, kind: target.kind, tokens: one(query.tokens) ?? '' }, request.ip);
        if (result.outcome === 'changed') response.status(409);
        return resultPage(base, target.name, result);
      });
    }

    /** A page from `render`, or, when Redis fails, a page that says so (503). */
    private async orFailure(response: BoardResponse, base: string, render: () => Promise<string>): Promise<string> {
      try {
        return await render();
      } catch (error) {
        const code = (error as { code?: string }).code;
        response.status(503);
        return messagePage(base, 'Force-unlock', `Nothing was done: Redis failed${code ? ` [${code}]` : ''}: ${(error as Error).message}`);
      }
    }

    /** The lock a force-unlock request names, or, when it cannot go ahead (off, a bad name or kind), the page that says why. */
    private target(
      query: Record<string, unknown>,
      response: BoardResponse,
      base: string,
    ): { unlock: BoardForceUnlock; name: string; kind: InspectedLockKind } | string {
      const unlock = this.board.forceUnlock;
      if (!unlock) {
        response.status(403);
        return messagePage(
          base,
          'Force-unlock is off',
          'This board is read-only: force-unlock is enabled by the forceUnlock option of DistributedLockBoardModule.',
        );
      }
      const name = one(query.name);
      const kind = one(query.kind);
      if (!name || /[{}]/.test(name) || name.length > 512 || !isUnlockableKind(kind)) {
        response.status(400);
        return messagePage(base, 'Force-unlock', 'Give a lock name and its kind (reentrant, fair or read-write; a semaphore cannot be force-unlocked).');
      }
      return { unlock, name, kind };
    }

    private async read(query: Record<string, unknown>, response: BoardResponse): Promise<BoardSnapshot> {
      const snapshot = await this.board.reader.read({ filter: one(query.filter) ?? '', page: pageNumber(one(query.page)) });
      if (snapshot.error !== undefined && snapshot.pattern !== undefined) response.status(503);
      return snapshot;
    }
  }
  return DistributedLockBoardController;
}
