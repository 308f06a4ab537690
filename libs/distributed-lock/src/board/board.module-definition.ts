import { ConfigurableModuleBuilder, type Provider } from '@nestjs/common';
import { InvalidLockConfigError } from '../core/index.js';
import { createBoardController, type BoardGuard } from './board.controller.js';
import type { DistributedLockBoardOptions } from './board.options.js';

/** Where the board is mounted and what guards it: needed while the module is built, so given beside the options (forRoot and forRootAsync alike). */
export interface BoardMountOptions {
  /** The page's path (default '/locks'; the app's global prefix, if any, comes before it). */
  path?: string;
  /** Guards of the board's own routes (besides the app's global guards), e.g. `[AdminGuard]`. */
  guards?: BoardGuard[];
}

export const BOARD_MOUNT = Symbol('DISTRIBUTED_LOCK_BOARD_MOUNT');

function checkedPath(path: unknown): string {
  if (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//')) {
    throw new InvalidLockConfigError('board.path', `expected a path such as '/locks' (letters, digits, - . _ ~ and /), got ${JSON.stringify(path)}.`);
  }
  return path.startsWith('/') ? path : `/${path}`;
}

function checkedGuards(guards: unknown): BoardGuard[] {
  if (!Array.isArray(guards) || guards.some((guard) => guard === null || (typeof guard !== 'function' && typeof guard !== 'object'))) {
    throw new InvalidLockConfigError('board.guards', 'expected an array of guard classes or instances, e.g. [AdminGuard].');
  }
  return guards as BoardGuard[];
}

export const {
  ConfigurableModuleClass: ConfigurableBoardModule,
  MODULE_OPTIONS_TOKEN: DISTRIBUTED_LOCK_BOARD_OPTIONS,
  OPTIONS_TYPE: BOARD_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: BOARD_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<DistributedLockBoardOptions>({ moduleName: 'DistributedLockBoard' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLockBoardOptions')
  .setExtras<Required<BoardMountOptions>>({ path: '/locks', guards: [] }, (definition, extras) => {
    const path = checkedPath(extras.path);
    const guards = checkedGuards(extras.guards);
    const mount: Provider = { provide: BOARD_MOUNT, useValue: { path, guards: guards.length } };
    return { ...definition, controllers: [createBoardController(path, guards)], providers: [...(definition.providers ?? []), mount] };
  })
  .build();
