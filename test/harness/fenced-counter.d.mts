import type { Redis } from 'ioredis';

export type FencedReply = { accepted: true; value: number } | { accepted: false; highestSeen: number };

export declare class FencedCounter {
  constructor(redis: Redis, key?: string);
  read(token: number): Promise<FencedReply>;
  write(token: number, value: number): Promise<FencedReply>;
  highestSeen(): Promise<number>;
  history(): Promise<{ value: number; tokens: number[] }>;
}
