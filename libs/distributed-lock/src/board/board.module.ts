import { Module, type DynamicModule } from '@nestjs/common';
import { LockService } from '../nest/index.js';
import {
  BOARD_ASYNC_OPTIONS_TYPE,
  BOARD_MOUNT,
  BOARD_OPTIONS_TYPE,
  ConfigurableBoardModule,
  DISTRIBUTED_LOCK_BOARD_OPTIONS,
} from './board.module-definition.js';
import { DistributedLockBoardEvents } from './board.events.js';
import { resolveBoardSettings, type DistributedLockBoardOptions } from './board.options.js';
import { BoardService, type BoardMount } from './board.service.js';

/**
 * A live page of the locks, mounted in your Nest app (Express or Fastify) only when you import this:
 *
 * ```ts
 * DistributedLockBoardModule.forRoot({ path: '/locks', guards: [AdminGuard] })
 * DistributedLockBoardModule.forRootAsync({ path: '/locks', inject: [ConfigService], useFactory: (c) => ({ forceUnlock: c.get('LOCK_BOARD_FORCE_UNLOCK') === 'true' }) })
 * ```
 * It shows the locks in use (holders, tokens, leases, waiters in order), leaders, the registered app
 * instances and this process's wait and hold figures, read through LockService (DistributedLockModule,
 * global by default). Read-only unless `forceUnlock` is set. Its routes go through the app's global
 * guards and the `guards` given here.
 */
@Module({
  providers: [
    DistributedLockBoardEvents,
    {
      provide: BoardService,
      useFactory: (locks: LockService, options: DistributedLockBoardOptions, events: DistributedLockBoardEvents, mount: BoardMount) =>
        new BoardService(locks, resolveBoardSettings(options), events, mount),
      inject: [LockService, DISTRIBUTED_LOCK_BOARD_OPTIONS, DistributedLockBoardEvents, BOARD_MOUNT],
    },
  ],
  exports: [DistributedLockBoardEvents],
})
export class DistributedLockBoardModule extends ConfigurableBoardModule {
  static forRoot(options: typeof BOARD_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }

  static forRootAsync(options: typeof BOARD_ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }
}
