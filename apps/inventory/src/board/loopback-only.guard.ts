import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';

/** The parts of a request the guard reads (Express and Fastify both have them). */
interface RemoteRequest {
  readonly ip?: string;
  readonly socket?: { readonly remoteAddress?: string };
}

/**
 * The lock board's guard in the demo app: the page shows owner ids and lock names, so only requests
 * from this machine (127.0.0.0/8, ::1) may see it. A real app uses its own authentication here (an
 * admin role, a session); see docs/operations/board.md.
 */
@Injectable()
export class LoopbackOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<RemoteRequest>();
    const address = request.socket?.remoteAddress ?? request.ip ?? '';
    return /^(::ffff:)?127\./.test(address) || address === '::1';
  }
}
