// What the recipes use of @nestjs/bullmq 11 (see README.md beside this folder).
import type { Job } from 'bullmq';
export declare function Processor(queueName: string): ClassDecorator;
export declare abstract class WorkerHost {
  abstract process(job: Job, token?: string): Promise<unknown>;
}
